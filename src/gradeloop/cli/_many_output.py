"""Printing many evaluations: JSON Lines in input order, or a table and the totals."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from ..grading._grade import Evaluation
from ..grading._jsonout import dumps
from ..migration._jsonl import DraftItem
from ._io import console, plural
from ._reasons import reason_lines

__all__ = ["print_results", "render_many", "summary_lines"]


def print_results(
    args: argparse.Namespace, items: Sequence[DraftItem], evaluations: Sequence[Evaluation]
) -> None:
    """JSON Lines with --json (one evaluation per draft, with its id), else the table."""
    if args.json:
        for item, evaluation in zip(items, evaluations, strict=True):
            sys.stdout.write(dumps(_line(item, evaluation), ensure_ascii=False) + "\n")
    else:
        render_many(items, evaluations)


def _line(item: DraftItem, evaluation: Evaluation) -> dict[str, object]:
    return {"id": item.output_id, **evaluation.to_json()}


def render_many(items: Sequence[DraftItem], evaluations: Sequence[Evaluation]) -> None:
    """One row per draft, then the totals and what they cost."""
    out = console()
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("id", "result", "score", "failed keys", "judge", "cost"):
        table.add_column(column, overflow="fold")  # wrapped on a narrow terminal, never cut
    for item, ev in zip(items, evaluations, strict=True):
        if ev.judge_error is not None:
            result = "JUDGE FAILED"
        else:
            result = "accepted" if ev.accepted else "NOT ACCEPTED"
        table.add_row(
            escape(item.output_id),
            result,
            "-" if ev.overall_score is None else f"{ev.overall_score:.2f}",
            escape(", ".join(ev.failed_keys) or "-"),
            _judge_cell(ev),
            _dollars(ev.judge_usage.cost_usd if ev.judge_usage is not None else 0.0),
        )
    out.print(table)
    for line in [*reason_lines(items, evaluations), *summary_lines(evaluations)]:
        out.print(line, markup=False, soft_wrap=True)


def summary_lines(evaluations: Sequence[Evaluation]) -> list[str]:
    """The totals: drafts, accepted, judge calls and cache reuse, tokens, dollars."""
    n = len(evaluations)
    accepted = sum(e.accepted for e in evaluations)
    failed = sum(e.judge_error is not None for e in evaluations)
    calls = [c for e in evaluations for c in e.judge_calls]
    sent = [c for c in calls if not getattr(c, "cached", False)]
    tokens = sum(c.usage.total_input + c.usage.output_tokens for c in sent)
    cost: float | None = 0.0
    for c in sent:
        cost = None if cost is None or c.usage.cost_usd is None else cost + c.usage.cost_usd
    lines = [
        f"\n{plural(n, 'draft')}: {accepted} accepted, {n - accepted} not"
        + (f" ({failed} with a failed judge)" if failed else ""),
        f"judge: {plural(len(sent), 'call')}, {len(calls) - len(sent)} answered from the cache, "
        f"{tokens:,} tokens",
    ]
    if cost is None:
        lines.append(
            "cost: unknown (a model's price is not in the price table; see GRADELOOP_PRICES)"
        )
    else:
        per_draft = cost / n if n else 0.0
        per_accepted = _dollars(cost / accepted) if accepted else "- (none accepted)"
        lines.append(
            f"cost: {_dollars(cost)} total, {_dollars(per_draft)} a draft, "
            f"{per_accepted} an accepted draft"
        )
    return lines


def _judge_cell(ev: Evaluation) -> str:
    if not ev.judge_calls:
        return "-"
    if ev.judge_cached:
        return "cached"
    return f"{len(ev.judge_calls)} call" + ("s" if len(ev.judge_calls) != 1 else "")


def _dollars(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.4f}" if value < 100 else f"${value:,.2f}"
