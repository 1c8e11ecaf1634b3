"""Sufficient counts of a graded shard, merged exactly into a whole run's figures.

Each shard (a batch, a partition, a machine) keeps counts, never rates: drafts and
accepted ones; per key how often it was checked, met and errored, and its score's
sum and sum of squares; per shadowed key the four cells of shadow against primary;
per labelled key the four cells of verdict against label; per cluster the same
draft and met counts; and the judge's requests, tokens and dollars. Counts add, so
merging shards in any order gives the counts one machine would have kept, and the
figures (rates, Wilson intervals, kappa) computed from them are the same numbers.

Scores add exactly too: each is kept as an integer numerator over its own power-of-
two denominator (a float is exactly such a fraction), so no order of addition rounds
differently. Shard counts travel as JSON (:meth:`GradeCounts.to_json`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist
from typing import Any

__all__ = ["Cells", "ExactSum", "GradeCounts", "cohen_kappa", "wilson"]


@dataclass
class ExactSum:
    """A sum of floats kept exactly: numerators by (power-of-two) denominator."""

    parts: dict[int, int] = field(default_factory=dict)

    def add(self, x: float) -> None:
        num, den = float(x).as_integer_ratio()
        self.parts[den] = self.parts.get(den, 0) + num

    def merge(self, other: ExactSum) -> None:
        for den, num in other.parts.items():
            self.parts[den] = self.parts.get(den, 0) + num

    def exact(self) -> Fraction:
        return sum((Fraction(num, den) for den, num in self.parts.items()), Fraction(0))

    def value(self) -> float:
        """The sum, rounded once."""
        return float(self.exact())


@dataclass
class Cells:
    """A 2x2 table of two yes/no answers: ``both``, ``first`` only, ``second`` only,
    ``neither``."""

    both: int = 0
    first: int = 0
    second: int = 0
    neither: int = 0

    def add(self, a: bool, b: bool) -> None:
        if a and b:
            self.both += 1
        elif a:
            self.first += 1
        elif b:
            self.second += 1
        else:
            self.neither += 1

    def merge(self, other: Cells) -> None:
        self.both += other.both
        self.first += other.first
        self.second += other.second
        self.neither += other.neither

    @property
    def n(self) -> int:
        return self.both + self.first + self.second + self.neither

    def figures(self) -> dict[str, Any]:
        n = self.n
        agree = (self.both + self.neither) / n if n else None
        cells = {"both": self.both, "first": self.first, "second": self.second,
                 "neither": self.neither}  # fmt: skip
        return {"n": n, "agreement": agree, "kappa": cohen_kappa(self), **cells}


@dataclass
class KeyCounts:
    """One key's counts."""

    checked: int = 0
    met: int = 0
    errors: int = 0
    score: ExactSum = field(default_factory=ExactSum)
    score_sq: ExactSum = field(default_factory=ExactSum)

    def merge(self, other: KeyCounts) -> None:
        self.checked += other.checked
        self.met += other.met
        self.errors += other.errors
        self.score.merge(other.score)
        self.score_sq.merge(other.score_sq)


@dataclass
class GradeCounts:
    """The sufficient counts of graded rows (see the module docstring).

    Add rows with :meth:`add_row` (a row as :class:`GradeBatch` writes it, as a
    dict), merge shards with :meth:`merge`, and read the figures with
    :meth:`figures`.
    """

    n: int = 0
    accepted: int = 0
    keys: dict[str, KeyCounts] = field(default_factory=dict)
    overall: ExactSum = field(default_factory=ExactSum)
    overall_sq: ExactSum = field(default_factory=ExactSum)
    overall_n: int = 0
    shadows: dict[str, Cells] = field(default_factory=dict)
    labels: dict[str, Cells] = field(default_factory=dict)
    clusters: dict[str, dict[str, int]] = field(default_factory=dict)
    judge_requests: int = 0
    judge_cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: ExactSum = field(default_factory=ExactSum)
    cost_unknown: int = 0

    def add_row(
        self,
        row: Mapping[str, Any],
        *,
        labels: Mapping[str, Any] | None = None,
        cluster: Any = None,
    ) -> None:
        """Count one graded row; ``labels`` (key -> a person's met / not met) and
        ``cluster`` (the row's cluster value) when the figures should use them."""
        self.n += 1
        self.accepted += bool(row["accepted"])
        met, status, scores = row["criteria_met"], row["status"], row["scores"]
        for key in status:
            k = self.keys.setdefault(key, KeyCounts())
            if status[key] == "not_checked":
                continue
            k.checked += 1
            k.met += bool(met[key])
            k.errors += status[key] == "error"
            k.score.add(scores[key])
            k.score_sq.add(scores[key] * scores[key])
        if row.get("overall_score") is not None:
            self.overall_n += 1
            self.overall.add(row["overall_score"])
            self.overall_sq.add(row["overall_score"] ** 2)
        for key, side in (row.get("shadows") or {}).items():
            if side and side.get("status") == "ok":
                self.shadows.setdefault(key, Cells()).add(
                    bool(side["primary"]), bool(side["shadow"])
                )
        for key, label in (labels or {}).items():
            if isinstance(label, bool) and key in met and status.get(key) != "not_checked":
                self.labels.setdefault(key, Cells()).add(bool(met[key]), label)
        if cluster is not None:
            self._add_cluster(str(cluster), row, met, status)
        self._add_judge(row)

    def _add_cluster(
        self, cluster: str, row: Mapping[str, Any], met: Mapping[str, Any], status: Any
    ) -> None:
        c = self.clusters.setdefault(cluster, {})
        c["n"] = c.get("n", 0) + 1
        c["accepted"] = c.get("accepted", 0) + bool(row["accepted"])
        for key in status:
            if status[key] != "not_checked":
                c[f"checked:{key}"] = c.get(f"checked:{key}", 0) + 1
                c[f"met:{key}"] = c.get(f"met:{key}", 0) + bool(met[key])

    def _add_judge(self, row: Mapping[str, Any]) -> None:
        self.judge_requests += int(row.get("judge_requests") or 0)
        self.judge_cached += bool(row.get("judge_cached"))
        self.input_tokens += int(row.get("input_tokens") or 0)
        self.output_tokens += int(row.get("output_tokens") or 0)
        if row.get("cost_usd") is None:
            self.cost_unknown += 1
        else:
            self.cost.add(row["cost_usd"])

    def merge(self, other: GradeCounts) -> GradeCounts:
        """Add ``other``'s counts to these (returns self)."""
        self.n += other.n
        self.accepted += other.accepted
        for key, k in other.keys.items():
            self.keys.setdefault(key, KeyCounts()).merge(k)
        self.overall.merge(other.overall)
        self.overall_sq.merge(other.overall_sq)
        self.overall_n += other.overall_n
        for mine, theirs in ((self.shadows, other.shadows), (self.labels, other.labels)):
            for key, cells in theirs.items():
                mine.setdefault(key, Cells()).merge(cells)
        for name, counts in other.clusters.items():
            c = self.clusters.setdefault(name, {})
            for what, value in counts.items():
                c[what] = c.get(what, 0) + value
        self.judge_requests += other.judge_requests
        self.judge_cached += other.judge_cached
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost.merge(other.cost)
        self.cost_unknown += other.cost_unknown
        return self

    @classmethod
    def merged(cls, shards: Iterable[GradeCounts]) -> GradeCounts:
        """The counts of every shard together."""
        total = cls()
        for shard in shards:
            total.merge(shard)
        return total

    def figures(self, level: float = 0.95) -> dict[str, Any]:
        """The run's figures: ``{"n", "accepted": {"rate", "ci", "n"}, "keys": {KEY:
        {"rate", "ci", "n", "met", "errors", "mean_score", "sd_score"}}, "level",
        "overall_score", "shadows", "labels", "judge"}``; with clusters, each rate's
        ``ci`` is widened for them (``"clusters"`` says how many)."""
        if not 0 < level < 1:
            raise ValueError(f"level must be between 0 and 1, not {level!r}")
        clustered = len(self.clusters) > 1
        accepted = self._rate(self.accepted, self.n, level, "accepted" if clustered else None)
        keys = {}
        for key, k in self.keys.items():
            keys[key] = {
                **self._rate(k.met, k.checked, level, f"met:{key}" if clustered else None),
                "met": k.met,
                "errors": k.errors,
                **_moments(k.score, k.score_sq, k.checked, "score"),
            }
        out: dict[str, Any] = {
            "n": self.n,
            "accepted": accepted,
            "keys": keys,
            "level": level,
            "overall_score": _moments(self.overall, self.overall_sq, self.overall_n, "score"),
            "shadows": {k: c.figures() for k, c in self.shadows.items()},
            "labels": {k: c.figures() for k, c in self.labels.items()},
            "judge": {
                "requests": self.judge_requests,
                "cached": self.judge_cached,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": None if self.cost_unknown else self.cost.value(),
            },
        }
        if clustered:
            out["clusters"] = len(self.clusters)
        return out

    def _rate(self, hits: int, n: int, level: float, cluster_field: str | None) -> dict[str, Any]:
        rate = hits / n if n else None
        effective = float(n)
        if cluster_field is not None and n:
            effective = self._effective_n(hits, n, cluster_field)
        return {"rate": rate, "ci": wilson(hits, n, level, effective), "n": n}

    def _effective_n(self, hits: int, n: int, what: str) -> float:
        """``n`` shrunk by the design effect of the clusters (cluster-robust variance
        of the rate over its simple-random-sampling variance), never above ``n``."""
        p = hits / n
        checked = "n" if what == "accepted" else "checked:" + what.split(":", 1)[1]
        totals = [(c.get(what, 0), c.get(checked, 0)) for c in self.clusters.values()]
        totals = [(m, t) for m, t in totals if t]
        g = len(totals)
        if g < 2 or p in (0.0, 1.0):
            return float(n)
        # fsum is correctly rounded: the same figure whatever order the clusters merged in
        robust = g / (g - 1) * math.fsum((m - p * t) ** 2 for m, t in totals) / n**2
        simple = p * (1 - p) / n
        return float(n) / max(1.0, robust / simple)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (sums as exact numerators by denominator)."""
        return {
            "n": self.n,
            "accepted": self.accepted,
            "keys": {
                key: {
                    "checked": k.checked,
                    "met": k.met,
                    "errors": k.errors,
                    "score": _sum_json(k.score),
                    "score_sq": _sum_json(k.score_sq),
                }
                for key, k in self.keys.items()
            },
            "overall": _sum_json(self.overall),
            "overall_sq": _sum_json(self.overall_sq),
            "overall_n": self.overall_n,
            "shadows": {k: dict(c.__dict__) for k, c in self.shadows.items()},
            "labels": {k: dict(c.__dict__) for k, c in self.labels.items()},
            "clusters": self.clusters,
            "judge": [
                self.judge_requests,
                self.judge_cached,
                self.input_tokens,
                self.output_tokens,
                self.cost_unknown,
            ],
            "cost": _sum_json(self.cost),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GradeCounts:
        """Read back :meth:`to_json`."""
        out = cls(n=data["n"], accepted=data["accepted"], overall_n=data["overall_n"])
        for key, k in data["keys"].items():
            out.keys[key] = KeyCounts(
                k["checked"], k["met"], k["errors"], _sum_of(k["score"]), _sum_of(k["score_sq"])
            )
        out.overall, out.overall_sq = _sum_of(data["overall"]), _sum_of(data["overall_sq"])
        out.shadows = {k: Cells(**c) for k, c in data["shadows"].items()}
        out.labels = {k: Cells(**c) for k, c in data["labels"].items()}
        out.clusters = {k: dict(c) for k, c in data["clusters"].items()}
        (out.judge_requests, out.judge_cached, out.input_tokens, out.output_tokens,
         out.cost_unknown) = data["judge"]  # fmt: skip
        out.cost = _sum_of(data["cost"])
        return out


def _sum_json(s: ExactSum) -> dict[str, int]:
    return {str(den): num for den, num in s.parts.items()}


def _sum_of(data: Mapping[str, int]) -> ExactSum:
    return ExactSum({int(den): int(num) for den, num in data.items()})


def _moments(total: ExactSum, squares: ExactSum, n: int, what: str) -> dict[str, Any]:
    if not n:
        return {f"mean_{what}": None, f"sd_{what}": None}
    mean = total.exact() / n
    var = (squares.exact() - n * mean * mean) / (n - 1) if n > 1 else Fraction(0)
    return {f"mean_{what}": float(mean), f"sd_{what}": math.sqrt(max(0.0, float(var)))}


def wilson(hits: int, n: int, level: float = 0.95, effective_n: float | None = None) -> list[float]:
    """The Wilson score interval of ``hits`` in ``n`` (``[0, 1]`` for no trials);
    ``effective_n`` replaces ``n`` in the width (a design effect for clusters)."""
    if not n:
        return [0.0, 1.0]
    p = hits / n
    m = float(n if effective_n is None else effective_n)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    # at 0 or n hits the bound is exactly 0 or 1 (the formula's rounding leaves ~1e-17)
    low = 0.0 if hits == 0 else max(0.0, centre - half)
    high = 1.0 if hits == n else min(1.0, centre + half)
    return [low, high]


def cohen_kappa(cells: Cells) -> float | None:
    """Cohen's kappa of a 2x2 table (None when undefined: no rows, or chance
    agreement of 1)."""
    n = cells.n
    if not n:
        return None
    observed = (cells.both + cells.neither) / n
    first_yes = (cells.both + cells.first) / n
    second_yes = (cells.both + cells.second) / n
    chance = first_yes * second_yes + (1 - first_yes) * (1 - second_yes)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)
