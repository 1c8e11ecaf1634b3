"""``select="pairwise"``: when the loop's two best drafts score alike, compare them.

An overall score is a sum of absolute judgements, each noisy; two drafts within a
point of each other are not reliably ordered by it. With ``select="pairwise"`` the
loop, once it stops without a pass, takes its best two distinct judged drafts and,
when their overall scores are within ``select_margin``, asks
:func:`~gradeloop.judging.compare_drafts` which is better (two judge requests, one per order;
code keys are compared from the checkers' results already in hand, at no cost).

What may change, and what never does:

* only drafts of the same standing are compared: an accepted draft is never dropped
  for one that was not (in practice the loop returns at once on a pass, so both are
  unaccepted);
* the comparison's winner is returned; a tie (a key whose two orders disagree counts
  as a tie) keeps the **earlier** draft, and a failed comparison keeps the draft the
  score chose;
* the returned ``passed`` is always the returned draft's own verdict;
* nothing is compared after a budget stop or a judge that kept failing.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import JudgeError
from ..grading._drivers import adrive, drive
from ..grading._rubric import Rubric
from ..judging._preference import (
    Preference,
    aprefer_both,
    build_preference,
    prefer_both,
)
from ..models._usage import Usage, metered
from ._result import Iteration


class _Run(Protocol):
    """What the selection needs of a loop's state (``loop._state.LoopRun`` has it)."""

    settings: Any
    history: list[Iteration]
    rubric: Rubric
    judge: Any
    task: str
    usage: Usage
    selection: Any

    def choose(self) -> Iteration: ...


__all__ = ["Selection", "aselect_draft", "select_draft", "selection"]

_NO_COMPARISON = ("passed", "cost_budget", "token_budget", "time_budget", "evaluator_failed")


@dataclass(frozen=True)
class Selection:
    """How ``select="pairwise"`` chose between the loop's two best drafts.

    ``a_output_id`` is the earlier draft, ``b_output_id`` the later; ``chosen_output_id``
    the one returned; ``preference`` the comparison (None when it failed: ``error``
    says why); ``usage`` what the comparison cost.
    """

    a_output_id: str
    b_output_id: str
    chosen_output_id: str
    reason: str
    preference: Preference | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: the two drafts, the one chosen and why, the comparison."""
        return {
            "a_output_id": self.a_output_id,
            "b_output_id": self.b_output_id,
            "chosen_output_id": self.chosen_output_id,
            "reason": self.reason,
            "preference": None if self.preference is None else self.preference.to_json(),
            "error": self.error,
            "usage": self.usage.to_dict(),
        }


def _pair(run: _Run, reason: str, chosen: Iteration) -> tuple[Iteration, Iteration] | None:
    """The earlier and the later of the two best drafts, when they are to be compared."""
    s = run.settings
    if s.select != "pairwise" or reason in _NO_COMPARISON:  # (pairwise implies "best")
        return None
    best = chosen.evaluation
    if best is None or best.accepted:  # the best rank is accepted if any draft was
        return None
    others = [h for h in run.history if h.evaluation is not None and h.content != chosen.content]
    if not others:
        return None
    second = max(reversed(others), key=lambda h: _rank(h))  # ties to the latest
    ev = second.evaluation
    assert ev is not None
    if ev.overall_score is None or best.overall_score is None:  # keys not checked: no figure
        return None
    if abs(ev.overall_score - best.overall_score) > s.select_margin:
        return None
    return (chosen, second) if chosen.iteration < second.iteration else (second, chosen)


def _rank(h: Iteration) -> tuple[bool, float]:
    assert h.evaluation is not None
    score = h.evaluation.overall_score
    return (h.evaluation.accepted, -math.inf if score is None else score)


def _code(it: Iteration) -> dict[str, Any]:
    assert it.evaluation is not None
    return {c.key: c for c in it.evaluation.criteria}


def _decide(
    run: _Run,
    pair: tuple[Iteration, Iteration],
    chosen: Iteration,
    answers: Any,
    meter: Any,
) -> Iteration:
    """The draft to return from the judge's two answers (or the JudgeError it raised),
    recorded on ``run.selection``."""
    earlier, later = pair
    pref, error = None, None
    if isinstance(answers, JudgeError):
        error = f"{answers.reason}: {answers}"
    else:
        pref = build_preference(
            run.rubric, _code(earlier), _code(later), answers, tuple(meter.records)
        )
    if pref is None:
        pick, why = chosen, f"the comparison failed; kept the best by score ({error})"
    elif pref.winner == "b":
        pick, why = later, "the later draft won the comparison"
    elif pref.winner == "a":
        pick, why = earlier, "the earlier draft won the comparison"
    else:
        pick, why = earlier, "a tie (inconsistent keys count as ties): kept the earlier draft"
    usage = meter.usage
    run.selection = Selection(
        earlier.output_id, later.output_id, pick.output_id, why, pref, error, usage
    )
    run.usage += usage
    return pick


def selection(run: _Run, reason: str) -> Generator[tuple[str, str], Any, Iteration]:
    """The draft to return, decided once for both drivers: yields the two drafts' texts
    (earlier, later) when the judge is to compare them in both orders, and is sent its
    two answers (or has its :class:`~gradeloop.errors.JudgeError` thrown in)."""
    chosen = run.choose()
    pair = _pair(run, reason, chosen)
    if pair is None:
        return chosen
    answers: Any = None
    with metered() as meter:
        try:
            if run.rubric.judge_criteria:
                answers = yield _texts(pair)
        except JudgeError as exc:
            answers = exc
    return _decide(run, pair, chosen, answers, meter)


def select_draft(run: _Run, reason: str) -> Iteration:
    """The draft to return: the score's choice, or the pairwise winner (see the module)."""
    judged = run.rubric.judge_criteria
    return drive(selection(run, reason), lambda ab: prefer_both(run.judge, run.task, *ab, judged))


async def aselect_draft(run: _Run, reason: str) -> Iteration:
    """:func:`select_draft`, the two orders asked at once."""
    judged = run.rubric.judge_criteria
    return await adrive(
        selection(run, reason), lambda ab: aprefer_both(run.judge, run.task, *ab, judged)
    )


def _texts(pair: tuple[Iteration, Iteration]) -> tuple[str, str]:
    return pair[0].content, pair[1].content
