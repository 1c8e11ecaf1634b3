"""Why a draft was not accepted, in one line: what ``grade --drafts`` prints under its
table, and the judge keys that failed without a word (``grade`` names them too)."""

from __future__ import annotations

from collections.abc import Sequence

from ..grading._grade import Evaluation
from ..grading._issue_keys import is_about
from ..migration._jsonl import DraftItem

__all__ = ["NO_REASON", "reason_lines", "unexplained_keys", "why_not"]

NO_REASON = "not met; the judge gave no reason"


def unexplained_keys(ev: Evaluation) -> list[str]:
    """The judge keys that failed with no issue about them (the judge said "not met"
    and nothing else): a user must not have to guess why."""
    issues = ev.verdict.issues
    return [
        c.key
        for c in ev.criteria
        if c.checked
        and not c.passed
        and c.source == "judge"
        and not any(is_about(i, c.key) for i in issues)
    ]


def why_not(ev: Evaluation) -> str:
    """One line: why ``ev`` was not accepted."""
    if ev.judge_error is not None:
        return f"the judge failed: {ev.judge_error}"
    parts: list[str] = []
    for c in ev.criteria:
        if c.passed:
            continue
        if not c.checked:
            parts.append(f"{c.key}: not checked")
        elif c.source != "judge":
            parts.append(f"{c.key}: {_short(c.issues[0]) if c.issues else 'failed'}")
        else:
            about = [i for i in ev.verdict.issues if is_about(i, c.key)]
            parts.append(_short(about[0]) if about else f"{c.key}: {NO_REASON}")
    if not parts:  # every key met: the pass score, or the judge's own "passed": false
        said = [i for i in ev.verdict.issues if "pass_score" in i or "did not pass" in i]
        parts.append(said[0] if said else "the judge did not pass it")
    return "; ".join(parts)


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def reason_lines(items: Sequence[DraftItem], evaluations: Sequence[Evaluation]) -> list[str]:
    """Under the table: one line per draft that was not accepted, with why."""
    lines = [
        f"  {item.output_id}: {why_not(ev)}"
        for item, ev in zip(items, evaluations, strict=True)
        if not ev.accepted
    ]
    return ["\nwhy not accepted:", *lines] if lines else []
