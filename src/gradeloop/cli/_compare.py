"""``gradeloop compare``: does a shadowed key's checker agree with the judge, and what
would moving the key to code save?"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from ..grading._rubric import Rubric
from ..grading._shadow import ShadowResult, ShadowSide, judge_request
from ..history._grading import GradedDraft
from ..history._store import HistoryStore
from ..migration._compare import CompareReport, KeyComparison, compare, side_names
from ..migration._jsonl import DraftItem, read_drafts
from ..models._fingerprint import fingerprint_warnings, run_fingerprint, stored_fingerprint
from ._io import add_db_option, console, plural, print_json, read_task
from ._models import (
    add_cache_options,
    add_jobs_option,
    add_model_options,
    build_judge,
    require_model,
)
from ._record import record_grading


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "compare",
        help="agreement of each shadowed key's two sources, and its judge cost",
        description="Grade a set of drafts with a rubric whose criteria name a shadow "
        '(shadow = "judge" or a checker) and report, per shadowed key: agreement, '
        "Cohen's kappa, the confusion counts and the disagreeing drafts, beside the judge "
        "tokens each key costs. Exit 0 when the report was made, 2 for bad input.",
    )
    p.add_argument(
        "drafts",
        nargs="?",
        metavar="DRAFTS",
        help='a JSONL file of {"task", "draft"} objects ("id" optional)',
    )
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    p.add_argument(
        "--from-history",
        action="store_true",
        help="compare on the drafts recorded by past loops instead of a file",
    )
    p.add_argument(
        "--loops",
        type=int,
        default=50,
        metavar="N",
        help="with --from-history: the N most recent loops (default 50)",
    )
    p.add_argument("--task", metavar="TEXT", help="task for lines that have none")
    p.add_argument("--task-file", metavar="FILE", help="read that task from a file")
    p.add_argument(
        "--show",
        type=int,
        default=10,
        metavar="N",
        help="disagreeing drafts to list per key (default 10)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_db_option(p)
    p.add_argument(
        "--no-history",
        action="store_true",
        help="do not store the shadow outcomes in the history database",
    )
    add_model_options(p, generator=False)
    add_jobs_option(p)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    if args.show < 0 or args.loops < 1:
        raise InputError("--show must be >= 0 and --loops >= 1")
    rubric = Rubric.load(args.rubric)
    if args.from_history == (args.drafts is not None):
        raise InputError("give a DRAFTS file or --from-history (one of them)")
    if args.db is not None and args.from_history and not Path(args.db).is_file():
        raise InputError(f"history database file not found: {args.db}; check the path")
    items = (
        None if args.from_history else read_drafts(args.drafts, default_task=_default_task(args))
    )
    asked = judge_request(rubric)
    if asked:  # the inputs first (a typo is the likelier fault), then the model, then work
        require_model(args, [c.key for c in asked], code_only_hint=False, rubric=rubric)
    store = None if args.no_history and not args.from_history else HistoryStore(args.db)
    try:
        sources: list[tuple[str, dict[str, Any]]] = []
        if items is None:
            assert store is not None
            items = history_drafts(store, args.loops)
            sources = loop_fingerprints(store, args.loops)
        judge = build_judge(args, rubric) if asked else None
        for warning in compare_warnings(sources, judge, rubric):
            print(f"gradeloop: warning: {warning}", file=sys.stderr)
        graded: list[GradedDraft] = []
        report = compare(
            items,
            rubric,
            judge=judge,
            store=None if args.no_history else store,
            on_draft=lambda item, ev: graded.append(
                GradedDraft(item.output_id, item.draft, ev, item.task)
            ),
            jobs=args.jobs,
        )
    finally:
        if store is not None:
            store.close()
    failed = dict(report.judge_failures)
    graded = [replace(d, error=failed.get(d.item_id)) for d in graded]
    record_grading(args, rubric, graded, origin="compare", judge=judge)
    if args.json:
        print_json(report.to_json())
    else:
        render(report, args.show)
    return 0


def _default_task(args: argparse.Namespace) -> str | None:
    if args.task is None and args.task_file is None:
        return None
    return read_task(args.task, args.task_file)


def history_drafts(store: HistoryStore, loops: int) -> list[DraftItem]:
    """Every distinct draft of the ``loops`` most recent loops, with its loop's task."""
    items: list[DraftItem] = []
    seen: set[str] = set()
    for loop in store.list_loops(limit=loops):
        for record in store.iterations(loop.loop_id):
            content = record.get("content")
            if not isinstance(content, str) or record.get("reused_from") or content in seen:
                continue  # an identical draft would count the same answer twice
            seen.add(content)
            where = f"loop {loop.loop_id} round {record.get('iteration')}"
            items.append(DraftItem(str(record["output_id"]), loop.task, content, where))
    if not items:
        raise InputError(
            f"no drafts are recorded in {store.path}; run `gradeloop optimize` "
            "first, or give a DRAFTS file"
        )
    return items


def loop_fingerprints(store: HistoryStore, loops: int) -> list[tuple[str, dict[str, Any]]]:
    """The fingerprints of the ``loops`` most recent loops, one per distinct fingerprint
    (the first loop that has it), newest first."""
    out: list[tuple[str, dict[str, Any]]] = []
    for loop in store.list_loops(limit=loops):
        settings = store.loop_settings(loop.loop_id)
        fp = stored_fingerprint(settings["config"], settings["rubric"])
        if all(fp != seen for _, seen in out):
            out.append((loop.loop_id, fp))
    return out


def compare_warnings(
    sources: list[tuple[str, dict[str, Any]]], judge: object, rubric: Rubric
) -> list[str]:
    """What differs between the loops whose drafts are compared, and an undated alias of
    this run's judge (once)."""
    mixed = [
        f"the drafts come from loops that differ: {w}"
        for w in fingerprint_warnings(sources)
        if " differ in " in w
    ]
    own = fingerprint_warnings([("this compare", run_fingerprint(judge, rubric.to_dict()))])
    return mixed + own


# -- the text report -----------------------------------------------------------------


def render(report: CompareReport, show: int) -> None:
    """The agreement table, notes, the disagreeing drafts, then the cost of every key."""
    out = console()
    cost = report.cost
    per = max(cost.drafts, 1)
    out.print(
        f"compared {plural(report.drafts, 'draft')} with rubric {report.to_json()['rubric']}; "
        f"judge: {plural(cost.calls, 'call')}, {cost.usage.total_input:,} tokens in "
        f"({cost.usage.total_input / per:,.0f} per draft), {cost.usage.output_tokens:,} out "
        f"({cost.usage.output_tokens / per:,.0f} per draft), {_dollars(cost.usage.cost_usd, per)}",
        markup=False,
    )
    asked = report.judge_request
    if asked["keys"]:
        out.print(
            f"judge asked per draft: {', '.join(asked['keys'])} (system prompt "
            f"{asked['system_chars']:,} chars, schema {asked['schema_chars']:,} chars)",
            markup=False,
        )
    for output_id, error in report.judge_failures:
        out.print(f"  judge failed on {output_id}: {error}", markup=False)
    if not report.keys:
        out.print(
            '\nno criterion has a shadow: add shadow = "judge" to a code-filled key, or '
            'shadow = "<checker>" to a judge-filled one, to compare its sources',
            markup=False,
        )
    else:
        out.print()
        out.print(_agreement_table(report))
        for k in report.keys:
            for note in _notes(k):
                out.print(f"  {k.key}: {note}", markup=False)
        _disagreements(report, show)
    if cost.keys:
        out.print("\njudge tokens by key (attributed; see docs/migrating-a-criterion.md):")
        out.print(_cost_table(report))
        _savings(report)


def _agreement_table(report: CompareReport) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold")
    sampled = any(k.self_agreement is not None for k in report.keys)
    columns = [
        "key",
        "primary",
        "shadow",
        "n",
        "agree",
        "kappa",
        "code pass/judge fail",
        "code fail/judge pass",
        "judge tokens/draft",
    ]
    for column in [*columns, "judge self-agreement"] if sampled else columns:
        table.add_column(column, overflow="fold")  # wrapped on a narrow terminal, never cut
    for k in report.keys:
        t = k.oriented.table
        split = [str(t.a_pass_b_fail), str(t.a_fail_b_pass)]
        if side_names(k.criterion)[0] == "primary":  # two checkers: no judge side
            split = [
                f"{split[0]} (primary pass/shadow fail)",
                f"{split[1]} (primary fail/shadow pass)",
            ]
        c = report.cost.keys.get(k.key)
        tokens = f"{c.per_draft_input:.0f} in, {c.per_draft_output:.0f} out" if c else "-"
        row = [
            k.key,
            k.criterion.filled_by,
            str(k.criterion.shadow),
            str(k.stats.n),
            _pct(k.stats.agreement),
            _num(k.stats.kappa),
            *split,
            tokens,
        ]
        if sampled:
            row.append(_pct(k.self_agreement))
        table.add_row(*(escape(x) for x in row))
    return table


def _notes(k: KeyComparison) -> list[str]:
    notes = []
    if k.stats.kappa_note:
        notes.append(k.stats.kappa_note)
    if k.scores is not None and k.scores.n:
        notes.append(
            f"scores: mean absolute difference {_num(k.scores.mae)}, "
            f"correlation {_num(k.scores.correlation)}"
            + (f" ({k.scores.correlation_note})" if k.scores.correlation_note else "")
        )
    if k.failed:
        notes.append(f"the shadow failed on {plural(k.failed, 'draft')}: " + "; ".join(k.errors))
    if k.skipped:
        notes.append(f"the shadow was skipped on {plural(k.skipped, 'draft')}")
    return notes


def _disagreements(report: CompareReport, show: int) -> None:
    out = console()
    rows = [(k, d) for k in report.keys for d in k.disagreements[:show]]
    if not rows:
        out.print("\nno disagreements", markup=False)
        return
    out.print("\ndisagreements:", markup=False)
    for k, d in rows:
        a, b = side_names(k.criterion)
        first, second = (
            (d.shadow, d.primary) if d.primary.source == "judge" else (d.primary, d.shadow)
        )
        if a == "primary":
            first, second = d.primary, d.shadow
        out.print(
            f"  {k.key}  {d.output_id}  {a}: {_said(d, first)}  {b}: {_said(d, second)}",
            markup=False,
        )
        for line in _why(d):  # each source's words on its own line, under its own name
            out.print(f"      {line}", markup=False)
    hidden = sum(max(0, len(k.disagreements) - show) for k in report.keys)
    if hidden:
        out.print(f"  ... and {hidden} more (--show N, or --json for all)", markup=False)


def _said(d: ShadowResult, side: ShadowSide) -> str:
    verdict = "pass" if side.passed else "FAIL"
    if d.scale == "score" and side.score is not None:
        return f"{verdict} ({side.score:g})"
    return verdict


def _why(d: ShadowResult) -> list[str]:
    """What each side said: the judge's own words on the key (else its reasoning), and
    the checker's issues, each labelled with who said it."""
    judge = d.shadow if d.shadow.source == "judge" else d.primary
    code = d.primary if judge is d.shadow else d.shadow
    lines = []
    if judge.source == "judge":
        said = "; ".join(judge.issues) or (d.judge_reasoning or "")
        if said:
            lines.append(f"judge said: {_short(said)}")
    if code.source == "code" and code.issues:
        lines.append(f"checker {code.filled_by} said: {_short('; '.join(code.issues))}")
    return lines


def _cost_table(report: CompareReport) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("key", "judge asked as", "in/draft", "out/draft", "total in", "total out"):
        table.add_column(column, overflow="fold")  # wrapped on a narrow terminal, never cut
    for key, c in report.cost.keys.items():
        role = "shadow" if report.rubric[key].shadow_source == "judge" else "primary"
        if c.whole_call:
            role += " (only key: the whole call)"
        table.add_row(
            *(
                escape(x)
                for x in (
                    key,
                    role,
                    f"{c.per_draft_input:.0f}",
                    f"{c.per_draft_output:.0f}",
                    f"{c.input_tokens:,.0f}",
                    f"{c.output_tokens:,.0f}",
                )
            )
        )
    return table


def _savings(report: CompareReport) -> None:
    out = console()
    for k in report.keys:
        c = report.cost.keys.get(k.key)
        if c is None:
            continue  # code against code: the judge is not involved
        move = (
            "dropping its judge shadow"
            if k.criterion.source == "code"
            else f"switching it to checker {k.criterion.shadow!r}"
        )
        out.print(
            f"{k.key}: {move} saves about {c.per_draft_input:.0f} input and "
            f"{c.per_draft_output:.0f} output judge tokens per draft",
            markup=False,
        )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _dollars(cost: float | None, drafts: int) -> str:
    if cost is None:
        return "cost unknown (a model's price is not in the price table; see GRADELOOP_PRICES)"
    return f"${cost:,.4f} (${cost / drafts:,.4f} per draft)"
