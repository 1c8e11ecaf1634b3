"""The history database at scale: reading stays flat from 100 to 100,000 rounds.

Run: ``python benchmarks/bench_history.py [--loops N] [--rounds R] [--db PATH]``

Fills two stores through the real loop (``run_loop`` with a ``HistoryStore``,
zero-latency fakes writing ~1 KB drafts judged on five criteria): a small one of
10 loops and a large one of ``--loops`` loops (default 10,000), ``--rounds``
rounds each (default 10), so 100 and 100,000 rounds. Then times, on each:

* ``gradeloop history --limit 10`` (the newest 10 loops: as many as the small
  store has, so both print the same table) and ``gradeloop history ID`` (one loop
  round by round, its id given in full and as a 12-character prefix), run
  in-process with their output thrown away;
* ``gradeloop stats``;
* ``get_optimization_history(ID, store=...)`` on an open store, and the store
  calls under the commands (``list_loops``, ``resolve`` of a prefix, ``stats``);

and prints each figure at both sizes and the ratio (target: within 2x). Also the
bytes per round on disk and the time to write a round. ``--db`` keeps the large
store at PATH and reuses it when it is already full (filling takes minutes).
Times are the best of 15 runs, in milliseconds of wall time, the two stores timed
in turn so that a busy moment of the machine hits both.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import KEYS, RUBRIC, Gen, failing
from _common import Judge as FailingJudge

from gradeloop import HistoryStore, get_optimization_history, run_loop
from gradeloop.cli import main as cli


class Judge(FailingJudge):
    # a longer reasoning than the other benchmarks': the bytes per round are measured here
    verdict = failing("the draft names no error codes and cites no section")


def fill(store: HistoryStore, loops: int, rounds: int, *, quiet: bool = False) -> float:
    """Run ``loops`` loops of ``rounds`` rounds into ``store``; ms per round written."""
    start = time.perf_counter()
    for i in range(loops):
        run_loop(
            f"Write the payments guide, part {i}.",
            RUBRIC,
            generator=Gen(),
            judge=Judge(),
            max_rounds=rounds,
            stagnation_rounds=0,
            similarity=None,
            store=store,
        )
        if not quiet and (i + 1) % 1000 == 0:
            elapsed = time.perf_counter() - start
            print(f"  filled {i + 1:,} loops ({elapsed:.0f} s)", file=sys.stderr, flush=True)
    return (time.perf_counter() - start) * 1000 / (loops * rounds)


def quiet_cli(*argv: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli(list(argv))
    if code != 0:
        raise SystemExit(f"gradeloop {' '.join(argv)} exited {code}")


def reads(store: HistoryStore) -> dict[str, Callable[[], object]]:
    """The reads timed on ``store``, by name."""
    ids = [s.loop_id for s in store.list_loops(limit=10**9)]
    middle = ids[len(ids) // 2]  # neither the newest nor the oldest
    db = str(store.path)
    return {
        # 10 rows: all the small store has, so both render the same table
        "history --limit 10": lambda: quiet_cli("history", "--limit", "10", "--db", db),
        "history ID (full id)": lambda: quiet_cli("history", middle, "--db", db),
        "history ID (prefix)": lambda: quiet_cli("history", middle[:12], "--db", db),
        "stats": lambda: quiet_cli("stats", "--db", db),
        "get_optimization_history": lambda: get_optimization_history(middle, store=store),
        # the library calls under the commands, without the CLI's fixed cost
        "store.list_loops(10)": lambda: store.list_loops(limit=10),
        "store.resolve(prefix)": lambda: store.resolve(middle[:12]),
        "store.stats()": store.stats,
    }


def compare(small: Path, large: Path, runs: int = 15) -> dict[str, tuple[float, float]]:
    """Best-of-``runs`` ms of each read on both stores, the two timed in turn."""
    with HistoryStore(small) as a, HistoryStore(large) as b:
        ra, rb = reads(a), reads(b)
        best = {name: [float("inf"), float("inf")] for name in ra}
        for _ in range(runs):
            for name in ra:
                for i, fn in enumerate((ra[name], rb[name])):
                    start = time.perf_counter()
                    fn()
                    best[name][i] = min(best[name][i], time.perf_counter() - start)
    return {name: (x * 1000, y * 1000) for name, (x, y) in best.items()}


def rounds_in(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM iterations").fetchone()[0])
    finally:
        conn.close()


def size_per_round(path: Path) -> float:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path.stat().st_size / rounds_in(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=10_000, help="loops in the large store")
    parser.add_argument("--rounds", type=int, default=10, help="rounds a loop")
    parser.add_argument("--db", type=Path, default=None, help="keep the large store here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.db"
        with HistoryStore(small) as store:
            fill(store, 10, args.rounds, quiet=True)
        large = args.db or Path(tmp) / "large.db"
        want = args.loops * args.rounds
        if not large.exists() or rounds_in(large) < want:
            print(f"filling {want:,} rounds into {large} ...", file=sys.stderr)
            with HistoryStore(large) as store:
                done = rounds_in(large) // args.rounds
                write_ms = fill(store, args.loops - done, args.rounds)
            print(f"writing a round through run_loop + SQLite: {write_ms:.3f} ms")
        else:
            with HistoryStore(large):  # opening migrates an older file once
                pass
        n_small, n_large = rounds_in(small), rounds_in(large)
        figures = compare(small, large)
        print(f"\n{'read':<28}{n_small:>10,} rounds{n_large:>14,} rounds{'ratio':>8}")
        for name, (few, many) in figures.items():
            ratio = many / few
            flag = "" if ratio <= 2 else "  > 2x"
            print(f"{name:<28}{few:>13.2f} ms{many:>17.2f} ms{ratio:>7.2f}x{flag}")
        print(
            f"\non disk: {size_per_round(large) / 1024:.2f} KiB a round "
            f"({large.stat().st_size / 2**20:.0f} MiB for {n_large:,} rounds, ~1 KB drafts, "
            f"{len(KEYS)} criteria)"
        )


if __name__ == "__main__":
    main()
