"""What the LangGraph engine costs per round, against the plain loop, in one run.

Run: ``python benchmarks/bench_graph.py [--loops N] [--rounds N]``

Every figure is measured here, now, with zero-latency fakes (a ~1 KB draft, five
judge criteria, every round failing so each loop runs to the cap), so what is left is
the framework's own time. Printed as ms per round and as a ratio to ``optimize()``
(the loop the graph reproduces call for call):

* ``optimize()`` and ``run_loop()`` (the baselines);
* the graph without a checkpointer, with ``InMemorySaver``, and with ``SqliteSaver``
  on a file (default ``durability="async"``, and ``"sync"`` as the CLI runs it);
* the graph recording to the history store as well;
* the one-time ``build_graph()`` (compile) cost and the checkpoint bytes per round.

The fixed per-run part (the ``setup`` step, the first checkpoint) is spread over the
rounds; ``--rounds`` changes how thinly. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import KEYS, RUBRIC, Gen, Judge
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from gradeloop import HistoryStore, optimize, run_loop
from gradeloop.graph import build_graph


def ms_per_round(fn: Callable[[], Any], loops: int, rounds: int) -> float:
    """Best of five timings of ``loops`` runs, per round."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / (loops * rounds) * 1000)
    return best


def graph_runner(
    rounds: int, checkpointer: Any = None, durability: str | None = None, store: Any = None
) -> Callable[[], Any]:
    """One compiled graph; each call is a fresh run (a new thread when checkpointed)."""
    graph = build_graph(
        RUBRIC,
        generator=Gen(),
        judge=Judge(),
        max_rounds=rounds,
        checkpointer=checkpointer,
        store=store,
    )
    threads = itertools.count()
    kwargs: dict[str, Any] = {} if durability is None else {"durability": durability}

    def run() -> Any:
        if checkpointer is None:
            return graph.invoke({"task": "t"})
        config: Any = {"configurable": {"thread_id": f"t{next(threads)}"}}
        return graph.invoke({"task": "t"}, config, **kwargs)

    return run


def compile_ms(rounds: int, repeat: int = 50) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        build_graph(RUBRIC, generator=Gen(), judge=Judge(), max_rounds=rounds)
    return (time.perf_counter() - start) / repeat * 1000


def measure(loops: int, rounds: int, tmp: Path) -> list[tuple[str, float]]:
    rows = [
        (
            "optimize()",
            ms_per_round(
                lambda: optimize("t", RUBRIC, generator=Gen(), judge=Judge(), max_rounds=rounds),
                loops,
                rounds,
            ),
        ),
        (
            "run_loop()",
            ms_per_round(
                lambda: run_loop(
                    "t",
                    RUBRIC,
                    generator=Gen(),
                    judge=Judge(),
                    max_rounds=rounds,
                    stagnation_rounds=0,
                ),
                loops,
                rounds,
            ),
        ),
        ("graph, no checkpointer", ms_per_round(graph_runner(rounds), loops, rounds)),
        (
            "graph + InMemorySaver",
            ms_per_round(graph_runner(rounds, InMemorySaver()), loops, rounds),
        ),
    ]
    conn = sqlite3.connect(str(tmp / "checkpoints.db"), check_same_thread=False)
    saver = SqliteSaver(conn)
    slow = max(5, loops // 5)
    rows.append(
        ("graph + SqliteSaver (async)", ms_per_round(graph_runner(rounds, saver), slow, rounds))
    )
    rows.append(
        (
            "graph + SqliteSaver (sync, as the CLI)",
            ms_per_round(graph_runner(rounds, saver, "sync"), slow, rounds),
        )
    )
    with HistoryStore(tmp / "history.db") as store:
        rows.append(
            (
                "graph + SqliteSaver (sync) + history",
                ms_per_round(graph_runner(rounds, saver, "sync", store), slow, rounds),
            )
        )
    conn.close()
    return rows


def checkpoint_bytes(rounds: int, tmp: Path) -> tuple[float, int]:
    """Bytes of SQLite file per round, and checkpoints written per run."""
    path = tmp / "size.db"
    runs = 20
    with SqliteSaver.from_conn_string(str(path)) as saver:
        run = graph_runner(rounds, saver)
        for _ in range(runs):
            run()
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        count = saver.conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    return path.stat().st_size / (runs * rounds), count // runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=100, help="runs per timing (default 100)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds a run (default 5)")
    args = parser.parse_args()
    print(
        f"gradeloop graph benchmark: {args.rounds} rounds a run, {len(KEYS)} judge criteria, "
        f"~1 KB drafts, Python {sys.version.split()[0]}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(args.loops, args.rounds, Path(tmp))
        per_round, per_run = checkpoint_bytes(args.rounds, Path(tmp))
    base = rows[0][1]
    for name, ms in rows:
        print(f"{name:40s} {ms:8.3f} ms/round  {ms / base:6.1f}x optimize()  (+{ms - base:.3f} ms)")
    print(f"\nbuild_graph() (compile, once per graph)  {compile_ms(args.rounds):8.3f} ms")
    print(
        f"SqliteSaver file size                    {per_round / 1024:8.1f} KiB per round "
        f"({per_run} checkpoints a run)"
    )


if __name__ == "__main__":
    main()
