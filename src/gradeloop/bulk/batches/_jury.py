"""Collecting a jury's Message Batches job: each draft's member answers, decided together.

Each draft has one request per member. A member whose request errored, expired, was
canceled, came back twice or not at all, or whose reply is not a valid verdict,
abstains and is named with the reason, exactly as a member that raises does in
:meth:`Jury.evaluate <gradeloop.Jury.evaluate>`; the answers are then decided by
:meth:`Jury.decide <gradeloop.Jury.decide>` (the same votes, ties failing closed,
quorum and per-key agreement). Each member's calls are priced at the batch discount
and added up per member (:class:`MemberTally`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import JudgeError
from ...grading._agrade import _Replay
from ...grading._calls import judge_calls
from ...grading._grade import (
    Evaluation,
    GradePlan,
    _ask_judge,
    failed_evaluation,
    finish_grade,
    judge_answer,
    run_checks,
    start_plan,
)
from ...grading._registry import Registry
from ...grading._rubric import Criterion, Rubric
from ...grading._verdict import Verdict
from ...history._batches import BatchRequestRecord
from ...judging._jury import Jury
from ...models._batch import read_batch_reply
from ...models._judge import AnthropicJudge
from ._members import Member

__all__ = [
    "Asked",
    "MemberTally",
    "RequestFailed",
    "batch_evaluation",
    "failure",
    "jury_evaluation",
    "request_failed",
]


class RequestFailed(Exception):
    """A member's batch request that brought no reply (errored, expired, ...): it
    abstains, named with ``reason`` and the message."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


_WHY = {
    "expired": "batch_expired: the request expired before it was processed "
    "(a batch ends within 24 hours)",
    "canceled": "batch_canceled: the batch was canceled before this request was processed",
    "no_result": "no_result: the batch returned no result for this request",
    "duplicate_result": "duplicate_result: the batch returned more than one result for "
    "this request; none was used",
    "not_submitted": "not_submitted: this part of the job was never submitted",
}


def failure(outcome: str, result: Any) -> str | None:
    """Why a request of ``outcome`` gave no reply (``reason: message``); None when it
    succeeded."""
    if outcome == "succeeded":
        return None
    if outcome == "errored":
        detail = getattr(getattr(result, "error", None), "error", None)
        kind = getattr(detail, "type", "error")
        message = getattr(detail, "message", "no message")
        return f"batch_errored: {kind}: {message}"
    return _WHY.get(outcome, f"batch_{outcome}: an outcome gradeloop does not know")


@dataclass
class MemberTally:
    """One jury member's requests in a job: how many answered with a valid verdict,
    how many abstained (by reason), and what its answers cost at the batch price
    (None when its model's price is unknown)."""

    requests: int = 0
    answered: int = 0
    abstained: int = 0
    cost_usd: float | None = 0.0

    def add(self, outcome: Any, calls: Sequence[Any]) -> None:
        """Count one request: its outcome (a Verdict or why not) and its call records."""
        self.requests += 1
        if isinstance(outcome, Verdict):
            self.answered += 1
        else:
            self.abstained += 1
        for c in calls:
            cost = c.usage.cost_usd
            self.cost_usd = None if self.cost_usd is None or cost is None else self.cost_usd + cost

    def line(self, name: str) -> str:
        """``claude-a: 3 of 4 answered, 1 abstained, $0.0021``."""
        cost = "cost unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (
            f"{name}: {self.answered} of {self.requests} answered, {self.abstained} "
            f"abstained, {cost}"
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "requests": self.requests,
            "answered": self.answered,
            "abstained": self.abstained,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class Asked:
    """One member's request for a draft: its outcome, its result, its cache key."""

    outcome: str
    result: Any
    cache_key: str


def request_failed(got: Asked) -> RequestFailed | None:
    """Why request ``got`` brought no reply (None: it brought one)."""
    why = failure(got.outcome, got.result)
    if why is None:
        return None
    reason, _, message = why.partition(": ")
    return RequestFailed(reason, message)


def _member_answer(
    judge: AnthropicJudge, r: BatchRequestRecord, asked: Sequence[Criterion], got: Asked
) -> Verdict | Exception:
    """The member's verdict, read as evaluate() reads it, or why it has none."""
    failed = request_failed(got)
    if failed is not None:
        return failed
    try:
        verdict = read_batch_reply(
            judge, r.task, r.draft, asked, got.result.message, key=got.cache_key
        )
        return judge_answer(verdict, asked)
    except JudgeError as exc:
        return exc


def jury_evaluation(
    r: BatchRequestRecord,
    asked_of: Sequence[Asked],
    members: Sequence[Member],
    rubric: Rubric,
    jury: Jury,
    registry: Registry | None,
    tallies: dict[str, MemberTally],
) -> Evaluation:
    """The evaluation of draft ``r`` from its members' requests (``asked_of``, in
    member order); the members' tallies counted on the way."""

    def decided(plan: GradePlan) -> Verdict:
        outcomes: list[Any] = []
        for member, got in zip(members, asked_of, strict=True):
            with judge_calls() as own:
                outcome = _member_answer(member.judge, r, plan.asked, got)
            tallies.setdefault(member.name, MemberTally()).add(outcome, own)
            outcomes.append(outcome)
        return jury.decide(plan.asked, outcomes)

    return batch_evaluation(r, rubric, jury, registry, decided)


def batch_evaluation(
    r: BatchRequestRecord,
    rubric: Rubric,
    judge: Any,
    registry: Registry | None,
    verdict_of: Callable[[GradePlan], Verdict],
) -> Evaluation:
    """Draft ``r`` graded with the verdict ``verdict_of`` reads from its batch results
    (checked as grade() checks a judge's); a failed evaluation naming the reason when
    it raises (a :class:`JudgeError`, or :class:`RequestFailed` for a request that
    brought no reply)."""
    plan = run_checks(
        start_plan(r.draft, rubric, task=r.task, judge=judge, skip_judge=False, registry=registry)
    )
    error: str | None = None
    with judge_calls() as calls:
        try:
            verdict = verdict_of(plan)
            answer = _ask_judge(_Replay(verdict), r.task, r.draft, plan.asked, plan.rubric)
        except (JudgeError, RequestFailed) as exc:
            error = f"{exc.reason}: {exc}"
    if error is not None:
        return failed_evaluation(plan, error, tuple(calls))
    return finish_grade(plan, answer, tuple(calls))
