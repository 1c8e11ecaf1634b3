"""The loop's own cost: framework overhead per round, history recording, wire traffic.

Run: ``python benchmarks/bench_loop.py [--loops N]``

Prints, each measured in this run (CPU time of this process):

* the framework's overhead per round: ``run_loop`` (and ``optimize``) with
  zero-latency fakes, minus the bare eleven-line seed loop driving the same fakes
  (target: under 1 ms a round);
* the extra cost per round of recording each iteration to SQLite (target: under
  2 ms a round), and the database size per 1,000 rounds;
* the cost of a round late in a long loop: rounds 1, 100 and 1,000 of one
  1,000-round loop with ``token_budget`` set (and without), in memory and
  recording to SQLite (it should stay flat: nothing a round does may re-read the
  whole history);
* the overhead of a round whose drafts are 1 MB (the similarity check, scrubbing
  and storing them), against the same loop with ~1 KB drafts;
* through the test suite's Messages-API emulator and the real ``anthropic``
  client: requests and bytes sent per round.

Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.support.emulator

from _common import FAIL, KEYS, RUBRIC, Gen, Judge

from gradeloop import (
    AnthropicGenerator,
    AnthropicJudge,
    Criterion,
    HistoryStore,
    Verdict,
    accepted,
    optimize,
    run_loop,
)
from gradeloop.models import CallRecord, Usage, record_call
from gradeloop.testing import text_reply, verdict_reply

ROUNDS = 3


def bare_loop(task: str, gen: Gen, judge: Judge, max_rounds: int = ROUNDS) -> tuple[str, bool]:
    """The seed's eleven lines, as the baseline."""
    draft = gen.generate(task)
    for round_no in range(1, max_rounds + 1):
        v = judge.evaluate(task, draft, list(RUBRIC))
        if accepted(v, KEYS):
            return draft, True
        if round_no == max_rounds:
            return draft, False
        draft = gen.generate(task, draft, v.issues)
    return draft, False


def per_round_ms(fn: Callable[[], Any], loops: int) -> float:
    """Best of 5 batches, CPU ms a round (on a shared machine the wall clock mostly
    measures the neighbours; SQLite in WAL mode commits without waiting on the disk)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(loops):
            fn()
        best = min(best, (time.process_time() - start) / (loops * ROUNDS) * 1000)
    return best


def overhead(loops: int) -> None:
    bare = per_round_ms(lambda: bare_loop("t", Gen(), Judge()), loops)
    looped = per_round_ms(
        lambda: run_loop("t", RUBRIC, generator=Gen(), judge=Judge(), stagnation_rounds=0), loops
    )
    seed = per_round_ms(lambda: optimize("t", RUBRIC, generator=Gen(), judge=Judge()), loops)
    print(f"bare seed loop           {bare:8.4f} ms/round")
    print(
        f"run_loop                 {looped:8.4f} ms/round  overhead {looped - bare:.4f} ms "
        f"({looped / bare:.1f}x bare; target overhead < 1 ms)"
    )
    print(f"optimize                 {seed:8.4f} ms/round  overhead {seed - bare:.4f} ms")


def recording(loops: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.db"
        with HistoryStore(path) as store:
            plain = per_round_ms(
                lambda: run_loop("t", RUBRIC, generator=Gen(), judge=Judge(), stagnation_rounds=0),
                loops,
            )
            stored = per_round_ms(
                lambda: run_loop(
                    "t", RUBRIC, generator=Gen(), judge=Judge(), stagnation_rounds=0, store=store
                ),
                loops,
            )
            rounds = len(store.list_loops(limit=10**9)) * ROUNDS
            store._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = path.stat().st_size
    print(
        f"recording to SQLite      {stored - plain:8.4f} ms/round extra "
        f"(target < 2 ms; {stored / plain:.1f}x the unrecorded loop)"
    )
    print(
        f"database size            {size / rounds * 1000 / 1024:8.1f} KiB per 1,000 rounds "
        f"({rounds} rounds of ~1 KB drafts, {len(KEYS)} criteria)"
    )


class MeteredGen(Gen):
    """Reports usage for each draft, as the Anthropic classes do."""

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        record_call(CallRecord("generate", "m", "end_turn", Usage(300, 400), 1.0))
        return super().generate(task, draft, issues)


class MeteredJudge(Judge):
    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        record_call(CallRecord("evaluate", "m", "end_turn", Usage(900, 120), 1.0))
        return FAIL


def round_times(
    rounds: int, token_budget: int | None = None, store: HistoryStore | None = None
) -> list[float]:
    """CPU ms of each round of one ``rounds``-round loop (from one round's record to
    the next; the fakes cost microseconds, so this is the loop's own work)."""
    marks: list[float] = []
    run_loop(
        "t",
        RUBRIC,
        generator=MeteredGen(),
        judge=MeteredJudge(),
        max_rounds=rounds,
        stagnation_rounds=0,
        on_iteration=lambda it: marks.append(time.process_time()),
        token_budget=token_budget,
        store=store,
    )
    return [(b - a) * 1000 for a, b in itertools.pairwise(marks)]


def long_loop(rounds: int = 1000, window: int = 25) -> None:
    """Rounds 1, 100 and 1,000 of one long loop: flat, with or without a budget."""
    print(f"\nper round late in one {rounds:,}-round loop (CPU ms, median of {window} rounds)")
    marks = (1, 100, rounds)
    print(f"{'':<34}" + "".join(f"{'round ' + format(m, ','):>14}" for m in marks))
    with tempfile.TemporaryDirectory() as tmp, HistoryStore(Path(tmp) / "h.db") as store:
        for name, budget, kept in (
            ("token_budget=10**12", 10**12, None),
            ("no budget", None, None),
            ("token_budget, SQLite", 10**12, store),
        ):
            times = round_times(rounds, budget, kept)
            cells = []
            for m in marks:
                lo = min(max(0, m - 1), len(times) - window)  # the window ending at round m
                chunk = sorted(times[lo : lo + window])
                cells.append(chunk[len(chunk) // 2])
            print(f"{name:<34}" + "".join(f"{c:>14.3f}" for c in cells))


class BigGen:
    """Drafts of ``size`` characters, each revision a tenth rewritten (not stagnant)."""

    def __init__(self, size: int) -> None:
        words = [f"w{i % 5000}x{(i * 7) % 13}" for i in range(size // 8)]
        self.words, self.n = words, 0

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.n += 1
        out = list(self.words)
        for i in range(self.n % 10, len(out), 10):
            out[i] = f"r{self.n}"
        return " ".join(out)


def big_drafts(size: int = 1_000_000, rounds: int = 4, loops: int = 3) -> None:
    """Overhead a round with 1 MB drafts vs ~1 KB ones, in memory and with SQLite."""
    print(f"\nper round with {size / 1e6:g} MB drafts ({rounds} rounds, default similarity check)")
    makers: tuple[tuple[str, Callable[[], Any]], ...] = (
        ("~1 KB drafts", Gen),
        ("1 MB drafts", lambda: BigGen(size)),
    )
    for label, make in makers:
        with tempfile.TemporaryDirectory() as tmp, HistoryStore(Path(tmp) / "h.db") as store:
            for where, kept in (("in memory", None), ("SQLite", store)):
                best = float("inf")
                for _ in range(loops):
                    gen = _Replay(make(), rounds)  # the drafts are made before timing
                    start = time.process_time()
                    result = run_loop(
                        "t",
                        RUBRIC,
                        generator=gen,
                        judge=Judge(),
                        max_rounds=rounds,
                        stagnation_rounds=0,
                        store=kept,
                    )
                    took = (time.process_time() - start) * 1000 / len(result.history)
                    best = min(best, took)
                print(f"{label + ', ' + where:<34}{best:>10.3f} ms/round")


class _Replay:
    """Hands out drafts made beforehand, so their making is not timed."""

    def __init__(self, gen: Any, rounds: int) -> None:
        self.texts: list[str] = [gen.generate("t") for _ in range(rounds)]

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        return self.texts.pop(0)


def wire() -> None:
    from tests.support.emulator import Emulator

    em = Emulator()
    try:

        def answer(body: dict[str, Any]) -> Any:
            if "output_config" in body:
                return verdict_reply(
                    {
                        "reasoning": "checked",
                        "passed": False,
                        "criteria_met": dict.fromkeys(KEYS, False),
                        "issues": ["cite the section"],
                    }
                )
            n = sum("output_config" not in b for b in em.bodies)
            return text_reply(" ".join(f"w{n}x{i % 97}" for i in range(160)))

        em.responder = answer
        client = em.client()
        run_loop(
            "Write the guide.",
            RUBRIC,
            generator=AnthropicGenerator(client),
            judge=AnthropicJudge(client),
            stagnation_rounds=0,
            max_rounds=ROUNDS,
        )
        sizes = [len(json.dumps(b).encode()) for b in em.bodies]
        judge_sizes = [s for s, b in zip(sizes, em.bodies, strict=True) if "output_config" in b]
    finally:
        em.close()
    print(f"requests per round       {len(sizes) / ROUNDS:8.1f}  ({len(sizes)} at cap {ROUNDS})")
    print(
        f"bytes sent per round     {sum(sizes) / ROUNDS:8.0f}  (judge requests "
        f"{sum(judge_sizes) / len(judge_sizes):.0f} B each, with a ~1 KB draft)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=300, help="loops per timing (default 300)")
    args = parser.parse_args()
    print(f"gradeloop loop benchmark, {ROUNDS} rounds a loop, {len(KEYS)} judge criteria\n")
    overhead(args.loops)
    recording(max(20, args.loops // 5))
    long_loop()
    big_drafts()
    wire()


if __name__ == "__main__":
    main()
