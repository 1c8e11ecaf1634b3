"""When is a revision "the same text" as the draft before it?

Similarity is the multiset Jaccard index of the two drafts' word bigrams
(lower-cased, punctuation kept with its word): shared bigrams over all bigrams,
counting repeats. It is linear in the length of the drafts, so it costs little
even on long, repetitive text (``difflib`` is quadratic there).

Two drafts are the same when their similarity is at least the threshold, 0.95 by
default. Changing k words of an n-word draft removes and adds about 2k bigrams,
giving roughly 1 - 4k/n: a revision that changed about 1% of its words or less,
or only its whitespace, did not act on the feedback.
"""

from __future__ import annotations

import itertools
from collections import Counter

DEFAULT_SIMILARITY = 0.95


def _bigrams(text: str) -> Counter[tuple[str, str]]:
    words = text.lower().split()
    if len(words) == 1:
        return Counter({(words[0], ""): 1})
    return Counter(itertools.pairwise(words))


def similarity(a: str, b: str) -> float:
    """0.0 (nothing shared) to 1.0 (the same words in the same order)."""
    if a == b:
        return 1.0
    ca, cb = _bigrams(a), _bigrams(b)
    if not ca and not cb:
        return 1.0  # both empty or whitespace only
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union


def similar(a: str, b: str, threshold: float = DEFAULT_SIMILARITY) -> bool:
    """True when ``a`` and ``b`` are the same text by the documented threshold."""
    return similarity(a, b) >= threshold
