"""Readability checkers for gradeloop: an example of a third-party plugin.

Install it next to gradeloop (``pip install ./examples/gradeloop-readability``)
and ``gradeloop checkers`` lists ``max_paragraph_words`` and ``no_passive_voice``
under the plugin ``readability``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from gradeloop import CheckResult, hookimpl

_PASSIVE = re.compile(r"\b(?:is|are|was|were|be|been|being)\s+(\w+ed)\b", re.IGNORECASE)


def max_paragraph_words(text: str, *, limit: Annotated[int, Field(ge=1)] = 120) -> CheckResult:
    """No paragraph is longer than ``limit`` words."""
    issues = []
    for number, paragraph in enumerate(re.split(r"\n\s*\n", text), start=1):
        words = len(paragraph.split())
        if words > limit:
            issues.append(f"paragraph {number} has {words} words (max {limit}); split it")
    return CheckResult(passed=not issues, issues=issues)


def no_passive_voice(text: str, *, allowed: Annotated[int, Field(ge=0)] = 2) -> CheckResult:
    """At most ``allowed`` passive constructions ("was signed", "are handled")."""
    found = [m.group(0) for m in _PASSIVE.finditer(text)]
    if len(found) <= allowed:
        return CheckResult(passed=True)
    shown = ", ".join(repr(f) for f in found[:5])
    return CheckResult(
        passed=False,
        issues=[f"{len(found)} passive constructions (max {allowed}): {shown}; name who does what"],
    )


@hookimpl
def register_checkers(register: Callable[..., Any]) -> None:
    register("max_paragraph_words", max_paragraph_words)
    register("no_passive_voice", no_passive_voice)
