"""Where the noise comes from: the judge, the generator, or the items.

With repeated judge samples of each draft (``samples=k``), several drafts per item
(task) and several items, a key's sampled answers (met = 1, not met = 0; a scored
key's sampled scores) follow the nested random-effects model

    x[item, draft, sample] = mean + item effect + draft effect + judge noise,

and the method of moments (the nested ANOVA, unbalanced form of Searle, Casella and
McCulloch 1992, section 4.5) estimates each part's variance. A negative estimate is
set to 0 (the data cannot tell that part from none).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import InputError
from ._rows import GradedRow

__all__ = ["VarianceShares", "nested_anova", "variance_shares"]


@dataclass(frozen=True)
class VarianceShares:
    """One key's variance components (``judge``, ``generator``, ``items``; each >= 0)
    and the data behind them: ``samples`` answers of ``drafts`` drafts in ``groups``
    items. :attr:`shares` gives each part's share of the total."""

    judge: float
    generator: float
    items: float
    samples: int
    drafts: int
    groups: int

    @property
    def shares(self) -> dict[str, float | None]:
        """Each part over the sum of the three (None when all are 0)."""
        total = self.judge + self.generator + self.items
        parts = {"judge": self.judge, "generator": self.generator, "items": self.items}
        return {k: (v / total if total > 0 else None) for k, v in parts.items()}

    def to_json(self) -> dict[str, Any]:
        """``{"shares": {...}, "components": {...}, "samples", "drafts", "groups"}``."""
        return {
            "shares": {k: None if v is None else round(v, 4) for k, v in self.shares.items()},
            "components": {
                "judge": round(self.judge, 6),
                "generator": round(self.generator, 6),
                "items": round(self.items, 6),
            },
            "samples": self.samples,
            "drafts": self.drafts,
            "groups": self.groups,
        }


Draft = tuple[int, Fraction, Fraction]  # samples, sum, sum of squares


def nested_anova(groups: list[list[Draft]]) -> tuple[Fraction, Fraction, Fraction]:
    """The sums of squares of the nested design: between items, between drafts within
    an item, and between samples within a draft (exact)."""
    drafts = [d for g in groups for d in g]
    n = sum(k for k, _, _ in drafts)
    grand = sum((s for _, s, _ in drafts), Fraction(0))
    within_draft = sum((s * s / k for k, s, _ in drafts), Fraction(0))
    within_group = sum(
        (sum((s for _, s, _ in g), Fraction(0)) ** 2 / sum(k for k, _, _ in g) for g in groups),
        Fraction(0),
    )
    squares = sum((q for _, _, q in drafts), Fraction(0))
    return within_group - grand * grand / n, within_draft - within_group, squares - within_draft


def _components(groups: list[list[Draft]]) -> VarianceShares | None:
    drafts = [d for g in groups for d in g]
    n, d, t = sum(k for k, _, _ in drafts), len(drafts), len(groups)
    if t < 2 or d <= t or n <= d:
        return None  # a part cannot be told from the next: no split
    ss_items, ss_gen, ss_judge = nested_anova(groups)
    ms_items, ms_gen, ms_judge = ss_items / (t - 1), ss_gen / (d - t), ss_judge / (n - d)
    per_group = [sum(Fraction(k * k) for k, _, _ in g) / sum(k for k, _, _ in g) for g in groups]
    c1 = (n - sum(per_group)) / (d - t)
    c2 = (sum(per_group) - sum(Fraction(k * k) for k, _, _ in drafts) / n) / (t - 1)
    c3 = (n - sum(Fraction(sum(k for k, _, _ in g) ** 2) for g in groups) / n) / (t - 1)
    judge = ms_judge
    generator = (ms_gen - ms_judge) / c1
    items = (ms_items - ms_judge - c2 * generator) / c3
    return VarianceShares(
        float(judge) if judge > 0 else 0.0,
        float(generator) if generator > 0 else 0.0,
        float(items) if items > 0 else 0.0,
        n,
        d,
        t,
    )


def variance_shares(rows: Iterable[GradedRow], *, group: str = "task") -> dict[str, VarianceShares]:
    """Per key with repeated samples, the judge's, the generator's and the items'
    variance (items: the values of metadata field ``group``, by default the task).
    Keys whose design cannot separate the three (one item, one draft an item, one
    sample a draft) are left out, and so is everything when a draft has no ``group``."""
    per_key: dict[str, dict[str, list[Draft]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.accepted is None:
            continue
        try:
            item = row.cluster(group)
        except InputError:
            return {}
        for name, k in row.keys.items():
            values = [Fraction(int(v)) for v in k.votes] or [Fraction(v) for v in k.scores]
            if values:
                draft = (
                    len(values),
                    sum(values, Fraction(0)),
                    sum((v * v for v in values), Fraction(0)),
                )
                per_key[name][item].append(draft)
    out = {}
    for name in sorted(per_key):
        shares = _components(list(per_key[name].values()))
        if shares is not None:
            out[name] = shares
    return out
