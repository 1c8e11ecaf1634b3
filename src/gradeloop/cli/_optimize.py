"""``gradeloop optimize``: run the loop on a task, recording every round."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import ConfigError, InputError, NotAnAnswer
from ..grading._rubric import Rubric
from ..grading._shadow import judge_request
from ..history._store import HistoryStore
from ..judging._family import announced
from ..loop._result import Iteration, LoopResult
from ..loop._run import LoopEvent, run_loop
from ._io import (
    add_db_option,
    check_out,
    console,
    dollars,
    plural,
    print_json,
    read_task,
    write_out,
    write_text,
)
from ._models import (
    add_cache_options,
    add_max_tokens_option,
    add_model_options,
    build_generator,
    build_judge,
    model_configured,
    same_family_line,
)
from ._optimize_graph import add_graph_options, uses_graph
from ._optimize_graph import run as run_graph


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "optimize",
        help="draft, judge and revise until the rubric passes or a limit is hit",
        description="Run the evaluator-optimizer loop. Progress goes to stderr; the final "
        "draft to --out or stdout. Exit 0 when the returned draft passed, 1 when not, "
        "2 for bad input or no model.",
    )
    p.add_argument(
        "--rubric", metavar="FILE", help="rubric file (TOML or JSON); required unless --resume"
    )
    p.add_argument("--task", metavar="TEXT", help="the task")
    p.add_argument("--task-file", metavar="FILE", help="read the task from a file")
    p.add_argument(
        "--max-rounds", type=int, metavar="N", help="round cap: at most N judged drafts (default 3)"
    )
    p.add_argument(
        "--stagnation-rounds",
        type=int,
        metavar="N",
        help="stop when N judged rounds in a row do not beat the best score "
        "(0 turns it off; default 2)",
    )
    p.add_argument(
        "--return",
        dest="return_policy",
        choices=["best", "last"],
        help="which judged draft to return when none passes (default best)",
    )
    p.add_argument(
        "--select",
        choices=["score", "pairwise"],
        help="how the returned draft is chosen when none passes: by overall score "
        "(default), or pairwise: the judge compares the best two in both orders when "
        "their scores are within --select-margin (2 more judge requests)",
    )
    p.add_argument(
        "--select-margin",
        type=float,
        metavar="POINTS",
        help="with --select pairwise: compare when the best two overall scores are at most "
        "this far apart (default 1.0, on 0-10)",
    )
    p.add_argument(
        "--single-shot",
        action="store_true",
        help="one draft, graded: what you would ship without the loop",
    )
    p.add_argument(
        "--token-budget",
        type=int,
        metavar="TOKENS",
        help="stop before the next revision once this many tokens were spent",
    )
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="stop before the next revision once this much time has passed",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        metavar="DOLLARS",
        help="stop before the next revision once this many US dollars were spent "
        "(needs a price for every model used; see GRADELOOP_PRICES)",
    )
    p.add_argument("--out", metavar="FILE", help="write the final draft here, not to stdout")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the loop's history as JSON on stdout (every round's draft, "
        "evaluation and feedback), not the final draft",
    )
    p.add_argument(
        "--no-history", action="store_true", help="do not record this loop in the history database"
    )
    add_db_option(p)
    add_graph_options(p)
    add_model_options(p, generator=True)
    add_max_tokens_option(p)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if uses_graph(args):
        return run_graph(args)
    # Defaults are resolved here, not in argparse, so that the graph engine can tell
    # a flag it does not support from one left at its default.
    args.max_rounds = 3 if args.max_rounds is None else args.max_rounds
    args.stagnation_rounds = 2 if args.stagnation_rounds is None else args.stagnation_rounds
    args.return_policy = args.return_policy or "best"
    if args.rubric is None:
        raise InputError("give --rubric FILE (or --resume THREAD to continue a graph run)")
    rubric = Rubric.load(args.rubric)
    task = read_task(args.task, args.task_file)
    if not task:
        raise InputError("the task is empty: give --task TEXT or --task-file FILE")
    check_out(args.out)  # before the first (paid) model call, not after the loop
    if not model_configured(args):
        raise ConfigError(
            "no model is configured to write drafts: set ANTHROPIC_API_KEY, "
            "or pass --base-url for a local server"
        )
    generator = build_generator(args, rubric)
    judge = build_judge(args, rubric) if judge_request(rubric) else None
    same_family_line(generator, judge)
    store = None if args.no_history else HistoryStore(args.db)
    progress = _Progress(args.max_rounds if not args.single_shot else 1)
    try:
        with progress, announced(), _kept(progress, store, args.db):
            result = run_loop(
                task,
                rubric,
                generator=generator,
                judge=judge,
                max_rounds=1 if args.single_shot else args.max_rounds,
                stagnation_rounds=args.stagnation_rounds,
                return_policy=args.return_policy,
                store=store,
                token_budget=args.token_budget,
                time_budget=args.time_budget,
                max_cost_usd=args.max_cost,
                on_iteration=progress.iteration,
                on_event=progress.event,
                select=args.select or "score",
                select_margin=1.0 if args.select_margin is None else args.select_margin,
                config={
                    "mode": "single-shot" if args.single_shot else "loop",
                    "generator_model": getattr(generator, "model", None),
                    "generator_max_tokens": getattr(generator, "max_tokens", None),
                    "judge_model": getattr(judge, "model", None),
                    "base_url": args.base_url,
                },
            )
    finally:
        if store is not None:
            store.close()
    _report(result, args)
    return 0 if result.passed else 1


@contextlib.contextmanager
def _kept(progress: _Progress, store: HistoryStore | None, db: str | None) -> Iterator[None]:
    """A first draft that was not an answer (cut off at max_tokens, say) ends the run
    with exit 2; its error says where the history keeps what it wrote."""
    try:
        yield
    except NotAnAnswer as exc:
        if store is None or progress.loop_id is None or exc.text is None:
            raise
        where = f" --db {db}" if db else ""
        raise NotAnAnswer(
            f"{exc}\nwhat it wrote is kept: `gradeloop history {progress.loop_id}{where}`",
            reason=exc.reason,
            stop_details=exc.stop_details,
            text=exc.text,
        ) from exc


def _report(result: LoopResult, args: argparse.Namespace) -> None:
    if args.out:
        recorded = None if args.no_history else result.loop_id
        write_out(args.out, result.draft, recorded, args.db)
    if args.json:
        print_json(result.to_json())
    elif not args.out:
        write_text(result.draft)
    err = console(stderr=True)
    ev = result.evaluation
    score = "-" if ev is None or ev.overall_score is None else f"{ev.overall_score:.2f}"
    verdict = "PASSED" if result.passed else "NOT PASSED"
    usage = result.usage
    err.print(
        f"{verdict}: {result.stop_reason} after {plural(result.rounds, 'round')}; returned draft "
        f"{result.output_id} scored {score}/10; tokens {usage.total_input} in, "
        f"{usage.output_tokens} out, cost {dollars(usage.cost_usd)}; loop {result.loop_id}"
        + (
            ""
            if args.no_history
            else f" (see `gradeloop history {result.loop_id}"
            + (f" --db {args.db}" if args.db else "")
            + "`)"
        ),
        markup=False,
    )
    if result.error:
        err.print(result.error, markup=False)
    if result.selection is not None:
        err.print(f"pairwise selection: {result.selection.reason}", markup=False)


class _Progress:
    """One line per round on stderr; a spinner between rounds on a terminal."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.err = console(stderr=True)
        self.status: Any = None
        self.loop_id: str | None = None

    def __enter__(self) -> _Progress:
        if self.err.is_terminal:
            self.status = self.err.status("round 1: drafting and judging…", spinner=SPINNER)
            self.status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(None, None, None)

    def iteration(self, it: Iteration) -> None:
        self.err.print(describe(it, self.cap), markup=False)
        if self.status is not None:
            self.show(f"round {it.iteration + 1}: revising and judging…")

    def event(self, event: LoopEvent) -> None:
        """Keep the terminal's status line on what the loop is doing right now."""
        self.loop_id = event.loop_id
        if self.status is None:
            return
        if event.kind == "generate_start":
            doing = "drafting" if event.round == 1 else "revising"
            self.show(f"round {event.round}: {doing}…")
        elif event.kind == "evaluate_start":
            self.show(f"round {event.round}: judging…")

    def show(self, text: str) -> None:
        """Put ``text`` on the status line now (a plain update waits for the next frame)."""
        # Passing the spinner makes rich redraw at once; without it a phase shorter
        # than a frame (80 ms) would never be seen.
        self.status.update(text, spinner=SPINNER)


SPINNER = "dots"


def describe(it: Iteration, cap: int) -> str:
    """One progress line: round, score, failed keys, tokens, time."""
    head = f"round {it.iteration}/{max(cap, 1)}"
    tokens = (
        f"tokens {it.usage.total_input} in/{it.usage.output_tokens} out"
        f"  cost {dollars(it.usage.cost_usd)}"
    )
    ms = it.generation_time_ms + (it.evaluation_time_ms or 0)
    if it.evaluation is None:
        what = f"judge failed: {it.judge_error}" if it.judge_error else "not judged"
        return f"{head}  {what}  {tokens}  {ms / 1000:.1f}s"
    ev = it.evaluation
    failed = ", ".join(ev.failed_keys) or "none"
    reused = "  (verdict reused: identical draft)" if it.reused_from else ""
    return (
        f"{head}  score {ev.overall_score or 0.0:.2f}  {'pass' if ev.accepted else 'fail'}  "
        f"failed: {failed}  {tokens}  {ms / 1000:.1f}s{reused}"
    )
