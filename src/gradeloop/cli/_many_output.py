"""Printing many evaluations: JSON Lines in input order, or a table and the totals."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from ..grading._grade import Evaluation
from ..grading._jsonout import dumps
from ..integrations import telemetry
from ..migration._jsonl import DraftItem
from ..stats import GradedRow, Interval, Summary, summarize
from ._io import console, plural
from ._reasons import reason_lines
from ._runs import check_level

__all__ = ["interval_lines", "print_results", "render_many", "summary_lines"]


def print_results(
    args: argparse.Namespace,
    items: Sequence[DraftItem],
    evaluations: Sequence[Evaluation],
    *,
    streamed: bool = False,
) -> None:
    """JSON Lines with --json (one evaluation per draft, with its id, unless they were
    ``streamed`` as the drafts were graded; with --summary a last line
    ``{"summary": ...}``, the figures with intervals), else the table."""
    summary = _summary(args, items, evaluations)
    if args.json:
        if not streamed:
            for item, evaluation in zip(items, evaluations, strict=True):
                sys.stdout.write(dumps(json_line(item, evaluation), ensure_ascii=False) + "\n")
        if getattr(args, "summary", False):
            sys.stdout.write(dumps({"summary": summary.to_json()}, ensure_ascii=False) + "\n")
    else:
        render_many(items, evaluations, summary)


def _summary(
    args: argparse.Namespace, items: Sequence[DraftItem], evaluations: Sequence[Evaluation]
) -> Summary:
    """The run's figures with intervals (--level, --cluster), also sent to OpenTelemetry."""
    rows = [
        GradedRow.from_evaluation(ev, id=item.output_id, task=_task(item), metadata=item.metadata)
        for item, ev in zip(items, evaluations, strict=True)
    ]
    summary = summarize(
        rows,
        level=check_level(getattr(args, "level", 0.95)),
        cluster=getattr(args, "cluster", None),
    )
    telemetry.evaluation_summary(summary, run_id=getattr(args, "run_id", None))
    return summary


def _task(item: DraftItem) -> str:
    return item.task if isinstance(item.task, str) else ""


def json_line(item: DraftItem, evaluation: Evaluation) -> dict[str, object]:
    """A draft's --json line: its id, its evaluation, and its metadata."""
    line: dict[str, object] = {"id": item.output_id, **evaluation.to_json()}
    if item.metadata:  # what `gradeloop summarize --cluster FIELD` groups the drafts by
        line["metadata"] = dict(item.metadata)
    return line


def render_many(
    items: Sequence[DraftItem], evaluations: Sequence[Evaluation], summary: Summary | None = None
) -> None:
    """One row per draft, then the totals with their intervals and what they cost."""
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
    lines = summary_lines(evaluations)
    if summary is not None:
        lines[1:1] = interval_lines(summary)
    for line in [*reason_lines(items, evaluations), *lines]:
        out.print(line, markup=False, soft_wrap=True)


def interval_lines(summary: Summary) -> list[str]:
    """The accepted rate and each key's met rate with their confidence intervals."""
    if summary.accepted.estimate is None:
        return []
    how = f"cluster-robust over {summary.cluster}" if summary.cluster else "Wilson"
    left_out = f"; {summary.failed} with a failed judge left out" if summary.failed else ""
    lines = [
        f"accepted: {_rate(summary.accepted)} ({summary.level * 100:g} % {how} interval{left_out})"
    ]
    keys = [
        f"{name} {_rate(k.rate)}" for name, k in summary.keys.items() if k.rate.estimate is not None
    ]
    if keys:
        lines.append("met: " + ", ".join(keys))
    return lines


def _rate(i: Interval) -> str:
    assert i.estimate is not None
    ci = "" if i.ci is None else f" [{i.ci[0] * 100:.1f}, {i.ci[1] * 100:.1f}]"
    return f"{i.estimate * 100:.1f} %{ci}"


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
