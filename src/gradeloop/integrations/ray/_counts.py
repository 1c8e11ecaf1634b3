"""Sufficient counts of a graded shard, merged exactly into a whole run's figures.

Each shard (a batch, a partition, a machine) keeps counts, never rates, read from
each row's evaluation JSON by the rules the statistics of ``gradeloop summarize``
use: drafts, failed ones (the judge never answered: left out of every rate) and
accepted ones; per key the met and unmet answers (a key not checked, or in error, has
no answer), the 0-10 score's count, sum and sum of squares, and the shadow's four
cells against the primary (both met, both not, primary only, shadow only); the
overall score's count, sum and squares; per cluster value the same totals; and, on
top, per key the four cells of the verdict against a person's label (verdict and
label met, neither, verdict only, label only) and the judge's requests, tokens and
dollars. Counts are integers and sums exact fractions, so shards merged in any order
give exactly one machine's counts, and the figures computed from them (rates, Wilson
intervals, kappa, means) are the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist
from typing import Any

__all__ = ["GradeCounts", "KeyCounts", "cohen_kappa", "wilson"]

Cells = tuple[int, int, int, int]  # both met, both not, first only, second only
_NO_CELLS: Cells = (0, 0, 0, 0)


def _cell(first: bool, second: bool) -> Cells:
    index = (0 if first == second else 2) + (0 if first else 1)
    return tuple(int(i == index) for i in range(4))  # type: ignore[return-value]


def _add(a: Cells, b: Cells) -> Cells:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


@dataclass
class KeyCounts:
    """One key's counts (see the module docstring)."""

    met: int = 0
    unmet: int = 0
    score_n: int = 0
    score_sum: Fraction = Fraction(0)
    score_sq: Fraction = Fraction(0)
    shadow: Cells = _NO_CELLS
    labels: Cells = _NO_CELLS

    @property
    def answered(self) -> int:
        return self.met + self.unmet

    def merge(self, other: KeyCounts) -> None:
        self.met += other.met
        self.unmet += other.unmet
        self.score_n += other.score_n
        self.score_sum += other.score_sum
        self.score_sq += other.score_sq
        self.shadow = _add(self.shadow, other.shadow)
        self.labels = _add(self.labels, other.labels)


@dataclass
class GradeCounts:
    """The sufficient counts of graded rows: add rows with :meth:`add_row`, shards
    with :meth:`merge`, read the figures with :meth:`figures`; :meth:`to_json` and
    :meth:`from_json` carry them between processes exactly."""

    drafts: int = 0
    failed: int = 0
    accepted: int = 0
    overall_n: int = 0
    overall_sum: Fraction = Fraction(0)
    overall_sq: Fraction = Fraction(0)
    keys: dict[str, KeyCounts] = field(default_factory=dict)
    # per cluster value: [drafts, accepted, {key: [met, answered]}]
    clusters: dict[str, list[Any]] = field(default_factory=dict)
    judge_requests: int = 0
    judge_cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Fraction = Fraction(0)
    cost_unknown: int = 0

    @property
    def graded(self) -> int:
        """Drafts graded (failed ones left out)."""
        return self.drafts - self.failed

    def add_row(
        self,
        row: Mapping[str, Any],
        *,
        labels: Mapping[str, Any] | None = None,
        cluster: Any = None,
    ) -> None:
        """Count one row as :class:`GradeBatch` writes it (its ``evaluation`` JSON and
        judge columns); ``labels`` (key -> a person's met / not met) and ``cluster``
        (the row's cluster value) when the figures should use them."""
        evaluation = json.loads(row["evaluation"])
        self.drafts += 1
        self._add_judge(row)
        if evaluation.get("judge_error") is not None:
            self.failed += 1
            return
        accepted = bool(evaluation["passed"])
        self.accepted += accepted
        answers: dict[str, bool] = {}
        for c in evaluation["criteria"]:
            k = self.keys.setdefault(c["name"], KeyCounts())
            if c.get("status") not in ("met", "failed"):
                continue
            met = answers[c["name"]] = bool(c["passed"])
            k.met += met
            k.unmet += not met
            if isinstance(c.get("score"), int | float):
                score = Fraction(c["score"])
                k.score_n += 1
                k.score_sum += score
                k.score_sq += score * score
            label = (labels or {}).get(c["name"])
            if isinstance(label, bool):
                k.labels = _add(k.labels, _cell(met, label))
        for s in evaluation.get("shadows") or ():
            primary, shadow = s["primary"].get("passed"), s["shadow"].get("passed")
            # as summarize counts them: a shadow of a key with an answer, both sides answered
            if s["key"] in answers and isinstance(primary, bool) and isinstance(shadow, bool):
                k = self.keys.setdefault(s["key"], KeyCounts())
                k.shadow = _add(k.shadow, _cell(primary, shadow))
        if isinstance(evaluation.get("overall_score"), int | float):
            overall = Fraction(evaluation["overall_score"])
            self.overall_n += 1
            self.overall_sum += overall
            self.overall_sq += overall * overall
        if cluster is not None:
            totals = self.clusters.setdefault(str(cluster), [0, 0, {}])
            totals[0] += 1
            totals[1] += accepted
            for key, met in answers.items():
                per = totals[2].setdefault(key, [0, 0])
                per[0] += met
                per[1] += 1

    def _add_judge(self, row: Mapping[str, Any]) -> None:
        self.judge_requests += int(row.get("judge_requests") or 0)
        self.judge_cached += bool(row.get("judge_cached"))
        self.input_tokens += int(row.get("input_tokens") or 0)
        self.output_tokens += int(row.get("output_tokens") or 0)
        if row.get("cost_usd") is None:
            self.cost_unknown += 1
        else:
            self.cost_usd += Fraction(row["cost_usd"])

    def merge(self, other: GradeCounts) -> GradeCounts:
        """Add ``other``'s counts to these (returns self)."""
        for name in ("drafts", "failed", "accepted", "overall_n", "overall_sum", "overall_sq",
                     "judge_requests", "judge_cached", "input_tokens", "output_tokens",
                     "cost_usd", "cost_unknown"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, k in other.keys.items():
            self.keys.setdefault(key, KeyCounts()).merge(k)
        for value, (drafts, accepted, per) in other.clusters.items():
            totals = self.clusters.setdefault(value, [0, 0, {}])
            totals[0] += drafts
            totals[1] += accepted
            for key, (met, answered) in per.items():
                mine = totals[2].setdefault(key, [0, 0])
                mine[0] += met
                mine[1] += answered
        return self

    @classmethod
    def merged(cls, shards: Iterable[GradeCounts]) -> GradeCounts:
        """The counts of every shard together."""
        total = cls()
        for shard in shards:
            total.merge(shard)
        return total

    def figures(self, level: float = 0.95) -> dict[str, Any]:
        """``{"n", "drafts", "failed", "level", "accepted": {"rate", "ci", "n"},
        "score": {"mean", "n"}, "keys": {KEY: {"rate", "ci", "n", ...}}, "judge"}``;
        per key also the score's mean, the shadow's and the labels' agreement and
        kappa where there are any. With clusters (``"clusters"``: how many) each
        rate's interval is widened by the clusters' design effect."""
        if not 0 < level < 1:
            raise ValueError(f"a confidence level is between 0 and 1 (e.g. 0.95), not {level!r}")
        clustered = len(self.clusters) > 1
        out: dict[str, Any] = {
            "n": self.graded,
            "drafts": self.drafts,
            "failed": self.failed,
            "level": level,
            "accepted": self._rate(self.accepted, self.graded, level, None, clustered),
            "score": _mean(self.overall_sum, self.overall_n),
            "keys": {},
            "judge": {
                "requests": self.judge_requests,
                "cached": self.judge_cached,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": None if self.cost_unknown else float(self.cost_usd),
            },
        }
        for key in sorted(self.keys):
            k = self.keys[key]
            figure = self._rate(k.met, k.answered, level, key, clustered)
            figure["score"] = _mean(k.score_sum, k.score_n)
            for name, cells in (("shadow", k.shadow), ("labels", k.labels)):
                if any(cells):
                    figure[name] = {"n": sum(cells), "agreement": (cells[0] + cells[1])
                                    / sum(cells), "kappa": cohen_kappa(cells)}  # fmt: skip
            out["keys"][key] = figure
        if clustered:
            out["clusters"] = len(self.clusters)
        return out

    def _rate(
        self, hits: int, n: int, level: float, key: str | None, clustered: bool
    ) -> dict[str, Any]:
        effective = self._effective_n(hits, n, key) if clustered and n else float(n)
        low_high = wilson(hits, n, level, effective) if n else None
        return {
            "rate": None if not n else round(hits / n, 4),
            "ci": None if low_high is None else [round(x, 4) for x in low_high],
            "n": n,
        }

    def _effective_n(self, hits: int, n: int, key: str | None) -> float:
        """``n`` shrunk by the design effect of the clusters (the cluster-robust
        variance of the rate over the simple one), never above ``n``."""
        p = hits / n
        if key is None:
            totals = [(c[1], c[0]) for c in self.clusters.values()]
        else:
            totals = [tuple(c[2][key]) for c in self.clusters.values() if key in c[2]]
        totals = [(m, t) for m, t in totals if t]
        g = len(totals)
        if g < 2 or p in (0.0, 1.0):
            return float(n)
        # fsum is correctly rounded: the same figure whatever order the clusters merged in
        robust = g / (g - 1) * math.fsum((m - p * t) ** 2 for m, t in totals) / n**2
        return float(n) / max(1.0, robust / (p * (1 - p) / n))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (fractions as ``"p/q"`` strings, so nothing is rounded)."""
        return {
            "counts": [
                self.drafts,
                self.failed,
                self.accepted,
                self.overall_n,
                self.judge_requests,
                self.judge_cached,
                self.input_tokens,
                self.output_tokens,
                self.cost_unknown,
            ],
            "sums": [str(self.overall_sum), str(self.overall_sq), str(self.cost_usd)],
            "keys": {
                key: [
                    k.met,
                    k.unmet,
                    k.score_n,
                    str(k.score_sum),
                    str(k.score_sq),
                    list(k.shadow),
                    list(k.labels),
                ]
                for key, k in self.keys.items()
            },
            "clusters": self.clusters,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GradeCounts:
        """Read back :meth:`to_json`."""
        out = cls()
        (out.drafts, out.failed, out.accepted, out.overall_n, out.judge_requests,
         out.judge_cached, out.input_tokens, out.output_tokens,
         out.cost_unknown) = data["counts"]  # fmt: skip
        out.overall_sum, out.overall_sq, out.cost_usd = (Fraction(x) for x in data["sums"])
        for key, (met, unmet, n, total, squares, shadow, labels) in data["keys"].items():
            out.keys[key] = KeyCounts(
                met, unmet, n, Fraction(total), Fraction(squares), tuple(shadow), tuple(labels)
            )
        out.clusters = {
            value: [drafts, accepted, {k: list(v) for k, v in per.items()}]
            for value, (drafts, accepted, per) in data["clusters"].items()
        }
        return out


def _mean(total: Fraction, n: int) -> dict[str, Any]:
    return {"mean": None if not n else round(float(total / n), 4), "n": n}


def wilson(hits: int, n: int, level: float = 0.95, effective_n: float | None = None) -> list[float]:
    """Wilson's score interval of ``hits`` in ``n`` (``[0, 1]`` for no trials; it
    always holds the estimate); ``effective_n`` replaces ``n`` in the width (a
    design effect for clusters)."""
    if not n:
        return [0.0, 1.0]
    p = hits / n
    m = float(n if effective_n is None else effective_n)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    # exactly 0 at 0 hits and 1 at n: the formula's rounding must not say otherwise
    return [max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))]


def cohen_kappa(cells: Cells) -> float | None:
    """Cohen's kappa of two yes/no answers from their cells (both yes, both no, first
    only, second only); None when undefined (no rows, or chance agreement of 1)."""
    both, neither, first, second = cells
    n = both + neither + first + second
    if not n:
        return None
    observed = (both + neither) / n
    first_yes, second_yes = (both + first) / n, (both + second) / n
    chance = first_yes * second_yes + (1 - first_yes) * (1 - second_yes)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)
