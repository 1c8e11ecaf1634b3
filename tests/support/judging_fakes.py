"""Fake judges for the bias controls: no SDK, no network.

* :class:`PositionBiased` always prefers the draft in one position (pure position bias);
* :class:`Prefers` consistently prefers the draft that contains a marker;
* :class:`Voter` gives a fixed verdict (and, if asked, a fixed pairwise answer);
* :class:`Raising` raises on every call; :class:`Malformed` answers off-schema.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from gradeloop import Criterion, Verdict


class _Recorder:
    def __init__(self, model: str) -> None:
        self.model = model
        self.asked: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _note(self, kind: str, criteria: Sequence[Criterion], **what: Any) -> None:
        with self._lock:
            self.asked.append({"kind": kind, "keys": [c.key for c in criteria], **what})

    @property
    def prefers(self) -> list[dict[str, Any]]:
        return [a for a in self.asked if a["kind"] == "prefer"]

    @property
    def evaluations(self) -> list[dict[str, Any]]:
        return [a for a in self.asked if a["kind"] == "evaluate"]


class PositionBiased(_Recorder):
    """Prefers whatever is shown in ``position`` on every key; evaluates every key met."""

    def __init__(self, position: str = "first", model: str = "biased-judge") -> None:
        super().__init__(model)
        self.position = position

    def prefer(
        self, task: str, first: str, second: str, criteria: Sequence[Criterion]
    ) -> dict[str, str]:
        self._note("prefer", criteria, first=first, second=second)
        return {c.key: self.position for c in criteria}

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self._note("evaluate", criteria, draft=draft)
        return _verdict(criteria, dict.fromkeys((c.key for c in criteria), True), {})


class Prefers(_Recorder):
    """Consistently prefers the draft containing ``marker`` (a tie when both or neither do)."""

    def __init__(self, marker: str, model: str = "fair-judge") -> None:
        super().__init__(model)
        self.marker = marker

    def prefer(
        self, task: str, first: str, second: str, criteria: Sequence[Criterion]
    ) -> dict[str, str]:
        self._note("prefer", criteria, first=first, second=second)
        f, s = self.marker in first, self.marker in second
        choice = "first" if f and not s else "second" if s and not f else "tie"
        return {c.key: choice for c in criteria}


class Voter(_Recorder):
    """A fixed verdict: ``met`` per pass/fail key, ``scores`` per scored key (keys it is
    not given are left out); ``choice`` answers prefer() on every key."""

    def __init__(
        self,
        met: Mapping[str, bool] | None = None,
        scores: Mapping[str, float] | None = None,
        *,
        model: str = "voter",
        choice: str | None = None,
        issues: Sequence[str] = (),
    ) -> None:
        super().__init__(model)
        self.met, self.scores = dict(met or {}), dict(scores or {})
        self.choice = choice
        self.issues = list(issues)

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self._note("evaluate", criteria, draft=draft)
        keys = {c.key for c in criteria}
        met = {k: v for k, v in self.met.items() if k in keys}
        scores = {k: v for k, v in self.scores.items() if k in keys}
        return _verdict(criteria, met, scores, self.issues)

    def prefer(
        self, task: str, first: str, second: str, criteria: Sequence[Criterion]
    ) -> dict[str, str]:
        self._note("prefer", criteria, first=first, second=second)
        assert self.choice is not None, "this voter was given no pairwise answer"
        return {c.key: self.choice for c in criteria}


class AsyncVoter(Voter):
    """A :class:`Voter` with ``aevaluate`` (which the async paths must await)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.awaited = 0

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.awaited += 1
        return self.evaluate(task, draft, criteria)


class Raising(_Recorder):
    """Raises on every call, as a judge whose server is down."""

    def __init__(self, model: str = "down-judge", error: Exception | None = None) -> None:
        super().__init__(model)
        self.error = error or RuntimeError("connection refused")

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self._note("evaluate", criteria)
        raise self.error

    def prefer(self, task: str, first: str, second: str, criteria: Sequence[Criterion]) -> Any:
        self._note("prefer", criteria)
        raise self.error


class Malformed(_Recorder):
    """Answers off-schema: ``"yes"`` for a boolean, ``11`` for a score, ``"First"``."""

    def __init__(self, model: str = "sloppy-judge", *, answer: Any = None) -> None:
        super().__init__(model)
        self.answer = answer

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        self._note("evaluate", criteria)
        return {
            "reasoning": "looks fine",
            "criteria_met": {c.key: "yes" for c in criteria if c.scale != "score"},
            "scores": {c.key: 11 for c in criteria if c.scale == "score"},
            "passed": True,
            "issues": [],
        }

    def prefer(self, task: str, first: str, second: str, criteria: Sequence[Criterion]) -> Any:
        self._note("prefer", criteria)
        if self.answer is not None:
            return self.answer
        return {c.key: "First" for c in criteria}


def _verdict(
    criteria: Sequence[Criterion],
    met: Mapping[str, bool],
    scores: Mapping[str, float],
    issues: Sequence[str] = (),
) -> Verdict:
    claims = dict(met)
    for c in criteria:
        if c.scale == "score" and c.key in scores:
            claims[c.key] = scores[c.key] >= c.pass_threshold
    failing = [f"{k}: not met" for k, v in claims.items() if not v]
    return Verdict(
        reasoning="fake",
        criteria_met=claims,
        passed=bool(claims) and all(claims.values()),
        issues=[*issues, *failing],
        scores=dict(scores),
    )
