"""A jury's decision on one key from its members' answers, and the verdict it makes.

Rules (docs/judging.md explains why):

* only the members that answered vote; a member that raised abstains;
* ``policy="majority"``: a key is met when **more than half** of the votes say met
  (for a scored key: a score reaching the threshold). Exactly half is a *tie*, and a
  tie is not met. A scored key's score is the median (rounded down) of the scores on
  the winning side, so it agrees with the decision;
* ``policy="median"``: a scored key takes the median of all its scores, rounded down,
  and is met when that reaches the threshold; pass/fail keys go by majority as above.
  With an even number of scores the median lies between the two middle ones: when one
  of them reaches the threshold and the other does not, the median rests on a split
  (as many judges pass the key as fail it) and fails closed, like a tie, its score
  the median of the failing side;
* fewer votes than the quorum: the key is not met, whatever the votes say;
* ``agreement`` is the share of votes that match the decision (1.0 when all agree).

Every key that fails closed carries its reason (a tie, too few answers) as an issue.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..grading._issue_keys import is_about
from ..grading._rubric import Criterion
from ..grading._samples import KeySamples, SampledVerdict, median_decision
from ..grading._verdict import Verdict

__all__ = ["JuryVerdict", "KeyDecision", "Policy", "decide_key", "jury_verdict", "member_value"]

Policy = Literal["majority", "median"]
Value = bool | float


@dataclass(frozen=True)
class KeyDecision:
    """One key decided: met or not, its score (scored keys), agreement, and why it
    failed closed (``note``) when it did."""

    met: bool
    score: float | None
    agreement: float
    note: str | None = None
    short: bool = False  # fewer votes than the quorum: no decision at all


def member_value(c: Criterion, v: Verdict) -> Value | None:
    """What a member's verdict says about ``c`` (None when it left the key out)."""
    if c.scale == "score":
        score = v.scores.get(c.key)
        return None if score is None or not math.isfinite(score) else float(score)
    return v.criteria_met.get(c.key)


def _met(c: Criterion, value: Value) -> bool:
    return float(value) >= c.pass_threshold if c.scale == "score" else value is True


def decide_key(c: Criterion, values: Sequence[Value], policy: Policy, quorum: int) -> KeyDecision:
    """The decision on ``c`` from the answering members' ``values``."""
    n = len(values)
    if n == 0:
        return KeyDecision(False, None, 0.0, f"no judge answered (quorum {quorum})")
    votes = [_met(c, v) for v in values]
    yes = sum(votes)
    score: float | None
    if c.scale == "score" and policy == "median":
        met, score, note = _median(c, [float(v) for v in values])
    else:
        met = yes * 2 > n
        note = (
            f"the jury tied: {yes} of {n} judges say met, and a tie is not met"
            if yes * 2 == n
            else None
        )
        side = [float(v) for v, m in zip(values, votes, strict=True) if m == met]
        score = float(math.floor(statistics.median(side))) if c.scale == "score" else None
    agreement = sum(m == met for m in votes) / n
    if n < quorum:
        note = f"too few judges answered ({n}; the quorum is {quorum})"
        return KeyDecision(False, score, agreement, note, short=True)
    return KeyDecision(met, score, agreement, note)


def _median(c: Criterion, values: list[float]) -> tuple[bool, float, str | None]:
    """``policy="median"`` on a scored key: met, score and the note of a split."""
    score, met, split = median_decision(c, values)
    if not split:
        return met, score, None
    yes = sum(v >= c.pass_threshold for v in values)
    note = (
        f"the jury's median falls between a pass and a fail: {yes} of {len(values)} "
        "judges' scores reach the threshold, and a split is not met"
    )
    return False, score, note


class JuryVerdict(SampledVerdict):
    """A :class:`~gradeloop.Verdict` decided by a :class:`~gradeloop.judging.Jury`.

    ``samples`` holds each key's answers (one per member that answered) and their
    agreement, the inter-judge agreement that ``CriterionResult.agreement`` carries.
    ``votes`` maps each key to ``{member: value}``; ``abstained`` each member that
    raised to its error; ``self_agreement`` each key to ``{member: agreement}`` for
    members that sampled themselves (``samples=k``); ``notes`` each key that failed
    closed to its reason. ``requested_on`` is set when the jury ran with another ``on``
    than it was built with: a Message Batches job asks every member every key (it
    cannot wait for the first answer), so an ``on="doubtful"`` jury runs as
    ``on="all"`` there, and says so.
    """

    policy: str = "majority"
    on: str = "all"
    votes: dict[str, dict[str, Value]] = Field(default_factory=dict)
    abstained: dict[str, str] = Field(default_factory=dict)
    self_agreement: dict[str, dict[str, float]] = Field(default_factory=dict)
    notes: dict[str, str] = Field(default_factory=dict)
    requested_on: str | None = None

    def key_detail(self, key: str) -> dict[str, Any] | None:
        """The jury's record of ``key``: votes by member, abstentions, self-agreement,
        the policy, and why it failed closed (if it did)."""
        jury: dict[str, Any] = {
            "policy": self.policy,
            "on": self.on,
            "votes": dict(self.votes.get(key, {})),
            "abstained": dict(self.abstained),
        }
        if key in self.samples:
            jury["agreement"] = round(self.samples[key].agreement, 4)
        if self.self_agreement.get(key):
            jury["self_agreement"] = dict(self.self_agreement[key])
        if key in self.notes:
            jury["note"] = self.notes[key]
        if self.requested_on is not None:
            jury["requested_on"] = self.requested_on
        return {"jury": jury}


def jury_verdict(
    criteria: Sequence[Criterion],
    answers: Mapping[str, Verdict],
    abstained: Mapping[str, str],
    *,
    policy: Policy,
    on: str,
    quorum: int,
    quorum_exempt: frozenset[str] = frozenset(),
) -> JuryVerdict:
    """The jury's verdict from each answering member's (strictly read) verdict.

    ``answers`` is in member order; ``quorum_exempt`` are keys decided by the first
    member alone (``on="doubtful"``: the keys it did not doubt).
    """
    met: dict[str, bool] = {}
    scores: dict[str, float] = {}
    samples: dict[str, KeySamples] = {}
    votes: dict[str, dict[str, Value]] = {}
    selfs: dict[str, dict[str, float]] = {}
    notes: dict[str, str] = {}
    issues: list[str] = []
    for c in criteria:
        cast = {name: v for name, a in answers.items() if (v := member_value(c, a)) is not None}
        votes[c.key] = cast
        need = 1 if c.key in quorum_exempt else quorum
        d = decide_key(c, list(cast.values()), policy, need)
        if cast:
            met[c.key] = d.met
            samples[c.key] = KeySamples(values=tuple(cast.values()), agreement=d.agreement)
            # a key short of its quorum gets no score: a score would decide it met again
            if c.scale == "score" and d.score is not None and not d.short:
                scores[c.key] = d.score
        selfs[c.key] = _self_agreement(c.key, answers)
        if d.note is not None:
            notes[c.key] = d.note
        if not d.met:
            issues.extend(_issues(c, answers, cast, d))
    return JuryVerdict(
        reasoning=_reasoning(answers),
        criteria_met=met,
        passed=len(met) == len(criteria) and all(met.values()),
        issues=list(dict.fromkeys(issues)),
        scores=scores,
        feedback=_feedback(answers),
        samples=samples,
        requests=len(answers) + len(abstained),
        policy=policy,
        on=on,
        votes=votes,
        abstained=dict(abstained),
        self_agreement={k: v for k, v in selfs.items() if v},
        notes=notes,
    )


def _self_agreement(key: str, answers: Mapping[str, Verdict]) -> dict[str, float]:
    out = {}
    for name, v in answers.items():
        if isinstance(v, SampledVerdict) and key in v.samples:
            out[name] = round(v.samples[key].agreement, 4)
    return out


def _issues(
    c: Criterion, answers: Mapping[str, Verdict], cast: Mapping[str, Value], d: KeyDecision
) -> list[str]:
    """A failed key's issues: those of the members that voted not met, and the reason
    when the key failed closed."""
    out: list[str] = []
    for name, value in cast.items():
        if not _met(c, value):
            out.extend(i for i in answers[name].issues if is_about(i, c.key))
    if d.note is not None:
        out.append(f"{c.key}: {d.note}")
    elif not out:
        out.append(f"{c.key}: not met by the jury's {len(cast)} answers")
    return out


def _reasoning(answers: Mapping[str, Verdict]) -> str:
    return "\n\n".join(f"[{name}] {v.reasoning}" for name, v in answers.items())


def _feedback(answers: Mapping[str, Verdict]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in answers.values():
        for key, text in v.feedback.items():
            out.setdefault(key, text)
    return out
