"""``gradeloop optimize --engine graph`` and ``--resume``: the loop as a LangGraph graph.

Every step is checkpointed (``durability="sync"``) to ``$GRADELOOP_HOME/checkpoints.db``
with LangGraph's ``SqliteSaver``, so a run that died (API error, Ctrl-C, a killed
process) continues from the step that did not finish. The same file keeps a small
table of the threads this command started, with their rubric and settings, so that
``--resume ID`` needs no other flag.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, GradeloopError, InputError
from ..grading._rubric import Rubric
from ..grading._shadow import judge_request
from ..graph import build_graph, final_result, require_langgraph
from ..history._closing import Closing
from ..history._paths import gradeloop_home
from ..history._scrub import scrub_text
from ..history._store import HistoryStore
from ..judging._family import announced
from ..loop._run import new_id
from ..models._usage import Usage
from ._io import (
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
    build_generator,
    build_judge,
    model_configured,
    model_failure,
    same_family_line,
)

CHECKPOINTS = "checkpoints.db"

# Options of the loop engine that the graph (the seed loop) does not have.
_LOOP_ONLY = (
    ("stagnation_rounds", "--stagnation-rounds"),
    ("return_policy", "--return"),
    ("token_budget", "--token-budget"),
    ("time_budget", "--time-budget"),
    ("max_cost", "--max-cost"),
    ("select", "--select"),
    ("select_margin", "--select-margin"),
)
# What a thread keeps from the run that started it.
_FIXED_BY_THREAD = (
    ("rubric", "--rubric"),
    ("task", "--task"),
    ("task_file", "--task-file"),
    ("max_rounds", "--max-rounds"),
    ("single_shot", "--single-shot"),
    ("thread", "--thread"),
    ("on_judge_error", "--on-judge-error"),
    ("no_history", "--no-history"),
)


def add_graph_options(parser: argparse.ArgumentParser) -> None:
    """The ``--engine``, ``--thread``, ``--resume`` and ``--on-judge-error`` options."""
    group = parser.add_argument_group("graph engine (needs gradeloop[langgraph])")
    group.add_argument(
        "--engine",
        choices=["loop", "graph"],
        help="loop (default): the full loop (stagnation, budgets, best-draft return); "
        "graph: the basic loop (round cap, feedback, no budgets) as a LangGraph graph, "
        "checkpointed after every step",
    )
    group.add_argument(
        "--thread", metavar="ID", help="graph thread id for this run (default: a new id, printed)"
    )
    group.add_argument(
        "--resume",
        metavar="ID",
        help="continue graph thread ID where it stopped; the rubric, task "
        "and settings come from the thread",
    )
    group.add_argument(
        "--on-judge-error",
        choices=["revise", "raise"],
        help="graph engine, when the judge fails: revise on the last valid issues "
        "(default, as the loop does) or stop so that --resume retries the judge",
    )


def uses_graph(args: argparse.Namespace) -> bool:
    """Whether the graph engine runs this command (``--resume`` implies it)."""
    if args.resume is not None:
        if args.engine == "loop":
            raise InputError("--resume continues a graph thread; drop --engine loop")
        return True
    if args.engine == "graph":
        return True
    for name, flag in (("thread", "--thread"), ("on_judge_error", "--on-judge-error")):
        if getattr(args, name) is not None:
            raise InputError(f"{flag} needs --engine graph")
    return False


@dataclass
class _Job:
    thread_id: str
    task: str
    rubric: Rubric
    settings: dict[str, Any]
    resumed: bool


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the graph; exit 0 when the returned draft passed, else 1."""
    _check_flags(args)
    check_out(args.out)  # before any model call
    require_langgraph()
    path = gradeloop_home() / CHECKPOINTS
    if args.resume is not None and not path.exists():  # reading creates nothing
        raise InputError(
            f"no graph thread {args.resume!r}: no graph run has been started yet "
            f"({path} does not exist)"
        )
    with _Threads(path) as threads:
        job = _resume(args, threads) if args.resume is not None else _start(args, threads)
        state, history = _drive(args, job, threads)
    _report(args, job, state, history)
    return 0 if final_result(state)[1] else 1


def _check_flags(args: argparse.Namespace) -> None:
    clash = _LOOP_ONLY + (_FIXED_BY_THREAD if args.resume is not None else ())
    for name, flag in clash:
        if getattr(args, name) not in (None, False):
            why = (
                "the thread keeps the settings it started with"
                if args.resume is not None and (name, flag) in _FIXED_BY_THREAD
                else "the graph runs the basic loop, which has no such option"
            )
            mode = "--resume" if args.resume is not None else "--engine graph"
            raise InputError(f"{flag} cannot be used with {mode}: {why}")


def _start(args: argparse.Namespace, threads: _Threads) -> _Job:
    if args.rubric is None:
        raise InputError("give --rubric FILE (or --resume THREAD to continue a graph run)")
    rubric = Rubric.load(args.rubric)
    task = read_task(args.task, args.task_file)
    if not task:
        raise InputError("the task is empty: give --task TEXT or --task-file FILE")
    _require_model(args)
    max_rounds = 1 if args.single_shot else (3 if args.max_rounds is None else args.max_rounds)
    settings = {
        "rubric": rubric.to_dict(),
        "max_rounds": max_rounds,
        "judge_errors": args.on_judge_error or "revise",
        "history": not args.no_history,
        "model": args.model,
        "judge_model": args.judge_model,
        "judge_models": getattr(args, "judge_models", None),
        "base_url": args.base_url,
        "structured": args.structured,
    }
    thread_id = args.thread or new_id("thread")
    threads.create(thread_id, task, settings)
    return _Job(thread_id, task, rubric, settings, resumed=False)


def _resume(args: argparse.Namespace, threads: _Threads) -> _Job:
    task, settings = threads.load(args.resume)
    # Model options given now win (a moved server, another key); the rest is the thread's.
    for name in ("model", "judge_model", "judge_models", "base_url"):
        if getattr(args, name) is None:
            setattr(args, name, settings.get(name))
    if args.structured == "auto" and settings.get("structured"):
        args.structured = settings["structured"]
    _require_model(args)
    rubric = Rubric.from_dict(settings["rubric"])
    return _Job(args.resume, task, rubric, settings, resumed=True)


def _require_model(args: argparse.Namespace) -> None:
    if not model_configured(args):
        raise ConfigError(
            "no model is configured to write drafts: set ANTHROPIC_API_KEY, "
            "or pass --base-url for a local server"
        )


def _drive(
    args: argparse.Namespace, job: _Job, threads: _Threads
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Stream the graph to its end; the final state, and the loop's history when kept."""
    store = HistoryStore(args.db) if job.settings.get("history") else None
    err = console(stderr=True)
    try:
        generator = build_generator(args, job.rubric)
        judge = build_judge(args, job.rubric) if judge_request(job.rubric) else None
        same_family_line(generator, judge)
        with announced():  # the line above said it: no second warning
            graph = build_graph(
                job.rubric,
                generator=generator,
                judge=judge,
                max_rounds=int(job.settings["max_rounds"]),
                checkpointer=threads.saver,
                judge_errors=job.settings.get("judge_errors", "revise"),
                store=store,
                config={
                    "mode": "graph",
                    "generator_model": getattr(generator, "model", None),
                    "judge_model": getattr(judge, "model", None),
                    "base_url": args.base_url,
                },
            )
        config: Any = {"configurable": {"thread_id": job.thread_id}}
        snapshot = graph.get_state(config)
        finished = bool(snapshot.values) and not snapshot.next
        # A thread with no checkpoint yet (it died before its first step) starts over.
        start = None if snapshot.values else {"task": job.task}
        err.print(_banner(job, finished), markup=False)
        if not finished:
            _stream(graph, start, config, job, err)
        state = dict(graph.get_state(config).values)
        history = store.get(state["loop_id"]) if store is not None else None
    finally:
        if store is not None:
            store.close()
    return state, history


def _stream(graph: Any, start: Any, config: Any, job: _Job, err: Any) -> None:
    try:
        for event in graph.stream(start, config, stream_mode="custom", durability="sync"):
            err.print(describe_round(event), markup=False)
    except Exception as exc:
        resume = (
            f"thread {job.thread_id} is saved; continue it with "
            f"`gradeloop optimize --resume {job.thread_id}`"
        )
        # Bad input and a failing model server are exit 2; anything else is a bug in
        # gradeloop (exit 3), reported as one, with the thread still there to resume.
        what = str(exc) if isinstance(exc, GradeloopError) else model_failure(exc)
        if what is None or os.environ.get("GRADELOOP_DEBUG"):
            err.print(f"the run stopped; {resume}", markup=False)
            raise
        raise GradeloopError(f"the run stopped: {what}\n{resume}") from exc


def _banner(job: _Job, finished: bool) -> str:
    if finished:
        return f"thread {job.thread_id} had already finished; nothing to run"
    verb = "resuming" if job.resumed else "thread"
    return (
        f"{verb} {job.thread_id} (if this run stops, continue it with "
        f"`gradeloop optimize --resume {job.thread_id}`)"
    )


def describe_round(event: dict[str, Any]) -> str:
    """One progress line from the graph's custom stream event for a round."""
    head = f"round {event['round']}/{max(int(event['max_rounds']), 1)}"
    usage = event.get("usage") or {}
    tokens = f"tokens {usage.get('total_input', 0)} in/{usage.get('output_tokens', 0)} out"
    secs = f"{float(event.get('time_ms', 0.0)) / 1000:.1f}s"
    if event.get("score") is None:
        return f"{head}  judge failed: {event.get('judge_error')}  {tokens}  {secs}"
    failed = ", ".join(event.get("failed_keys") or []) or "none"
    verdict = "pass" if event.get("passed") else "fail"
    return f"{head}  score {event['score']:.2f}  {verdict}  failed: {failed}  {tokens}  {secs}"


def _report(
    args: argparse.Namespace, job: _Job, state: dict[str, Any], history: dict[str, Any] | None
) -> None:
    draft, passed = final_result(state)
    if args.out:
        recorded = state.get("loop_id") if history is not None else None
        write_out(args.out, draft, recorded, args.db)
    if args.json:
        print_json(_json(job, state, history))
    elif not args.out:
        write_text(draft)
    evaluation = state.get("evaluation")
    judged = evaluation is not None and state.get("judged_output_id") == state.get("output_id")
    score = f"{evaluation['overall_score']:.2f}" if judged and evaluation else "-"
    usage = state.get("usage") or {}
    loop = f"; loop {state.get('loop_id')} (see `gradeloop history {state.get('loop_id')}`)"
    rounds = plural(int(state.get("rounds", 0)), "round")
    console(stderr=True).print(
        f"{'PASSED' if passed else 'NOT PASSED'}: {state.get('stop_reason')} after "
        f"{rounds}; returned draft {state.get('output_id')} scored "
        f"{score}/10; tokens {usage.get('total_input', 0)} in, {usage.get('output_tokens', 0)}"
        f" out, cost {dollars(Usage.from_dict(usage).cost_usd)}; thread {job.thread_id}"
        + (loop if history is not None else ""),
        markup=False,
    )


def _json(job: _Job, state: dict[str, Any], history: dict[str, Any] | None) -> dict[str, Any]:
    """The history JSON when the run was recorded; else what the final state holds."""
    head = {"engine": "graph", "thread_id": job.thread_id}
    if history is not None:
        return {**head, **history}
    return {
        **head,
        "loop_id": state.get("loop_id"),
        "final_output_id": state.get("output_id"),
        "passed": final_result(state)[1],
        "stop_reason": state.get("stop_reason"),
        "rounds": state.get("rounds"),
        "improvement_trajectory": [round(s, 2) for s in state.get("trajectory") or []],
        "evaluation": state.get("evaluation"),
        "usage": state.get("usage"),
    }


class _Threads(Closing):
    """The checkpoint database: LangGraph's saver, and the threads this CLI started."""

    def __init__(self, path: Path) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # The saver serialises its own use of the connection with a lock.
            self.conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS gradeloop_threads (thread_id TEXT PRIMARY KEY,"
                " created_at REAL NOT NULL, task TEXT NOT NULL, settings_json TEXT NOT NULL)"
            )
            self.conn.commit()
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the checkpoint database {path}: {exc}") from None
        self.saver = SqliteSaver(self.conn)

    def close(self) -> None:
        self.conn.close()

    def create(self, thread_id: str, task: str, settings: dict[str, Any]) -> None:
        """Record a new thread; an id already used is an error (resume it instead)."""
        # The rubric is kept as given: resuming needs it exactly. A password in a base
        # URL is not kept; --resume takes --base-url again for such a server.
        if isinstance(settings.get("base_url"), str):
            settings = {**settings, "base_url": scrub_text(settings["base_url"])}
        row = (thread_id, time.time(), task, json.dumps(settings))
        try:
            with self.conn:
                self.conn.execute("INSERT INTO gradeloop_threads VALUES (?, ?, ?, ?)", row)
        except sqlite3.IntegrityError:
            raise InputError(
                f"graph thread {thread_id!r} already exists in {self.path}; continue it with "
                f"--resume {thread_id}, or pick another --thread"
            ) from None

    def load(self, thread_id: str) -> tuple[str, dict[str, Any]]:
        """The task and settings of a thread this CLI started."""
        found = self.conn.execute(
            "SELECT task, settings_json FROM gradeloop_threads WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        if found is None:
            recent = [
                r[0]
                for r in self.conn.execute(
                    "SELECT thread_id FROM gradeloop_threads ORDER BY created_at DESC LIMIT 5"
                )
            ]
            known = f"recent threads: {', '.join(recent)}" if recent else "no threads yet"
            raise InputError(f"no graph thread {thread_id!r} in {self.path} ({known})")
        return str(found[0]), dict(json.loads(found[1]))
