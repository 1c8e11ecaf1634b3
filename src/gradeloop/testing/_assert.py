"""assert_graded: grade a draft in a test and fail with a table that says why.

The failure message is the whole explanation -- each key, who filled it, whether
it was met, its score against its threshold and its issues, then the judge's
reasoning -- so pytest's assertion rewriting is not needed to see it, and it
reads the same under unittest or a plain script.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..grading._grade import Evaluation, Judge, grade
from ..grading._rubric import Rubric
from ..grading._transcript import Draft

__all__ = ["assert_graded", "failure_table", "observe"]

#: Called with every evaluation assert_graded makes (the pytest plugin counts them).
_OBSERVERS: list[Callable[[Evaluation], None]] = []


def observe(callback: Callable[[Evaluation], None]) -> Callable[[], None]:
    """Call ``callback`` with each evaluation :func:`assert_graded` makes; returns a
    function that stops it."""
    _OBSERVERS.append(callback)
    return lambda: _OBSERVERS.remove(callback) if callback in _OBSERVERS else None


def _rubric(rubric: Rubric | Mapping[str, Any] | str | os.PathLike[str]) -> Rubric:
    if isinstance(rubric, Rubric):
        return rubric
    if isinstance(rubric, str | os.PathLike):
        return Rubric.load(Path(rubric))
    return Rubric.from_dict(rubric)


def assert_graded(
    draft: Draft,
    rubric: Rubric | Mapping[str, Any] | str | os.PathLike[str],
    *,
    task: str = "",
    judge: Judge | None = None,
    reference: Draft | None = None,
) -> Evaluation:
    """Grade ``draft`` and raise :class:`AssertionError` unless it is accepted.

    ``draft`` and ``reference`` may be text or an agent's transcript (a
    :class:`~gradeloop.Transcript` or a list of message dicts), as for
    :func:`~gradeloop.grade`.

    ``rubric`` is a :class:`~gradeloop.Rubric`, its dict, or a rubric file's path.
    Judge-filled keys need ``judge`` (in pytest, the ``gradeloop_judge`` fixture
    replays recorded replies). Returns the evaluation when the draft is accepted::

        from gradeloop.testing import assert_graded

        def test_blurb(gradeloop_judge):
            assert_graded(write_blurb(), "rubric.toml", task="Write a blurb",
                          judge=gradeloop_judge)
    """
    r = _rubric(rubric)
    evaluation = grade(draft, r, task=task, judge=judge, reference=reference)
    for callback in list(_OBSERVERS):
        callback(evaluation)
    if not evaluation.accepted:
        raise AssertionError(failure_table(evaluation, r))
    return evaluation


def _cell(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def failure_table(evaluation: Evaluation, rubric: Rubric) -> str:
    """The per-key table, the issues and the judge's reasoning, as plain text."""
    head = ("key", "filled by", "met", "score/threshold", "issues")
    rows = []
    for c in evaluation.criteria:
        crit = rubric[c.key]
        met = "not checked" if not c.checked else ("yes" if c.passed else "NO")
        score = f"{c.score:g}/{crit.pass_threshold:g}" if crit.scale == "score" else "-"
        rows.append((c.key, c.filled_by, met, score, "; ".join(c.issues) or "-"))
    widths = [max(len(h), *(len(_cell(r[i], 60)) for r in rows)) for i, h in enumerate(head)]
    lines = [
        "draft not accepted: overall "
        + (
            "not computed"
            if evaluation.overall_score is None
            else f"{evaluation.overall_score:.2f}/10"
        )
        + (f" (pass score {rubric.pass_score:g})" if rubric.pass_score is not None else "")
        + f"; failed: {', '.join(evaluation.failed_keys) or 'none (the judge said not passed)'}",
        "",
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip(),
    ]
    for row in rows:
        cells = (_cell(x, 60).ljust(w) for x, w in zip(row, widths, strict=True))
        lines.append("  ".join(cells).rstrip())
    issues = [i for i in evaluation.verdict.issues if i.strip()]
    if issues:
        lines += ["", "issues:", *(f"  - {i}" for i in issues)]
    if evaluation.judge_called:
        lines += [
            "",
            "judge's reasoning:",
            *(f"  {line}" for line in evaluation.verdict.reasoning.splitlines() or ["(none)"]),
        ]
    return "\n".join(lines)
