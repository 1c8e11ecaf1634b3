"""``gradeloop calibrate``: how often does the judge (or a checker) agree with people?"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from ..grading._rubric import Rubric
from ..history._store import HistoryStore
from ..migration._calibrate import (
    MIN_LABELS,
    CalibrationReport,
    KeyCalibration,
    calibrate,
    needs_judge,
)
from ..migration._compare import rubric_label
from ..migration._jsonl import digest, read_labels
from ..migration._labellers import labeller_agreement
from ..migration._suggest import suggest_examples, suggestions_toml
from . import _calibrate_stats
from ._io import add_db_option, console, phase_line, plural, print_json, read_task
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
        "calibrate",
        help="agreement of the judge (and checkers) with human labels, run over run",
        description="Run the rubric on drafts people labelled and report, per key: "
        "agreement with the labels, Cohen's kappa (pass/fail keys) or mean absolute error "
        f"and correlation (scored keys), the number of labels (warning below {MIN_LABELS}), "
        "and the change since the previous run of the same rubric. Exit 0 when the report "
        "was made, 2 for bad input.",
    )
    p.add_argument(
        "labels",
        metavar="LABELS",
        nargs="+",
        help='a JSONL file of {"task", "draft", "labels": {key: true/false or '
        'a 1-10 score}} objects ("id" optional); a second file, from another labeller, '
        "adds the two labellers' agreement per key (the judge is calibrated on the first)",
    )
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    p.add_argument(
        "--name",
        metavar="NAME",
        help="group runs under this name (default: the rubric's name, else its "
        "file name); deltas are against the previous run of the same name",
    )
    p.add_argument("--task", metavar="TEXT", help="task for lines that have none")
    p.add_argument("--task-file", metavar="FILE", help="read that task from a file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--suggest-examples",
        action="store_true",
        help="also print, per judge key, the drafts where the judge disagreed with the "
        "labels, as rubric `examples` to paste (in --json: under 'suggested_examples')",
    )
    p.add_argument(
        "--examples-per-key",
        type=int,
        default=3,
        metavar="N",
        help="at most N suggested examples per key, shortest drafts first (default 3)",
    )
    add_db_option(p)
    p.add_argument(
        "--no-history",
        action="store_true",
        help="neither store this run nor compare it with the previous one",
    )
    _calibrate_stats.add_options(p)
    add_model_options(p, generator=False)
    add_jobs_option(p)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    rubric = Rubric.load(args.rubric)
    if args.examples_per_key < 1:
        raise InputError(f"--examples-per-key must be at least 1, not {args.examples_per_key}")
    default_task = None
    if args.task is not None or args.task_file is not None:
        default_task = read_task(args.task, args.task_file)
    to_correct = _calibrate_stats.run_to_correct(args)
    if len(args.labels) > 2:
        raise InputError(f"give one labels file, or two from two labellers, not {len(args.labels)}")
    items = read_labels(args.labels[0], rubric, default_task=default_task)
    second = (
        read_labels(args.labels[1], rubric, default_task=default_task)
        if len(args.labels) == 2
        else None
    )
    judge = None
    if needs_judge(rubric, items):
        require_model(args, _judge_keys(rubric, items), code_only_hint=False, rubric=rubric)
        judge = build_judge(args, rubric)
    name = args.name or rubric_label(rubric)
    store = None if args.no_history else HistoryStore(args.db)
    try:
        previous = store.latest_calibration(name) if store is not None else None
        asked = "the judge and the checkers" if judge is not None else "the checkers"
        phase_line("calibrate")(f"grading {plural(len(items), 'labelled draft')} with {asked}")
        report = calibrate(items, rubric, judge=judge, name=name, previous=previous, jobs=args.jobs)
        report.labels_path = str(Path(args.labels[0]))
        report.labels_digest = digest(args.labels[0])
        if second is not None:
            agreement = labeller_agreement(items, second, rubric)
            report.inter_annotator = {
                "labels_path": str(Path(args.labels[1])),
                "keys": {k: a.to_json() for k, a in agreement.items()},
            }
        if store is not None:
            store.add_calibration(report.to_json())
    finally:
        if store is not None:
            store.close()
    for warning in report.fingerprint_warnings:
        print(f"gradeloop: warning: {warning}", file=sys.stderr)
    suggested = None
    if args.suggest_examples:
        suggested = suggest_examples(rubric, report.disagreements, per_key=args.examples_per_key)
    extra = _calibrate_stats.figures(report, to_correct, args.level)
    if args.json:
        out = report.to_json()
        _calibrate_stats.merge_json(out, extra)
        if suggested is not None:
            out["suggested_examples"] = suggested
        print_json(out)
        return 0
    render(report)
    _calibrate_stats.render(report, extra)
    if suggested is not None:
        _suggestions(suggested)
    return 0


def _suggestions(suggested: dict[str, Any]) -> None:
    out = console()
    if not suggested:
        out.print("\nno suggested examples: the judge agreed with every label", markup=False)
        return
    out.print(
        "\nsuggested examples (drafts where the judge disagreed with the labels; "
        "edit each `why`, then paste into the criterion):\n",
        markup=False,
    )
    out.print(suggestions_toml(suggested), markup=False, soft_wrap=True, end="")


def _judge_keys(rubric: Rubric, items: Any) -> list[str]:
    labelled = {k for item in items for k in item.labels}
    return [
        c.key
        for c in rubric
        if c.key in labelled and (c.source == "judge" or c.shadow_source == "judge")
    ]


def _cost(report: CalibrationReport, usage: Any) -> str:
    """What the judge cost, saying so when verdicts came from the verdict cache (a
    cached verdict costs nothing: 0 tokens then means reuse, not a free judge)."""
    spent = "cost unknown" if usage.cost_usd is None else f"${usage.cost_usd:,.4f}"
    per = (
        ""
        if usage.cost_usd is None or not report.items
        else f", ${usage.cost_usd / report.items:,.4f} a draft"
    )
    text = f"{usage.total_input + usage.output_tokens:,} tokens, {spent}{per}"
    calls, cached = report.judge_calls, report.judge_cached
    if cached and cached == calls:
        return f"{text}: all {plural(calls, 'verdict')} from the verdict cache"
    if cached:
        return f"{text}; {cached:,} of {plural(calls, 'verdict')} from the verdict cache"
    return text


def render(report: CalibrationReport) -> None:
    """The per-key table, the warnings, then what changed since the previous run."""
    out = console()
    judge = f", judge {report.judge_model}" if report.judge_model else ""
    usage = report.judge_usage
    if usage is not None:
        judge += f" ({_cost(report, usage)})"
    out.print(
        f"calibration {report.run_id}: rubric {report.rubric_name}, "
        f"{plural(report.items, 'labelled draft')}{judge}",
        markup=False,
    )
    for output_id, error in report.judge_failures:
        out.print(
            f"  judge failed on {output_id}: {error} (the judge's labels on it go unrated)",
            markup=False,
        )
    out.print()
    out.print(_table(report))
    notes = [
        f"{k.key} ({k.rated_by}): {n}"
        for k in report.keys
        for n in (k.stats.kappa_note, k.scores.correlation_note if k.scores else None)
        if n
    ]
    for note in dict.fromkeys(notes):
        out.print(f"  note: {note}", markup=False)
    few: dict[int, list[str]] = {}  # one line per count, not one per key
    for k in report.keys:
        if k.warning:
            few.setdefault(k.rated, []).append(f"{k.key} ({k.rated_by})")
    for n, names in few.items():
        out.print(
            f"  warning: only {plural(n, 'labelled draft')} for {', '.join(names)}; about "
            f"{MIN_LABELS} are needed before trusting these figures",
            markup=False,
        )
    _labellers(report)
    _previous(report)


def _labellers(report: CalibrationReport) -> None:
    """The two labellers' agreement per key, beside the judge's agreement with the first."""
    if report.inter_annotator is None:
        return
    out = console()
    keys: dict[str, Any] = report.inter_annotator["keys"]
    out.print(
        f"\nlabellers: {report.labels_path} against {report.inter_annotator['labels_path']}",
        markup=False,
    )
    if not keys:
        out.print("  no draft was labelled on the same key in both files", markup=False)
        return
    judged = {k.key: k for k in report.keys if k.role == "primary"}
    t = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("key", "both labelled", "labellers agree", "labellers' kappa", "judge's kappa"):
        t.add_column(column, overflow="fold")
    for key, figures in keys.items():
        own = judged.get(key)
        t.add_row(
            *(
                escape(x)
                for x in (
                    key + (" (ambiguous)" if figures["ambiguous"] else ""),
                    str(figures["n"]),
                    _pct(figures["agreement"]),
                    _num(figures["kappa"]),
                    _num(own.stats.kappa) if own is not None else "-",
                )
            )
        )
    out.print(t)
    for key, figures in keys.items():
        if figures["ambiguous"]:
            out.print(
                f"  {key}: the labellers disagree with each other; the criterion is "
                "ambiguous: agree on its reading (and relabel) before trusting or tuning "
                "the judge on it",
                markup=False,
            )


def _table(report: CalibrationReport) -> Table:
    has_previous = report.previous is not None
    sampled = any(k.self_agreement is not None for k in report.keys)
    table = Table(box=None, pad_edge=False, header_style="bold")
    columns = ["key", "rated by", "labels", "agreement", "kappa", "MAE", "r"]
    columns += ["self-agreement"] if sampled else []
    for column in columns + (["vs previous run"] if has_previous else []):
        table.add_column(column, overflow="fold")  # wrapped on a narrow terminal, never cut
    for k in report.keys:
        f = k.figures()
        by = k.rated_by + (" (shadow)" if k.role == "shadow" else "")
        row = [
            k.key,
            by,
            str(k.rated),
            _pct(f["agreement"]),
            _num(f["kappa"]),
            _num(f["mae"]),
            _num(f["correlation"]),
        ]
        if sampled:
            row.append(_pct(k.self_agreement))
        if has_previous:
            row.append(_delta(k))
        table.add_row(*(escape(x) for x in row))
    return table


def _delta(k: KeyCalibration) -> str:
    d = k.delta()
    if d is None:
        return "new"
    parts = []
    if d["agreement"] is not None:
        parts.append(f"agreement {d['agreement'] * 100:+.0f} pts")
    for name, label in (("kappa", "kappa"), ("mae", "MAE"), ("correlation", "r")):
        if d[name] is not None:
            parts.append(f"{label} {d[name]:+.2f}")
    figures = ", ".join(parts) or "-"
    if k.moved_from:  # compared with the source that decided the key last run
        return f"moved from {k.moved_from}: {figures}"
    return figures


def _previous(report: CalibrationReport) -> None:
    if report.previous is None:
        return
    out = console()
    prev = report.to_json()["previous"]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(prev["started_at"] or 0))
    model = prev.get("judge_model")
    out.print(
        f"\nprevious run: {prev['run_id']} ({when}" + (f", judge {model}" if model else "") + ")",
        markup=False,
    )
    if not prev["same_labels"]:
        out.print(
            "  the labels file differs from the previous run's: the change mixes the "
            "judge's and the labels' differences",
            markup=False,
        )
    if prev["changed_descriptions"]:
        out.print(
            "  criteria whose description changed since: "
            + ", ".join(prev["changed_descriptions"]),
            markup=False,
        )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"
