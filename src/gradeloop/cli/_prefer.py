"""``gradeloop prefer A B --rubric R``: which draft better meets the rubric, both orders.

With ``--pairs FILE.jsonl`` many pairs are compared and the judge's position bias over
them is printed. Every comparison is recorded in the history (unless ``--no-history``).
Exit 0 with an answer, 2 for bad input or a judge that failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import HistoryError, InputError
from ..grading._rubric import Rubric
from ..history._store import HistoryStore
from ..judging._bias import PositionBias, PreferenceBatch, compare_many
from ..judging._preference import Preference, compare_drafts
from ..migration._jsonl import read_pairs
from ._io import (
    add_db_option,
    console,
    dollars,
    plural,
    print_json,
    read_task,
    read_text,
    table,
)
from ._models import (
    add_cache_options,
    add_jobs_option,
    add_model_options,
    build_judge,
    require_model,
)

_LABEL = {"a": "A", "b": "B", "tie": "tie"}


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "prefer",
        help="which of two drafts better meets the rubric (the judge asked in both orders)",
        description="Compare draft A with draft B key by key: the judge is asked twice, A "
        "shown first and then B shown first, and a key whose two answers disagree is a tie "
        "(position bias). Code-filled keys are compared by their checkers. With --pairs, "
        "many pairs and the judge's position bias over them. Exit 0 with an answer, 2 for "
        "bad input or a judge that failed.",
    )
    p.add_argument("a", nargs="?", metavar="A", help="the first draft file (- for stdin)")
    p.add_argument("b", nargs="?", metavar="B", help="the second draft file")
    p.add_argument(
        "--pairs",
        metavar="FILE",
        help='compare many pairs: a JSONL file of {"a", "b"} objects ("task", "id" '
        "optional); prints the judge's position bias over them",
    )
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    p.add_argument("--task", metavar="TEXT", help="the task the drafts answer")
    p.add_argument("--task-file", metavar="FILE", help="read the task from a file")
    p.add_argument("--json", action="store_true", help="print the preference JSON")
    p.add_argument(
        "--no-history", action="store_true", help="do not record the comparisons in the history"
    )
    add_jobs_option(p, what="pairs")
    add_db_option(p)
    add_model_options(p, generator=False)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.pairs is not None and (args.a is not None or args.b is not None):
        raise InputError("give two draft files A B, or --pairs FILE.jsonl, not both")
    if args.pairs is None and (args.a is None or args.b is None):
        raise InputError("give two draft files A B (- for stdin), or --pairs FILE.jsonl")
    rubric = Rubric.load(args.rubric)
    task = read_task(args.task, args.task_file)
    pairs = read_pairs(args.pairs, default_task=task) if args.pairs is not None else None
    # the files first: a missing draft is said before a missing model
    a = read_text(args.a, "draft A") if pairs is None else ""
    b = read_text(args.b, "draft B") if pairs is None else ""
    judge = None
    identical = pairs is None and a == b  # they tie on every key: no judge is asked
    if rubric.judge_keys and not identical:
        require_model(args, rubric.judge_keys, code_only_hint=False, rubric=rubric)
        judge = build_judge(args, rubric)
    if pairs is not None:
        batch = compare_many(pairs, rubric, task=task, judge=judge, concurrency=args.jobs)
        _record(args, [(p, f"{i}.a", f"{i}.b") for i, p in zip(batch.ids, batch, strict=True)])
        if args.json:
            print_json(batch.to_json())
        else:
            _show_many(batch)
        return 0
    pref = compare_drafts(a, b, rubric, task=task, judge=judge)
    _record(args, [(pref, args.a, args.b)])
    if args.json:
        print_json({"a": args.a, "b": args.b, **pref.to_json()})
    else:
        _show(pref, args.a, args.b)
    return 0


def _record(args: argparse.Namespace, rows: list[tuple[Preference, str, str]]) -> None:
    """Store the comparisons unless --no-history; a history that cannot be written costs
    a warning, never the answer."""
    if args.no_history:
        return
    try:
        with HistoryStore(args.db) as store:
            for pref, a_ref, b_ref in rows:
                store.add_preference(
                    pref.to_json() if pref.error is None else None,
                    origin="prefer",
                    a_output_id=a_ref,
                    b_output_id=b_ref,
                    chosen_output_id={"a": a_ref, "b": b_ref}.get(pref.winner),
                    error=pref.error,
                )
    except HistoryError as exc:
        print(f"gradeloop: warning: the comparison was not recorded: {exc}", file=sys.stderr)


def _show(pref: Preference, a: str, b: str) -> None:
    out = console()
    grid = table("key", "compared by", "A shown first", "B shown first", "decision")
    for key, choice in pref.by_key.items():
        source = pref.sources.get(key, "judge")
        if key in pref.orders:
            first, second = (_LABEL[x] for x in pref.orders[key])
            decision = _LABEL[choice] + ("" if pref.consistent[key] else "  (orders disagree)")
        else:
            first = second = "-"
            decision = f"{_LABEL[choice]}  ({pref.details.get(key, 'no answer')})"
        grid.add_row(key, "checker" if source == "code" else "judge", first, second, decision)
    out.print(grid)
    names = {"a": f"A ({a})", "b": f"B ({b})", "tie": "a tie"}
    out.print(f"winner: {names[pref.winner]}", markup=False)
    if pref.inconsistent:
        out.print(
            f"{plural(len(pref.inconsistent), 'judge key')} answered differently in the two orders "
            f"(position bias), counted as ties: {', '.join(pref.inconsistent)}",
            markup=False,
        )
    if "judge" in pref.sources.values():
        out.print(_judge_line(pref.requests, pref.usage), markup=False)


def _show_many(batch: PreferenceBatch) -> None:
    out = console()
    grid = table("pair", "winner", "inconsistent keys", "error")
    for ident, pref in zip(batch.ids, batch, strict=True):
        grid.add_row(
            ident, _LABEL[pref.winner], ", ".join(pref.inconsistent) or "-", pref.error or "-"
        )
    out.print(grid)
    out.print(bias_line(batch.position_bias), markup=False)
    usages = [p.usage for p in batch if p.usage is not None]
    total = sum(usages[1:], usages[0]) if usages else None
    out.print(_judge_line(batch.requests, total), markup=False)


def bias_line(bias: PositionBias) -> str:
    """``position bias: 3 of 20 comparisons (15%) chose the same position in both orders,
    leaning first; consistency 80%``."""
    if bias.comparisons == 0:
        return "position bias: no judge comparisons answered"
    rate = bias.rate or 0.0
    lean = f", leaning {bias.favours}" if bias.favours else ""
    return (
        f"position bias: {bias.first_both + bias.second_both} of {bias.comparisons} "
        f"comparisons ({rate:.0%}) chose the same position in both orders{lean}; "
        f"consistency {bias.consistency or 0.0:.0%}"
    )


def _judge_line(requests: int, usage: Any) -> str:
    if usage is None:
        return f"judge: {plural(requests, 'call')}"
    return (
        f"judge: {plural(requests, 'call')}, {usage.total_input + usage.output_tokens:,} tokens, "
        f"cost {dollars(usage.cost_usd)}"
    )
