"""Sufficient statistics of a set of graded drafts, which merge exactly.

A :class:`RunTally` holds counts and exact sums (integers and
:class:`~fractions.Fraction`), never a rounded mean: tallies of disjoint shards
merged in any order and grouping equal the tally of the whole, bit for bit, and so
do the intervals computed from them. That is what a distributed run needs (each
worker tallies its rows, a reducer adds the tallies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ._rows import GradedRow

__all__ = ["ClusterTally", "KeyTally", "RunTally"]

_ZERO = Fraction(0)


def _frac(x: float) -> Fraction:
    return Fraction(x)  # exact: every float is a dyadic rational


@dataclass(frozen=True)
class KeyTally:
    """One key over many drafts.

    ``met`` / ``unmet``: drafts with an answer; ``score_*``: count, sum and sum of
    squares of the 0-10 scores; ``scored``: some score was neither 0 nor 10 (a
    scored key, not pass/fail); ``votes`` / ``votes_met``: the judge's samples;
    ``voted``: drafts with samples; ``vote_mm``, ``vote_mv``, ``vote_vv``: the sums
    over drafts of (met votes)^2, (met votes)(votes) and (votes)^2, which give the
    spread of the drafts' vote rates (each draft a cluster of samples); ``shadow``:
    the primary against the shadow (both met, both not, primary only, shadow only).
    """

    met: int = 0
    unmet: int = 0
    score_n: int = 0
    score_sum: Fraction = _ZERO
    score_sq: Fraction = _ZERO
    scored: bool = False
    votes: int = 0
    votes_met: int = 0
    voted: int = 0
    vote_mm: int = 0
    vote_mv: int = 0
    vote_vv: int = 0
    shadow: tuple[int, int, int, int] = (0, 0, 0, 0)

    @property
    def answered(self) -> int:
        """Drafts with an answer on the key."""
        return self.met + self.unmet

    def merge(self, other: KeyTally) -> KeyTally:
        """The tally of both (exact)."""
        return KeyTally(
            self.met + other.met,
            self.unmet + other.unmet,
            self.score_n + other.score_n,
            self.score_sum + other.score_sum,
            self.score_sq + other.score_sq,
            self.scored or other.scored,
            self.votes + other.votes,
            self.votes_met + other.votes_met,
            self.voted + other.voted,
            self.vote_mm + other.vote_mm,
            self.vote_mv + other.vote_mv,
            self.vote_vv + other.vote_vv,
            tuple(a + b for a, b in zip(self.shadow, other.shadow, strict=True)),  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class ClusterTally:
    """One cluster's totals (the drafts sharing a value of the cluster field):
    drafts, accepted, the overall scores' count and sum, and per key (met,
    answered, score count, score sum, votes, met votes)."""

    drafts: int = 0
    accepted: int = 0
    overall_n: int = 0
    overall_sum: Fraction = _ZERO
    keys: Mapping[str, tuple[int, int, int, Fraction, int, int]] = field(default_factory=dict)

    def merge(self, other: ClusterTally) -> ClusterTally:
        """The totals of both (exact)."""
        keys = dict(self.keys)
        for k, b in other.keys.items():
            a = keys.get(k)
            keys[k] = b if a is None else _add6(a, b)
        return ClusterTally(
            self.drafts + other.drafts,
            self.accepted + other.accepted,
            self.overall_n + other.overall_n,
            self.overall_sum + other.overall_sum,
            {k: keys[k] for k in sorted(keys)},
        )


Six = tuple[int, int, int, Fraction, int, int]


def _add6(a: Six, b: Six) -> Six:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


@dataclass(frozen=True)
class RunTally:
    """Sufficient statistics of graded drafts: everything :func:`summarize` needs.

    Build one with :meth:`of` (from :class:`GradedRow` values) or
    :meth:`from_evaluations`; add two with :meth:`merge` (or ``+``): the result is
    exactly the tally of the union, whatever the order. ``cluster`` is the metadata
    field whose values group the drafts (None: no grouping); both sides of a merge
    must agree on it. :meth:`to_json` / :meth:`from_json` carry a tally between
    processes without losing a digit (sums are written as exact fractions).
    """

    cluster: str | None = None
    drafts: int = 0
    failed: int = 0
    accepted: int = 0
    overall_n: int = 0
    overall_sum: Fraction = _ZERO
    overall_sq: Fraction = _ZERO
    keys: Mapping[str, KeyTally] = field(default_factory=dict)
    clusters: Mapping[str, ClusterTally] = field(default_factory=dict)

    @property
    def graded(self) -> int:
        """Drafts graded (failed ones left out)."""
        return self.drafts - self.failed

    @classmethod
    def of(cls, rows: Iterable[GradedRow], *, cluster: str | None = None) -> RunTally:
        """The tally of ``rows``, grouped by metadata field ``cluster`` when given."""
        parts = [_one(row, cluster) for row in rows]
        keys: dict[str, KeyTally] = {}
        clusters: dict[str, ClusterTally] = {}
        for part in parts:  # in place, a row at a time: merge() would copy every map
            for name, k in part.keys.items():
                keys[name] = k if name not in keys else keys[name].merge(k)
            for value, c in part.clusters.items():
                clusters[value] = c if value not in clusters else clusters[value].merge(c)
        return cls(
            cluster,
            sum(p.drafts for p in parts),
            sum(p.failed for p in parts),
            sum(p.accepted for p in parts),
            sum(p.overall_n for p in parts),
            sum((p.overall_sum for p in parts), _ZERO),
            sum((p.overall_sq for p in parts), _ZERO),
            {k: keys[k] for k in sorted(keys)},
            {c: clusters[c] for c in sorted(clusters)},
        )

    @classmethod
    def from_evaluations(
        cls,
        evaluations: Iterable[Any],
        *,
        cluster: str | None = None,
        metadata: Iterable[Mapping[str, Any] | None] | None = None,
    ) -> RunTally:
        """The tally of :class:`~gradeloop.Evaluation` values (``metadata``, one
        mapping per evaluation, supplies the cluster field)."""
        evaluations = list(evaluations)
        metas = list(metadata) if metadata is not None else [None] * len(evaluations)
        if len(metas) != len(evaluations):
            raise ValueError(f"{len(evaluations)} evaluations but {len(metas)} metadata")
        rows = (
            GradedRow.from_evaluation(ev, id=ev.output_id or str(i), metadata=m)
            for i, (ev, m) in enumerate(zip(evaluations, metas, strict=True))
        )
        return cls.of(rows, cluster=cluster)

    def merge(self, other: RunTally) -> RunTally:
        """The tally of both sets of drafts (exact, associative, commutative)."""
        if self.cluster != other.cluster:
            raise ValueError(
                f"cannot merge tallies clustered by {self.cluster!r} and {other.cluster!r}"
            )
        return RunTally(
            self.cluster,
            self.drafts + other.drafts,
            self.failed + other.failed,
            self.accepted + other.accepted,
            self.overall_n + other.overall_n,
            self.overall_sum + other.overall_sum,
            self.overall_sq + other.overall_sq,
            _merged(self.keys, other.keys),
            _merged(self.clusters, other.clusters),
        )

    __add__ = merge

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, exact (fractions as ``"p/q"`` strings)."""
        return {
            "cluster": self.cluster,
            "drafts": self.drafts,
            "failed": self.failed,
            "accepted": self.accepted,
            "overall": [self.overall_n, str(self.overall_sum), str(self.overall_sq)],
            "keys": {k: _key_json(t) for k, t in self.keys.items()},
            "clusters": {c: _cluster_json(t) for c, t in self.clusters.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunTally:
        """Read back what :meth:`to_json` wrote."""
        n, total, squares = data["overall"]
        return cls(
            data["cluster"],
            int(data["drafts"]),
            int(data["failed"]),
            int(data["accepted"]),
            int(n),
            Fraction(total),
            Fraction(squares),
            {k: _key_from_json(v) for k, v in data["keys"].items()},
            {c: _cluster_from_json(v) for c, v in data["clusters"].items()},
        )


def _merged(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = v if k not in out else out[k].merge(v)
    return {k: out[k] for k in sorted(out)}  # one order whatever the merge order


def _one(row: GradedRow, cluster: str | None) -> RunTally:
    """The tally of a single draft."""
    if row.accepted is None:
        return RunTally(cluster, drafts=1, failed=1)
    keys: dict[str, KeyTally] = {}
    ckeys: dict[str, tuple[int, int, int, Fraction, int, int]] = {}
    for name, k in row.keys.items():
        if k.met is None:
            keys[name] = KeyTally()
            continue
        s = _frac(k.score) if k.score is not None else None
        m, v = sum(k.votes), len(k.votes)
        shadow = row.shadows.get(name)
        keys[name] = KeyTally(
            met=int(k.met),
            unmet=int(not k.met),
            score_n=int(s is not None),
            score_sum=s or _ZERO,
            score_sq=s * s if s is not None else _ZERO,
            scored=(k.score is not None and k.score not in (0.0, 10.0)) or bool(k.scores),
            votes=v,
            votes_met=m,
            voted=int(v > 0),
            vote_mm=m * m,
            vote_mv=m * v,
            vote_vv=v * v,
            shadow=_cell(shadow),
        )
        ckeys[name] = (int(k.met), 1, int(s is not None), s or _ZERO, v, m)
    o = _frac(row.overall) if row.overall is not None else None
    clusters = {}
    if cluster is not None:
        clusters[row.cluster(cluster)] = ClusterTally(
            1, int(row.accepted), int(o is not None), o or _ZERO, dict(sorted(ckeys.items()))
        )
    return RunTally(
        cluster,
        drafts=1,
        accepted=int(row.accepted),
        overall_n=int(o is not None),
        overall_sum=o or _ZERO,
        overall_sq=o * o if o is not None else _ZERO,
        keys=dict(sorted(keys.items())),
        clusters=clusters,
    )


def _cell(shadow: tuple[bool, bool] | None) -> tuple[int, int, int, int]:
    if shadow is None:
        return (0, 0, 0, 0)
    primary, other = shadow
    index = (0 if primary == other else 2) + (0 if primary else 1)
    return tuple(int(i == index) for i in range(4))  # type: ignore[return-value]


def _key_json(t: KeyTally) -> list[Any]:
    return [
        t.met, t.unmet, t.score_n, str(t.score_sum), str(t.score_sq), t.scored, t.votes,
        t.votes_met, t.voted, t.vote_mm, t.vote_mv, t.vote_vv, list(t.shadow),
    ]  # fmt: skip


def _key_from_json(v: list[Any]) -> KeyTally:
    return KeyTally(
        int(v[0]), int(v[1]), int(v[2]), Fraction(v[3]), Fraction(v[4]), bool(v[5]),
        int(v[6]), int(v[7]), int(v[8]), int(v[9]), int(v[10]), int(v[11]),
        tuple(int(x) for x in v[12]),  # type: ignore[arg-type]
    )  # fmt: skip


def _cluster_json(t: ClusterTally) -> list[Any]:
    keys = {k: [a, b, c, str(d), e, f] for k, (a, b, c, d, e, f) in t.keys.items()}
    return [t.drafts, t.accepted, t.overall_n, str(t.overall_sum), keys]


def _cluster_from_json(v: list[Any]) -> ClusterTally:
    keys = {
        k: (int(a), int(b), int(c), Fraction(d), int(e), int(f))
        for k, (a, b, c, d, e, f) in v[4].items()
    }
    return ClusterTally(int(v[0]), int(v[1]), int(v[2]), Fraction(v[3]), keys)
