"""``gradeloop grade --drafts FILE.jsonl``: many drafts, graded concurrently.

The JSONL format is the one ``compare`` reads (``{"id"?, "task"?, "draft"}`` per
line). ``--json`` prints one evaluation per line, in input order, with the draft's
id; otherwise a table and the totals (judge calls, cache reuse, tokens, dollars).
Exit 0 when every draft is accepted, 1 when any is not, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from ..bulk._many import grade_many
from ..errors import InputError
from ..grading._grade import Evaluation
from ..grading._rubric import Rubric
from ..grading._shadow import judge_request
from ..history._grading import GradedDraft
from ..migration._jsonl import DraftItem, read_drafts
from ._io import console, read_task
from ._models import build_judge, model_configured, require_model
from ._record import record_grading


def run(args: argparse.Namespace) -> int:
    """Grade every draft of ``--drafts``; the exit code."""
    rubric = Rubric.load(args.rubric)
    asked = judge_request(rubric) and not args.code_only
    task = read_task(args.task, args.task_file)
    given_task = args.task is not None or args.task_file is not None
    # a task matters only to the judge: code-only grading needs none on each line
    items = read_drafts(args.drafts, default_task=task if given_task or not asked else None)
    judge = None
    if asked:
        if rubric.judge_keys:
            require_model(args, rubric.judge_keys, code_only_hint=True)
        if model_configured(args):
            judge = build_judge(args)
    if args.batch:
        return _batch(args, rubric, items, judge)
    evaluations = grade_many(
        items,
        rubric,
        judge=judge,
        concurrency=args.jobs,
        progress=not args.quiet,
        skip_judge=args.code_only,
    )
    record_grading(args, rubric, _graded(items, evaluations), origin="grade", judge=judge)
    print_results(args, items, evaluations)
    return 0 if all(e.accepted for e in evaluations) else 1


def print_results(
    args: argparse.Namespace, items: Sequence[DraftItem], evaluations: Sequence[Evaluation]
) -> None:
    """JSON Lines with --json (one evaluation per draft, with its id), else the table."""
    if args.json:
        for item, evaluation in zip(items, evaluations, strict=True):
            sys.stdout.write(json.dumps(_line(item, evaluation), ensure_ascii=False) + "\n")
    else:
        render_many(items, evaluations)


def _batch(
    args: argparse.Namespace, rubric: Rubric, items: Sequence[DraftItem], judge: object
) -> int:
    """Submit through the Message Batches API; wait and collect unless --no-wait."""
    from ..batches import submit
    from ..history._store import HistoryStore
    from ._batch import collect_and_show

    if judge is None:
        raise InputError(
            "--batch sends the judge's requests, and this rubric asks the judge nothing "
            "(or --code-only was given): grade without --batch"
        )
    with HistoryStore(args.db) as store:
        job = submit(items, rubric, judge=judge, store=store)  # type: ignore[arg-type]
        ids = ", ".join(job.batch_ids)
        print(
            f"gradeloop: submitted batch job {job.job_id} ({job.requests:,} requests; "
            f"batch {ids}); recorded in {store.path}",
            file=sys.stderr,
        )
        if args.no_wait:
            if args.json:
                sys.stdout.write(json.dumps(job.to_json()) + "\n")
            else:
                console().print(
                    f"collect it later: gradeloop batch collect {job.job_id}", markup=False
                )
            return 0
        args.wait = True
        return collect_and_show(args, store, job.job_id, judge)


def _line(item: DraftItem, evaluation: Evaluation) -> dict[str, object]:
    return {"id": item.output_id, **evaluation.to_json()}


def _graded(items: Sequence[DraftItem], evaluations: Sequence[Evaluation]) -> list[GradedDraft]:
    out = []
    for item, ev in zip(items, evaluations, strict=True):
        if ev.judge_error is not None:
            out.append(GradedDraft(item.output_id, item.draft, None, item.task, ev.judge_error))
        else:
            out.append(GradedDraft(item.output_id, item.draft, ev, item.task))
    return out


def render_many(items: Sequence[DraftItem], evaluations: Sequence[Evaluation]) -> None:
    """One row per draft, then the totals and what they cost."""
    out = console()
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("id", "result", "score", "failed keys", "judge", "cost"):
        table.add_column(column)
    for item, ev in zip(items, evaluations, strict=True):
        if ev.judge_error is not None:
            result = "JUDGE FAILED"
        else:
            result = "accepted" if ev.accepted else "NOT ACCEPTED"
        table.add_row(
            escape(item.output_id),
            result,
            f"{ev.overall_score:.2f}",
            escape(", ".join(ev.failed_keys) or "-"),
            _judge_cell(ev),
            _dollars(ev.judge_usage.cost_usd if ev.judge_usage is not None else 0.0),
        )
    out.print(table)
    for line in summary_lines(evaluations):
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
        f"\n{n} drafts: {accepted} accepted, {n - accepted} not"
        + (f" ({failed} with a failed judge)" if failed else ""),
        f"judge: {len(sent)} calls, {len(calls) - len(sent)} answered from the cache, "
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
        return "?"
    return f"${value:,.4f}" if value < 100 else f"${value:,.2f}"
