"""``gradeloop align``: rewrite judge keys' descriptions to agree with people's labels,
keeping only the rewrites that raise agreement on drafts they were not shown."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from ..grading._rubric import Rubric
from ..migration._agreement import PassFailStats
from ..migration._align import AlignReport, align
from ..migration._jsonl import read_labels
from ..migration._rubric_write import check_target, write_rubric
from ._io import check_out, console, phase_line, plural, print_json, read_task, table
from ._models import (
    add_cache_options,
    add_jobs_option,
    add_model_options,
    build_judge,
    require_model,
)


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "align",
        help="rewrite judge keys' descriptions to agree with human labels (held-out tested)",
        description="For each judge key where the judge and the labels disagree, ask the "
        "judge's model for rewritten descriptions and examples (shown only the training half "
        "of a fixed random split of the labels), score each on the held-out half, and write --out "
        "with only the rewrites that raised held-out agreement. A key two labellers disagree "
        "on is reported as ambiguous, not rewritten. The input rubric is never overwritten. "
        "Exit 0 when the report was made, 2 for bad input.",
    )
    p.add_argument(
        "--labels",
        required=True,
        action="append",
        metavar="FILE",
        help="labels JSONL (calibrate's format; `gradeloop label` writes it); give it again "
        "with a second labeller's file to find ambiguous keys",
    )
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    p.add_argument("--task", metavar="TEXT", help="task for lines that have none")
    p.add_argument("--task-file", metavar="FILE", help="read that task from a file")
    p.add_argument("--key", action="append", metavar="KEY", help="align only this key (repeatable)")
    p.add_argument("--out", metavar="FILE", help="write the aligned rubric here (never the input)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="the number that fixes the random split: the same number, the same split (default 0)",
    )
    p.add_argument(
        "--holdout",
        type=float,
        default=0.5,
        metavar="SHARE",
        help="share of the labelled drafts held out to score rewrites (default 0.5)",
    )
    p.add_argument(
        "--proposals", type=int, default=3, metavar="N", help="rewrites asked per key (default 3)"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_model_options(p, generator=False)
    add_jobs_option(p)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    rubric = Rubric.load(args.rubric)
    check_out(args.out)
    if args.out is not None:
        check_target(args.rubric, args.out)
    default_task = None
    if args.task is not None or args.task_file is not None:
        default_task = read_task(args.task, args.task_file)
    items = read_labels(args.labels[0], rubric, default_task=default_task)
    others = [read_labels(path, rubric, default_task=default_task) for path in args.labels[1:]]
    require_model(args, rubric.judge_keys, code_only_hint=False)
    judge = build_judge(args)
    report = align(
        items,
        rubric,
        judge=judge,
        keys=args.key,
        others=others,
        seed=args.seed,
        heldout=args.holdout,
        proposals=args.proposals,
        jobs=args.jobs,
        on_phase=phase_line("align"),
    )
    written = None
    if args.out is not None and report.changes:
        written = str(write_rubric(args.rubric, args.out, report.changes))
    if args.json:
        print_json({**report.to_json(), "out": written})
    else:
        render(report, args.out, written)
    return 0


def _fig(s: PassFailStats | None) -> str:
    if s is None or s.agreement is None:
        return "-"
    kappa = "-" if s.kappa is None else f"{s.kappa:.2f}"
    return f"{s.agreement * 100:.0f}% (κ {kappa}, n {s.n})"


def render(report: AlignReport, out: str | None, written: str | None) -> None:
    """The before / after table, each kept rewrite, then where it went and the cost."""
    con = console()
    con.print(
        f"align: {plural(report.train, 'training draft')}, "
        f"{plural(report.heldout, 'held-out draft')} (seed {report.seed})",
        markup=False,
    )
    t = table("key", "status", "train before", "held-out before", "held-out after", "proposals")
    for k in report.keys:
        won = k.winner
        row = [
            k.key,
            k.status.replace("_", " "),
            _fig(k.train),
            _fig(k.heldout),
            _fig(won.heldout) if won else "-",
            str(len(k.candidates)),
        ]
        t.add_row(*(escape(x) for x in row))
    con.print(t)
    for k in report.keys:
        if k.note:
            con.print(f"  {k.key}: {k.note}", markup=False)
        for reason in k.dropped:
            con.print(f"  {k.key}: dropped {reason}", markup=False)
        won = k.winner
        if won:
            con.print(f"  {k.key}: new description: {won.rewrite.description}", markup=False)
    if written:
        con.print(f"wrote {written} ({', '.join(sorted(report.changes))} rewritten)", markup=False)
    elif report.changes:
        con.print("give --out FILE to write the aligned rubric", markup=False)
    elif out is not None:
        con.print(f"no rewrite raised held-out agreement: {out} not written", markup=False)
    usage = report.usage
    cost = (
        "$0"
        if usage is None
        else ("cost unknown" if usage.cost_usd is None else f"${usage.cost_usd:,.4f}")
    )
    tokens = 0 if usage is None else usage.total_input + usage.output_tokens
    con.print(f"judge: {tokens:,} tokens, {cost}", markup=False)
