"""A graded shard's counts, merged exactly into the whole run's figures.

The grading figures are :mod:`gradeloop.stats`'s: each shard (a batch, a partition, a
machine) keeps a :class:`~gradeloop.stats.RunTally` of the rows it graded, read from
each row's evaluation JSON as ``gradeloop summarize`` reads a draft, and the driver
adds the tallies and asks :func:`~gradeloop.stats.summarize` for the figures. A tally
holds integers and exact fractions, so shards merged in any order give exactly the
tally, and so the intervals (clustered ones included), of one machine grading the
same drafts.

Beside the tally a shard keeps what a tally does not hold because it is no part of a
graded draft: per key the four cells of the verdict against a person's label (from
a labels column: verdict and label met, neither, verdict only, label only), and the
judge's requests, tokens and dollars (from the row's judge columns).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...errors import InputError
from ...stats import GradedRow, RunTally, kappa_interval, summarize, wilson

__all__ = ["GradeCounts"]

Cells = tuple[int, int, int, int]  # both met, both not, verdict only, label only


def _cell(verdict: bool, label: bool) -> Cells:
    index = (0 if verdict == label else 2) + (0 if verdict else 1)
    return tuple(int(i == index) for i in range(4))  # type: ignore[return-value]


def _add(a: Cells, b: Cells) -> Cells:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def _added(a: Mapping[str, Cells], b: Mapping[str, Cells]) -> dict[str, Cells]:
    out = dict(a)
    for key, cells in b.items():
        out[key] = _add(out[key], cells) if key in out else cells
    return {k: out[k] for k in sorted(out)}  # one order whatever the merge order


@dataclass(frozen=True)
class GradeCounts:
    """The sufficient counts of graded rows: ``tally`` (a
    :class:`~gradeloop.stats.RunTally`, clustered by the cluster column when there is
    one), ``labels`` (per key the cells of the verdict against a person's label) and
    the judge's totals. Count rows with :meth:`of`, add shards with ``+`` (or
    :meth:`merged`), read the figures with :meth:`figures`; :meth:`to_json` and
    :meth:`from_json` carry counts between processes exactly."""

    tally: RunTally = field(default_factory=RunTally)
    labels: Mapping[str, Cells] = field(default_factory=dict)
    judge_requests: int = 0
    judge_cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Fraction = Fraction(0)
    cost_unknown: int = 0  # rows whose price is unknown: the sum is unknown

    @property
    def drafts(self) -> int:
        """Rows counted."""
        return self.tally.drafts

    @property
    def accepted(self) -> int:
        """Rows the gate accepted."""
        return self.tally.accepted

    @property
    def graded(self) -> int:
        """Rows graded (failed ones, whose judge never answered, left out)."""
        return self.tally.graded

    @classmethod
    def of(
        cls,
        rows: Iterable[Mapping[str, Any]],
        *,
        cluster_column: str | None = None,
        labels_column: str | None = None,
        id_column: str = "id",
    ) -> GradeCounts:
        """The counts of ``rows`` as :class:`GradeBatch` writes them (the
        ``evaluation`` JSON and the judge's columns, beside the input's columns).
        ``cluster_column`` names the column whose values group the rows
        (cluster-robust intervals; every row needs a value), ``labels_column`` the
        column of a person's labels (key -> met / not met) to hold the verdicts
        against."""
        graded: list[GradedRow] = []
        cells: dict[str, Cells] = {}
        requests = cached = tokens_in = tokens_out = unknown = 0
        cost = Fraction(0)
        for i, row in enumerate(rows):
            graded.append(_graded(row, i, cluster_column, id_column))
            labels = row.get(labels_column) if labels_column else None
            for key, c in _label_cells(graded[-1], labels):
                cells[key] = _add(cells[key], c) if key in cells else c
            requests += int(row.get("judge_requests") or 0)
            cached += bool(row.get("judge_cached"))
            tokens_in += int(row.get("input_tokens") or 0)
            tokens_out += int(row.get("output_tokens") or 0)
            if row.get("cost_usd") is None:
                unknown += 1
            else:
                cost += Fraction(row["cost_usd"])
        return cls(
            RunTally.of(graded, cluster=cluster_column),
            {k: cells[k] for k in sorted(cells)},
            requests, cached, tokens_in, tokens_out, cost, unknown,
        )  # fmt: skip

    def merge(self, other: GradeCounts) -> GradeCounts:
        """The counts of both shards (exact, in any order and grouping)."""
        return GradeCounts(
            self.tally + other.tally,
            _added(self.labels, other.labels),
            self.judge_requests + other.judge_requests,
            self.judge_cached + other.judge_cached,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
            self.cost_unknown + other.cost_unknown,
        )

    __add__ = merge

    @classmethod
    def merged(
        cls, shards: Iterable[GradeCounts], *, cluster_column: str | None = None
    ) -> GradeCounts:
        """The counts of every shard together; ``cluster_column`` is the one the
        shards were counted with (shards of another are refused)."""
        total = cls(RunTally(cluster_column))
        for shard in shards:
            total = total + shard
        return total

    def figures(self, level: float = 0.95) -> dict[str, Any]:
        """The figures of :func:`gradeloop.stats.summarize` on the tally (its
        ``to_json()``: rates with Wilson intervals, cluster-robust ones with a
        cluster column, the scores' means with t intervals, the shadows' agreement
        and kappa), per key ``"labels"`` (the verdicts' agreement with the labels
        and kappa, with intervals) where there are labels, and ``"judge"`` (requests,
        cached, tokens, dollars)."""
        out = summarize(self.tally, level=level).to_json()
        for key, cells in self.labels.items():
            if any(cells) and key in out["keys"]:
                both, neither, verdict_only, label_only = cells
                out["keys"][key]["labels"] = {
                    "agreement": wilson(both + neither, sum(cells), level).to_json("rate"),
                    "kappa": kappa_interval(both, neither, verdict_only, label_only, level)
                    .to_json("kappa"),
                }  # fmt: skip
        out["judge"] = {
            "requests": self.judge_requests,
            "cached": self.judge_cached,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost_unknown else float(self.cost_usd),
        }
        return out

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (fractions as ``"p/q"`` strings, so nothing is rounded)."""
        return {
            "tally": self.tally.to_json(),
            "labels": {key: list(cells) for key, cells in self.labels.items()},
            "judge": [self.judge_requests, self.judge_cached, self.input_tokens,
                      self.output_tokens, str(self.cost_usd), self.cost_unknown],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GradeCounts:
        """Read back :meth:`to_json`."""
        requests, cached, tokens_in, tokens_out, cost, unknown = data["judge"]
        return cls(
            RunTally.from_json(data["tally"]),
            {key: tuple(int(x) for x in cells) for key, cells in data["labels"].items()},  # type: ignore[misc]
            int(requests),
            int(cached),
            int(tokens_in),
            int(tokens_out),
            Fraction(cost),
            int(unknown),
        )


def _graded(row: Mapping[str, Any], index: int, cluster: str | None, id_column: str) -> GradedRow:
    """One row's draft as the statistics read it (its evaluation JSON, as
    :meth:`GradedRow.from_evaluation` reads the same draft on one machine)."""
    evaluation = json.loads(row["evaluation"])
    ident = row.get(id_column)
    if ident is None:
        ident = evaluation.get("output_id") or str(index)
    metadata = {}
    if cluster is not None:
        if row.get(cluster) is None:
            raise InputError(
                f"row {ident}: no value in the cluster column {cluster!r}; give every row "
                "one (count_output(folder, cluster_column=...) counts a folder again)"
            )
        metadata[cluster] = row[cluster]
    data = {**evaluation, "id": str(ident), "metadata": metadata}
    return GradedRow.from_json(data, where=f"row {ident}")


def _label_cells(row: GradedRow, labels: Any) -> Iterable[tuple[str, Cells]]:
    """The verdict against the label, for each key with both an answer and a label."""
    if row.accepted is None or not isinstance(labels, Mapping):
        return
    for key, outcome in row.keys.items():
        label = labels.get(key)
        if outcome.met is not None and isinstance(label, bool):
            yield key, _cell(outcome.met, label)
