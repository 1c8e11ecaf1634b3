"""The loop's own cost: framework overhead per round, history recording, wire traffic.

Run: ``python benchmarks/bench_loop.py [--loops N]``

Prints, each measured in this run:

* the framework's overhead per round: ``run_loop`` (and ``optimize``) with
  zero-latency fakes, minus the bare eleven-line seed loop driving the same fakes
  (target: under 1 ms a round);
* the extra cost per round of recording each iteration to SQLite (target: under
  2 ms a round), and the database size per 1,000 rounds;
* through the test suite's Messages-API emulator and the real ``anthropic``
  client: requests and bytes sent per round.

Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.emulator

from gradeloop import (
    AnthropicGenerator,
    AnthropicJudge,
    Criterion,
    HistoryStore,
    Rubric,
    Verdict,
    accepted,
    optimize,
    run_loop,
)
from gradeloop.testing import text_reply, verdict_reply

KEYS = ("api_cited", "errors_named", "no_invention", "tone", "structure")
ROUNDS = 3
RUBRIC = Rubric.from_dict({"criteria": [{"key": k, "description": f"{k} holds."} for k in KEYS]})
FAIL = Verdict(
    reasoning="r",
    criteria_met=dict.fromkeys(KEYS, False),
    passed=False,
    issues=["cite the section", "name the error codes"],
)


class Gen:
    """Each draft a different ~1 KB text, as a real revision would be."""

    def __init__(self) -> None:
        self.n = 0

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.n += 1
        return " ".join(f"w{self.n}x{i % 97}" for i in range(160))


class Judge:
    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        return FAIL


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
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / (loops * ROUNDS) * 1000)
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


def wire() -> None:
    from tests.emulator import Emulator

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
    wire()


if __name__ == "__main__":
    main()
