"""``required_sections``: the Markdown headings a draft must have."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from gradeloop import CheckResult

from .._options import NonEmpty
from ..markdown._lines import Heading, headings

Sections = Annotated[tuple[NonEmpty, ...], Field(min_length=1)]

_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[ivxlc]+[.)]|[a-z][.)])\s+")
_DECORATION = re.compile(r"[*_`]+")


def normalize(title: str) -> str:
    """A heading as compared: no emphasis marks, numbering, trailing colon or case."""
    flat = " ".join(_DECORATION.sub("", title).split()).casefold()
    flat = _NUMBERING.sub("", flat)
    return flat.rstrip(":.").strip()


def _find(wanted: str, found: list[Heading], after: int = -1) -> Heading | None:
    key = normalize(wanted)
    return next((h for h in found if h.index > after and normalize(h.text) == key), None)


def _out_of_order(sections: tuple[str, ...], found: list[Heading]) -> list[str]:
    """Walk the required order; name each section only found before its predecessor."""
    issues: list[str] = []
    position = -1
    previous: str | None = None
    for wanted in sections:
        hit = _find(wanted, found, after=position)
        if hit is None:
            earlier = _find(wanted, found)
            assert earlier is not None  # every section was found somewhere
            issues.append(
                f"section {wanted!r} (line {earlier.index + 1}) must come after "
                f"{previous!r}; expected order: {', '.join(sections)}"
            )
            continue
        position, previous = hit.index, wanted
    return issues


def required_sections(text: str, *, sections: Sections, ordered: bool = False) -> CheckResult:
    """The text has a Markdown heading (any level) for each of ``sections``.

    Titles compare case-insensitively, ignoring emphasis marks, leading numbering
    ("2. Usage") and a trailing colon. Headings inside code blocks do not count.
    With ``ordered=true`` they must also appear in the given order.
    """
    if not sections:
        return CheckResult(False, ["checker 'required_sections' needs at least one section"])
    found = headings(text)
    missing = [s for s in dict.fromkeys(sections) if _find(s, found) is None]
    if missing:
        have = ", ".join(repr(h.text) for h in found[:15]) or "none"
        return CheckResult(
            False,
            [f"missing section {s!r}: add a heading such as '## {s}'" for s in missing]
            + [f"headings found: {have}"],
        )
    if ordered:
        issues = _out_of_order(tuple(dict.fromkeys(sections)), found)
        return CheckResult(not issues, issues)
    return CheckResult(True)
