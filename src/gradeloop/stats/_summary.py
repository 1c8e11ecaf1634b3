"""A run's figures with their intervals: what ``gradeloop summarize`` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ._intervals import (
    Interval,
    check_level,
    kappa_interval,
    mean_from_moments,
    rate_from_moments,
    t_interval,
    wilson,
)
from ._rows import GradedRow
from ._tally import KeyTally, RunTally
from ._variance import VarianceShares, variance_shares

__all__ = ["KeySummary", "Summary", "summarize"]


@dataclass(frozen=True)
class KeySummary:
    """One key's figures: the met rate, and where they apply the 0-10 score's mean,
    the rate of the judge's samples (each draft a cluster of samples), and the
    shadow's agreement and kappa with the primary."""

    key: str
    rate: Interval
    score: Interval | None = None
    votes: Interval | None = None
    agreement: Interval | None = None
    kappa: Interval | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"rate", "ci", "n"}`` plus ``"score"``, ``"votes"``, ``"shadow"`` when set."""
        out = self.rate.to_json("rate")
        if self.score is not None:
            out["score"] = self.score.to_json("mean")
        if self.votes is not None:
            out["votes"] = self.votes.to_json("rate")
        if self.agreement is not None and self.kappa is not None:
            out["shadow"] = {
                "agreement": self.agreement.to_json("rate"),
                "kappa": self.kappa.to_json("kappa"),
            }
        return out


@dataclass(frozen=True)
class Summary:
    """Every figure of a run with its interval at ``level``.

    ``accepted`` is the rate of drafts the gate accepted (Wilson; cluster-robust
    when ``cluster`` names a metadata field), ``score`` the weighted overall score's
    mean (Student's t), ``keys`` per key; drafts whose grading failed are left out of
    every figure and counted in ``failed``. ``variance`` says, per key with repeated
    judge samples, what share of the variance is the judge's, the generator's and
    the items' (see :func:`variance_shares`).
    """

    level: float
    cluster: str | None
    drafts: int
    failed: int
    accepted: Interval
    score: Interval
    keys: Mapping[str, KeySummary]
    variance: Mapping[str, VarianceShares] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Drafts graded (failed ones left out)."""
        return self.drafts - self.failed

    def to_json(self) -> dict[str, Any]:
        """``{"n", "accepted": {"rate", "ci"}, "keys": {KEY: {"rate", "ci", "n"}},
        "level"}`` and the rest (``"score"``, ``"drafts"``, ``"failed"``,
        ``"cluster"``, ``"variance"``)."""
        out: dict[str, Any] = {
            "n": self.n,
            "drafts": self.drafts,
            "failed": self.failed,
            "level": self.level,
            "cluster": self.cluster,
            "accepted": self.accepted.to_json("rate"),
            "score": self.score.to_json("mean"),
            "keys": {k: s.to_json() for k, s in self.keys.items()},
        }
        if self.variance:
            out["variance"] = {k: v.to_json() for k, v in self.variance.items()}
        return out


def summarize(
    data: RunTally | Iterable[GradedRow],
    *,
    level: float = 0.95,
    cluster: str | None = None,
) -> Summary:
    """The figures of graded drafts (rows, or a :class:`RunTally` already made) with
    intervals at ``level``; ``cluster`` names the metadata field whose values group
    the drafts (cluster-robust intervals). From rows, keys with repeated samples also
    get their variance shares (a tally keeps too little for that)."""
    check_level(level)
    variance: dict[str, VarianceShares] = {}
    if isinstance(data, RunTally):
        tally = data
        if cluster is not None and tally.cluster != cluster:
            raise ValueError(f"the tally is clustered by {tally.cluster!r}, not {cluster!r}")
    else:
        rows = list(data)
        tally = RunTally.of(rows, cluster=cluster)
        variance = variance_shares(rows, group=cluster or "task")
    clustered = tally.cluster is not None
    clusters = list(tally.clusters.values())
    if clustered:
        accepted = rate_from_moments(
            tally.accepted,
            tally.graded,
            len([c for c in clusters if c.drafts]),
            _moments([(c.accepted, c.drafts) for c in clusters]),
            level,
        )
        score = mean_from_moments(
            tally.overall_sum,
            tally.overall_n,
            len([c for c in clusters if c.overall_n]),
            _moments([(c.overall_sum, c.overall_n) for c in clusters]),
            level,
        )
    else:
        accepted = wilson(tally.accepted, tally.graded, level)
        score = t_interval(tally.overall_n, tally.overall_sum, tally.overall_sq, level)
    keys = {name: _key(name, k, tally, level) for name, k in tally.keys.items()}
    return Summary(
        level, tally.cluster, tally.drafts, tally.failed, accepted, score, keys, variance
    )


def _moments(pairs: list[tuple[Any, int]]) -> tuple[Fraction, Fraction, Fraction]:
    kept = [(Fraction(t), m) for t, m in pairs if m > 0]
    return (
        sum((t * t for t, _ in kept), Fraction(0)),
        sum((t * m for t, m in kept), Fraction(0)),
        sum((Fraction(m * m) for _, m in kept), Fraction(0)),
    )


def _key(name: str, k: KeyTally, tally: RunTally, level: float) -> KeySummary:
    per = [c.keys[name] for c in tally.clusters.values() if name in c.keys]
    if tally.cluster is not None:
        rate = rate_from_moments(
            k.met, k.answered, len([p for p in per if p[1]]),
            _moments([(p[0], p[1]) for p in per]), level,
        )  # fmt: skip
        score = mean_from_moments(
            k.score_sum, k.score_n, len([p for p in per if p[2]]),
            _moments([(p[3], p[2]) for p in per]), level,
        )  # fmt: skip
        votes = rate_from_moments(
            k.votes_met, k.votes, len([p for p in per if p[4]]),
            _moments([(p[5], p[4]) for p in per]), level,
        )  # fmt: skip
    else:
        rate = wilson(k.met, k.answered, level)
        score = t_interval(k.score_n, k.score_sum, k.score_sq, level)
        votes = rate_from_moments(
            k.votes_met, k.votes, k.voted, (k.vote_mm, k.vote_mv, k.vote_vv), level
        )
    agreement = kappa = None
    if any(k.shadow):
        both_pass, both_fail, primary_only, shadow_only = k.shadow
        agreement = wilson(both_pass + both_fail, sum(k.shadow), level)
        kappa = kappa_interval(both_pass, both_fail, primary_only, shadow_only, level)
    return KeySummary(
        name,
        rate,
        score if k.scored else None,
        votes if k.votes > k.answered else None,  # one sample a draft is no repetition
        agreement,
        kappa,
    )
