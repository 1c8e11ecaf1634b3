"""``gradeloop history`` and ``gradeloop stats``: what the recorded loops did."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from rich.markup import escape

from ..errors import InputError, LoopNotFoundError
from ..history._paths import default_history_path
from ..history._store import HistoryStore
from ..migration._evidence import resolve_source
from ._io import add_db_option, console, dollars, plural, print_json, table


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        help="list recorded loops and grading runs, or show one",
        description="Without ID: the recorded loops, then the grading runs (`gradeloop grade` "
        "records one per command), newest first. With ID (a unique prefix will do): that "
        "loop round by round, with scores, failed keys, feedback and tokens; or that grading "
        "run draft by draft. Exit 0, or 2 for an unknown id.",
    )
    p.add_argument(
        "loop_id",
        nargs="?",
        metavar="ID",
        help="a loop id or a grading run id (a unique prefix will do)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON (one loop: every round with its draft, evaluation and feedback)",
    )
    p.add_argument("--limit", type=int, default=20, metavar="N", help="loops to list (default 20)")
    add_db_option(p)
    p.set_defaults(run=run_history)

    s = sub.add_parser(
        "stats",
        help="how the recorded loops went: rounds to pass, score gain, stagnation, completeness",
        description="Four figures over the recorded loops: the average number of rounds to "
        "pass, the average gain from the first to the final judged score, the share of loops "
        "stopped by stagnation, and the share of rounds fully logged. Exit 0.",
    )
    s.add_argument("--json", action="store_true", help="print JSON")
    add_db_option(s)
    s.set_defaults(run=run_stats)


def _store(args: argparse.Namespace) -> HistoryStore:
    """The history to read. Reading creates nothing: with no database yet, an empty one
    in memory answers (no loops), and the home folder stays as it was."""
    if args.db is not None and not Path(args.db).is_file():
        raise InputError(f"history database file not found: {args.db}; check the path")
    if args.db is None and not default_history_path().exists():
        return HistoryStore(":memory:")
    return HistoryStore(args.db)


def run_history(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InputError(f"--limit must be at least 1, not {args.limit}")
    with _store(args) as store:
        if args.loop_id is None:
            loops = store.list_loops(limit=args.limit)
            costs = store.loop_costs([s.loop_id for s in loops]) if loops else {}
            if args.json:  # the loops, as always; a grading run: `history RUN_ID --json`
                print_json([{**vars(s), "cost_usd": costs.get(s.loop_id)} for s in loops])
            else:
                _list(loops, costs, store.list_grading_runs(limit=args.limit))
            return 0
        if str(store.path) == ":memory:":
            raise LoopNotFoundError(
                f"no loop or grading run {args.loop_id!r}: nothing is recorded yet "
                f"({default_history_path()} does not exist)"
            )
        kind, loop_id = resolve_source(store, args.loop_id)
        if kind == "run":
            _show_run(store.grading_run(loop_id), args.json)
            return 0
        data = store.get(loop_id)
        if args.json:
            print_json(data)
        else:
            _show(data, store.iterations(loop_id))
    return 0


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _list(loops: list[Any], costs: dict[str, float | None], runs: list[Any]) -> None:
    out = console()
    if not loops and not runs:
        out.print(
            "nothing recorded yet: `gradeloop optimize` records every loop it runs, and "
            "`gradeloop grade` every grading run",
            markup=False,
        )
        return
    if loops:
        _loops_table(out, loops, costs)
    else:
        out.print("no loops recorded yet; `gradeloop optimize` records every loop it runs")
    if runs:
        _runs_table(out, runs)


def _runs_table(out: Any, runs: list[Any]) -> None:
    out.print("\ngrading runs (`gradeloop history RUN_ID` shows one):", markup=False)
    rows = table(
        "id", "started", "origin", "rubric", "drafts", "accepted",
        never_wrap=("id", "started", "drafts", "accepted"),
    )  # fmt: skip
    for r in runs:
        rows.add_row(
            r.run_id,
            _when(r.started_at),
            escape(r.origin),
            escape(_preview(r.rubric_name or "-")),
            str(r.drafts),
            str(r.accepted),
        )
    out.print(rows)


def _preview(text: str, limit: int = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters (the whole of it is in the
    record: ``history ID``, ``--json``)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _show_run(run: dict[str, Any], as_json: bool) -> None:
    """One grading run: per draft, whether it was accepted, its score and failed keys."""
    if as_json:
        print_json(run)
        return
    out = console()
    drafts = run["drafts"]
    out.print(
        f"grading run {run['run_id']}  {_when(run['started_at'])}  origin: {run['origin']}  "
        f"rubric: {run['rubric_name'] or '-'}  drafts: {len(drafts)}",
        markup=False,
    )
    rows = table("draft", "accepted", "score", "failed keys", never_wrap=("accepted", "score"))
    for d in drafts:
        ev = d.get("evaluation") or {}
        score = ev.get("overall_score")
        failed = [c.get("name") for c in ev.get("criteria") or [] if not c.get("passed")]
        rows.add_row(
            escape(str(d.get("item_id"))),
            "yes" if ev.get("passed") and not d.get("error") else "no",
            "-" if score is None else f"{score:.2f}",
            escape(d.get("error") or ", ".join(map(str, failed)) or "-"),
        )
    out.print(rows)
    out.print("(`--json` prints every draft with its evaluation)", markup=False)


def _loops_table(out: Any, loops: list[Any], costs: dict[str, float | None]) -> None:
    columns = ("id", "started", "task", "rounds", "stop", "passed", "score", "cost")
    rows = table(
        *columns, never_wrap=("id", "started", "rounds", "stop", "passed", "score", "cost")
    )
    for s in loops:
        task = _preview(s.task)  # a preview: `history ID` and `--json` have the whole task
        rows.add_row(
            s.loop_id,
            _when(s.started_at),
            escape(task),
            str(s.rounds),
            s.stop_reason or s.status,
            "yes" if s.passed else "no",
            "-" if s.final_score is None else f"{s.final_score:.2f}",
            dollars(costs.get(s.loop_id)),
        )
    out.print(rows)


def _print_failures(out: Any, failures: list[Any], limit: int = 1000) -> None:
    """Why each call outside a round failed, and what a cut-off draft had written."""
    for failure in failures:
        if not isinstance(failure, dict):
            continue
        out.print(f"  failed: {failure.get('error')}", markup=False)
        text = failure.get("text")
        if isinstance(text, str) and text:
            more = "" if len(text) <= limit else f" (the first {limit}; `--json` has all)"
            out.print(f"  it had written {len(text):,} characters{more}:", markup=False)
            out.print(text[:limit], markup=False)


def _split_keys(record: dict[str, Any]) -> str | None:
    """``"tone 2/3"`` for the judge keys whose samples split in this round; None when the
    round was not judged with samples > 1."""
    detail = record.get("detail")
    criteria = detail.get("criteria") if isinstance(detail, dict) else None
    sampled = [c for c in criteria or () if isinstance(c, dict) and "agreement" in c]
    if not sampled:
        return None
    split = []
    for c in sampled:
        n = len(c.get("samples") or ())
        if c["agreement"] < 1 and n:
            split.append(f"{c.get('key')} {round(c['agreement'] * n)}/{n}")
    return ", ".join(split)


def _show(data: dict[str, Any], records: list[dict[str, Any]]) -> None:
    out = console()
    out.print(
        f"loop {data['loop_id']}  {data.get('status', '')}  stop: "
        f"{data.get('stop_reason') or '-'}  passed: {data.get('passed')}",
        markup=False,
    )
    task = " ".join(str(data.get("task", "")).split())
    if out.is_terminal and len(task) > 200:  # piped: the whole task
        task = task[:200] + "…"
    out.print(f"task: {task}", markup=False)
    trajectory = " → ".join(f"{s:.2f}" for s in data["improvement_trajectory"]) or "-"
    out.print(f"score trajectory: {trajectory}", markup=False)
    sampled = any(_split_keys(r) is not None for r in records)
    columns = ["round", "output", "score", "failed keys", "tokens in/out", "cost", "feedback"]
    shown = [*columns[:4], "split keys", *columns[4:]] if sampled else columns
    rounds = table(*shown, never_wrap=("round", "output", "score", "tokens in/out", "cost"))
    for r in records:
        ev = r.get("evaluation")
        usage = r.get("usage") or {}
        score = "-" if not ev else f"{ev['overall_score']:.2f}"
        if r.get("judge_error"):
            score = "judge failed"
        marker = " ✓" if r.get("output_id") == data.get("final_output_id") else ""
        row = [
            str(r.get("iteration")),
            escape(str(r.get("output_id")) + marker),
            score,
            escape(", ".join(r.get("failed_keys") or []) or "-"),
            f"{usage.get('total_input', 0)}/{usage.get('output_tokens', 0)}",
            dollars(usage.get("cost_usd")),
            escape(r.get("judge_error") or r.get("feedback") or ""),
        ]
        if sampled:
            row.insert(4, escape(_split_keys(r) or "-"))
        rounds.add_row(*row)
    out.print(rounds)
    outside = data.get("unrounded_usage")
    if outside:
        calls = outside.get("calls", 1)
        out.print(
            f"calls in no round (a draft that failed): {calls}, tokens "
            f"{outside.get('total_input', 0)} in/{outside.get('output_tokens', 0)} out, "
            f"cost {dollars(outside.get('cost_usd'))}",
            markup=False,
        )
        _print_failures(out, outside.get("failures") or [])
    out.print(
        f"final output: {data['final_output_id'] or '-'}  total {data['total_time_ms'] / 1000:.1f}s"
        " (✓ marks it; `--json` prints every draft)",
        markup=False,
    )


def run_stats(args: argparse.Namespace) -> int:
    with _store(args) as store:
        stats = store.stats()
    if args.json:
        print_json(stats)
        return 0
    out = console()

    def fmt(figure: dict[str, Any], unit: str) -> str:
        value = figure["value"]
        return "n/a" if value is None else f"{value:.1f}{unit}"

    it, qi = stats["iterations_to_pass"], stats["quality_improvement"]
    st, hc = stats["stagnation_exits"], stats["history_completeness"]
    out.print(f"loops recorded: {stats['loops']}", markup=False)
    out.print(
        f"iteration efficiency   {fmt(it, ' iterations'):>16}  average to pass, over "
        f"{plural(it['loops_passed'], 'loop')} that passed",
        markup=False,
    )
    out.print(
        f"quality improvement    {fmt(qi, '%'):>16}  first to final judged score, over "
        f"{plural(qi['loops'], 'loop')} with 2+ judged rounds",
        markup=False,
    )
    out.print(
        f"stagnation exits       {fmt(st, '%'):>16}  {st['stagnation_loops']} of "
        f"{plural(st['finished_loops'], 'finished loop')}",
        markup=False,
    )
    out.print(
        f"history completeness   {fmt(hc, '%'):>16}  {hc['complete_iterations']} of "
        f"{plural(hc['iterations'], 'iteration')} fully logged",
        markup=False,
    )
    cost = stats["cost"]
    unpriced = (
        f"; {plural(cost['unpriced_loops'], 'loop')} with an unknown price left out"
        if cost["unpriced_loops"]
        else ""
    )
    total, per_loop, per_passed = (
        "n/a" if cost[k] is None else dollars(cost[k])
        for k in ("total", "per_loop", "per_passed_loop")
    )
    out.print(
        f"cost                   {total:>16}  {per_loop} a loop, {per_passed} a passed "
        f"loop, over {plural(cost['priced_loops'], 'loop')}{unpriced}",
        markup=False,
    )
    _stability(out, stats["key_stability"])
    return 0


def _stability(out: Any, stability: dict[str, Any]) -> None:
    """Which judge keys disagreed with themselves under repeated judging (samples > 1)."""
    keys = stability["keys"]
    if not keys:
        out.print("key stability          n/a  no key was judged with samples > 1", markup=False)
        return
    out.print("\nkey stability (judge keys judged with samples > 1):", markup=False)
    for k in keys:
        flag = "UNSTABLE" if k["unstable"] else "stable"
        out.print(
            f"  {k['key']:<22} {flag:<9} samples split on {k['split'] * 100:.0f}% of "
            f"{plural(k['evaluations'], 'evaluation')}, mean agreement "
            f"{k['mean_agreement'] * 100:.0f}%",
            markup=False,
        )
    if any(k["unstable"] for k in keys):
        out.print(
            f"  (unstable: split on {stability['unstable_split'] * 100:.0f}% or more; give the "
            "key anchors or examples, or move it to code: see docs/judging.md)",
            markup=False,
        )
