"""When is a revision "the same text" as the draft before it?

Two drafts are the same when, after collapsing runs of whitespace, their
``difflib.SequenceMatcher`` ratio is at least the threshold (default 0.99: a
revision that changed less than about 1% of the text did not act on the
feedback). The cheap upper bounds are tried first, so different drafts cost
almost nothing.
"""

from __future__ import annotations

import difflib
import re

DEFAULT_SIMILARITY = 0.99
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def similarity(a: str, b: str) -> float:
    """0.0 (nothing shared) to 1.0 (identical after whitespace is collapsed)."""
    a, b = normalise(a), normalise(b)
    if a == b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.ratio()


def similar(a: str, b: str, threshold: float = DEFAULT_SIMILARITY) -> bool:
    """True when ``a`` and ``b`` are the same text by the documented threshold."""
    a, b = normalise(a), normalise(b)
    if a == b:
        return True
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return False
    return matcher.ratio() >= threshold
