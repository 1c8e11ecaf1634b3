"""Repeated judging: several verdicts on one draft, decided per key, with their agreement.

One judge call is a sample of a noisy process: the same draft can pass on one
call and fail on the next. Asking ``k`` times and deciding each key on all the
answers makes the decision steadier, and the spread of the answers says how far
to trust it:

* a pass/fail key is met when **more than half** of its samples say met (a tie
  is *not met*: doubt never passes a draft);
* a scored key gets the **median** of its scores, rounded down, and is met when
  that reaches the threshold - unless the median rests on a split: an even number
  of scores whose two middle ones lie on either side of the threshold (as many pass
  as fail) is *not met*, like a tie, its value the median of the failing side;
* ``agreement`` is the share of samples whose own answer (met or not; for a
  scored key, its score against the threshold) matches the decision: 1.0 when all
  agree, 0.6 for three out of five.

With ``resample="doubtful"`` only some keys get more than one sample (the keys
the first answer failed or scored within ``margin`` of the threshold); the
others keep their one answer, with agreement 1.0 over one sample.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._issue_keys import is_about
from ._rubric import Criterion
from ._verdict import Verdict

__all__ = ["KeySamples", "SampledVerdict", "combine", "decide", "doubtful_keys"]

Value = bool | float


class KeySamples(BaseModel):
    """One key's raw answers across samples, and how many of them the decision matches."""

    model_config = ConfigDict(frozen=True)

    values: tuple[Value, ...]
    agreement: float

    @property
    def n(self) -> int:
        """How many samples answered this key."""
        return len(self.values)


class SampledVerdict(Verdict):
    """A :class:`~gradeloop.Verdict` decided on several samples; ``samples`` per judged key.

    ``orders`` holds, per sample, the keys in the order that sample's prompt showed
    them (empty when the judge did not record them).
    """

    samples: dict[str, KeySamples] = Field(default_factory=dict)
    requests: int = 1
    orders: tuple[tuple[str, ...], ...] = ()

    def key_detail(self, key: str) -> dict[str, Any] | None:
        """How ``key`` was judged beyond its values: its position in each sample's
        prompt (``{"positions": [0, 2, 1]}``), or None when nothing was recorded."""
        positions = [order.index(key) for order in self.orders if key in order]
        return {"positions": positions} if positions else None


def decide(c: Criterion, values: Sequence[Value]) -> tuple[Value, bool, float]:
    """The decided value, whether the key is met, and the agreement, for ``c``'s samples."""
    if not values:
        raise ValueError(f"no samples for {c.key!r}")
    n = len(values)
    if c.scale == "score":
        scores = [float(v) for v in values]
        decided, met, _ = median_decision(c, scores)
        agree = sum((s >= c.pass_threshold) == met for s in scores)
        return decided, met, agree / n
    yes = sum(v is True for v in values)
    met = yes * 2 > n  # a tie is not met
    return met, met, (yes if met else n - yes) / n


def median_decision(c: Criterion, scores: Sequence[float]) -> tuple[float, bool, bool]:
    """A scored key decided by the median of ``scores``: the score (rounded down),
    whether it is met, and whether the median rests on a split (then not met, and the
    score is the median of the scores that fail, so the two agree)."""
    ordered = sorted(scores)
    n = len(ordered)
    low, high = ordered[(n - 1) // 2], ordered[n // 2]  # one value when n is odd
    if (low >= c.pass_threshold) != (high >= c.pass_threshold):
        failing = [s for s in ordered if s < c.pass_threshold]
        return float(math.floor(statistics.median(failing))), False, True
    median = float(math.floor(statistics.median(ordered)))
    return median, median >= c.pass_threshold, False


def _value(c: Criterion, v: Verdict) -> Value | None:
    if c.scale == "score":
        score = v.scores.get(c.key)
        return None if score is None or not math.isfinite(score) else float(score)
    return v.criteria_met.get(c.key)


def doubtful_keys(criteria: Sequence[Criterion], first: Verdict, margin: float) -> list[str]:
    """The keys worth asking about again: failed, missing, or scored within ``margin``."""
    out = []
    for c in criteria:
        value = _value(c, first)
        if value is None:
            out.append(c.key)
        elif c.scale == "score":
            if float(value) < c.pass_threshold or abs(float(value) - c.pass_threshold) <= margin:
                out.append(c.key)
        elif value is not True:
            out.append(c.key)
    return out


def combine(
    criteria: Sequence[Criterion],
    first: Verdict,
    extra: Sequence[Verdict],
    requests: int,
    orders: Sequence[tuple[str, ...]] = (),
) -> SampledVerdict:
    """One verdict from the first answer and later ones (which may cover fewer keys).

    Reasoning comes from the first answer; issues are kept for the keys decided not
    met (taken from a sample that voted not met, else a line saying how the vote went).
    """
    met: dict[str, bool] = {}
    scores: dict[str, float] = {}
    samples: dict[str, KeySamples] = {}
    votes: dict[str, list[Verdict]] = {}
    for c in criteria:
        answered = [v for v in (first, *extra) if _value(c, v) is not None]
        values = [_value(c, v) for v in answered]
        if not answered:
            continue  # no sample answered: the key stays absent and fails closed
        decided, ok, agreement = decide(c, [x for x in values if x is not None])
        met[c.key] = ok
        if c.scale == "score":
            scores[c.key] = float(decided)
        samples[c.key] = KeySamples(
            values=tuple(x for x in values if x is not None), agreement=agreement
        )
        votes[c.key] = [v for v in answered if _met(c, v) is False]
    return SampledVerdict(
        reasoning=first.reasoning,
        criteria_met=met,
        passed=bool(met) and len(met) == len(criteria) and all(met.values()),
        issues=_issues(criteria, first, met, votes, samples),
        scores=scores,
        feedback=_feedback(first, extra),
        samples=samples,
        requests=requests,
        orders=tuple(orders),
    )


def _met(c: Criterion, v: Verdict) -> bool | None:
    value = _value(c, v)
    if value is None:
        return None
    return float(value) >= c.pass_threshold if c.scale == "score" else value is True


def _issues(
    criteria: Sequence[Criterion],
    first: Verdict,
    met: Mapping[str, bool],
    votes: Mapping[str, Sequence[Verdict]],
    samples: Mapping[str, KeySamples],
) -> list[str]:
    keys = [c.key for c in criteria]
    out = [i for i in first.issues if not any(is_about(i, k) for k in keys)]
    for key in keys:
        if met.get(key, False):
            continue
        found: list[str] = []
        for v in votes.get(key, ()):
            found = [i for i in v.issues if is_about(i, key)]
            if found:
                break
        if not found and key in samples:
            s = samples[key]  # decided not met: the agreeing samples are the "not met" votes
            found = [f"{key}: not met in {round(s.agreement * s.n)} of {s.n} samples"]
        out.extend(found)
    return list(dict.fromkeys(out))


def _feedback(first: Verdict, extra: Sequence[Verdict]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in (first, *extra):
        for key, text in v.feedback.items():
            out.setdefault(key, text)
    return out


def samples_json(samples: Mapping[str, KeySamples]) -> dict[str, Any]:
    """``{key: {"values": [...], "agreement": 0.67}}``, JSON-ready."""
    return {
        k: {"values": list(s.values), "agreement": round(s.agreement, 4)}
        for k, s in samples.items()
    }
