"""Grading on a local Ray cluster: how it scales, what it costs a draft, and whether
the global rate limit holds against a provider that enforces it.

Run: ``python benchmarks/bench_ray.py [--drafts 100000] [--judged 600] [--rate 20]``
(where the engines are installed: ``scripts/engines``).

1. **Code only.** ``--drafts`` different drafts the size of the shipped example's
   (``--join 8`` pieces of about 200 characters: 1,670; ``--join 1`` for short ones;
   two code keys: sentence_len and code_runs) graded by ``grade_many`` in a process
   of its own (as a user runs it; in this one, its 100,000 evaluations would leave
   the Ray driver a heap its garbage collector walks while it feeds the actors), then
   through Ray Data's
   ``map_batches(GradeBatch)`` on 1 and on 2 actors (batches of ``--batch`` rows,
   pyarrow; 2,000 by default, as ``grade_dataset`` batches code keys). The
   input is materialized first, and every run is timed to the last row in the object
   store (``materialize``), actor start included. The 1- and 2-actor runs take
   turns, ``--repeat`` times, so that a slow spell of the machine (figures move by
   up to 10 % from run to run here) falls on both; the best of each is compared, and
   each turn's own ratio is printed too, beside the machine's own ceiling: two
   processes of ``grade_many`` side by side, each grading half, launch to exit
   against one grading all. Printed: drafts a second, the scaling ratio
   (2 actors over 1; the target is 1.7x on a 2-core machine), the same past the
   start (the run of 2,000 drafts taken off), the actors' own CPU spent grading (how
   many cores were busy grading) and Ray's cost a draft over ``grade_many``'s.
2. **Judged, with a global limit.** ``--judged`` drafts whose judge keys are answered
   by the test suite's Messages-API emulator after 1.0 s, through 2 actors of 32
   drafts in flight each, with ``RateLimit(requests_per_minute=60 x --rate)``. The
   emulator enforces the same limit (a token bucket of one second's requests): a
   request over it gets a 429. Printed: the rate achieved (requests over the span from
   the first to the last arrival), its ratio to the limit (target >= 0.9) and the 429s
   (target 0).

The machine's load is printed before and after: other work on the two cores shows in
every figure. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._ray_workload import CODE, drafts
from tests.support.emulator import Emulator, HTTPError

from gradeloop import AnthropicJudge, Rubric, make_client
from gradeloop.integrations.ray import GradeBatch, RateLimit
from gradeloop.testing import verdict_reply

JUDGED = Rubric.from_dict(
    {
        "criteria": [
            {
                "key": "short",
                "description": "No sentence over 25 words.",
                "checker": "sentence_len",
                "options": {"max_words": 25},
            },
            {"key": "cites", "description": "Cites a section."},
            {"key": "polite", "description": "The tone is polite."},
        ]
    }
)


WORKLOAD = Path(__file__).resolve().parent / "_ray_workload.py"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class TimedGradeBatch(GradeBatch):
    """GradeBatch that also writes, on each row, its share of the CPU time its actor
    spent on the batch (so the run's grading CPU is the column's sum)."""

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        start = time.process_time()
        out = super().__call__(batch)
        share = (time.process_time() - start) / max(1, out.num_rows)
        return out.append_column("bench_cpu", pa.array([share] * out.num_rows))


class FrozenTimedGradeBatch(TimedGradeBatch):
    """docs/scale.md's recipe: the actor's owner freezes its set-up (``--freeze-actors``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        gc.freeze()


def code_only(
    ray: Any, n: int, repeat: int, batch: int, freeze: bool = False, join: int = 1
) -> None:
    one = [_processes(n, join, 1) for _ in range(repeat)]
    best_local, alone = min(inner for _, inner in one), min(wall for wall, _ in one)
    halves = min(_processes(n, join, 2)[0] for _ in range(repeat))
    rows = drafts(n, join)
    ds = ray.data.from_items(rows, override_num_blocks=max(4, n // 1000)).materialize()
    small = ray.data.from_items(rows[:2000], override_num_blocks=2).materialize()
    chars = sum(len(row["draft"]) for row in rows) / n
    del rows  # the drafts are in the object store now, as a dataset read from files
    runs: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    fixed: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(repeat):
        # 1 and 2 actors in turn, so that a slow spell of the machine falls on both
        for actors in (1, 2):
            runs[actors].append(_ray_code(ray, ds, actors, batch, freeze))
        for actors in (1, 2):
            # the same pipeline on 2,000 drafts: mostly the actors' start and the job's
            fixed[actors].append(_ray_code(ray, small, actors, batch, freeze)[0])
    walls = {a: min(runs[a])[0] for a in runs}
    cpus = {a: min(runs[a])[1] for a in runs}
    start = {a: min(fixed[a]) for a in fixed}
    per = {a: walls[a] / n * 1e6 for a in walls}
    steady = {a: (n - 2000) / (walls[a] - start[a]) for a in walls}
    local = best_local / n * 1e6
    print(
        f"code only, {n:,} drafts of {chars:,.0f} characters, batches of {batch:,} (load {load()}):"
    )
    print(
        f"  grade_many, own process: {best_local:6.2f} s  {n / best_local:8,.0f}/s  "
        f"{local:6.1f} us a draft"
    )
    for a in (1, 2):
        print(
            f"  Ray, {a} actor{'s' if a > 1 else ' '}:           {walls[a]:6.2f} s  "
            f"{n / walls[a]:8,.0f}/s  {per[a]:6.1f} us a draft; actors' grading CPU "
            f"{cpus[a] / n * 1e6:5.1f} us a draft, {cpus[a] / walls[a]:.2f} cores busy"
        )
    pairs = sorted(one[0] / two[0] for one, two in zip(runs[1], runs[2], strict=True))
    print(
        f"  scaling 2 actors / 1, start counted: {walls[1] / walls[2]:.2f}x best of "
        f"{repeat} (target >= 1.7x); run by run {', '.join(f'{p:.2f}' for p in pairs)}"
    )
    print(
        f"  no Ray: 2 processes of grade_many / 1, launch to exit: {alone / halves:.2f}x best of "
        f"{repeat} (the machine's own ceiling)"
    )
    print(
        f"  past the start (runs of 2,000 drafts: {start[1]:.2f} s, {start[2]:.2f} s): "
        f"{steady[1]:,.0f}/s and {steady[2]:,.0f}/s, {steady[2] / steady[1]:.2f}x"
    )
    print(
        f"  Ray's cost a draft over grade_many's (1 actor): {per[1] - local:+.1f} us "
        f"({per[1] / local:.2f}x)"
    )


def _processes(n: int, join: int, processes: int) -> tuple[float, float]:
    """``processes`` fresh processes side by side, each grading its share of the
    ``n`` drafts with ``grade_many`` (no Ray): their wall seconds, launch to exit,
    and the longest ``grade_many`` call among them (what one process spent grading)."""
    start = time.perf_counter()
    running = [
        subprocess.Popen(
            [sys.executable, str(WORKLOAD), str(n // processes), str(join)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    outputs = [p.communicate()[0] for p in running]
    wall = time.perf_counter() - start
    if any(p.returncode for p in running):
        raise SystemExit("the grade_many workload failed")
    return wall, max(float(out.split()[-1]) for out in outputs)


def _ray_code(ray: Any, ds: Any, actors: int, batch: int, freeze: bool) -> tuple[float, float]:
    """Wall seconds to the last row, and the actors' CPU seconds spent grading."""
    start = time.perf_counter()
    out = ds.map_batches(
        FrozenTimedGradeBatch if freeze else TimedGradeBatch,
        fn_constructor_kwargs={"rubric": CODE, "skip_judge": True, "run_id": "bench"},
        compute=ray.data.ActorPoolStrategy(size=actors),
        batch_size=batch,
        batch_format="pyarrow",
        zero_copy_batch=True,  # as grade_dataset asks
    ).materialize()
    wall = time.perf_counter() - start
    return wall, float(out.sum("bench_cpu"))


class LimitedEmulator(Emulator):
    """The emulator behind a provider's limit: a token bucket of ``rate`` requests a
    second holding one second's worth; a request over it gets a 429."""

    def __init__(self, rate: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate, self.level, self.at = rate, rate, time.monotonic()
        self.refused = 0
        self.arrivals: list[float] = []
        self._bucket = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        now = time.monotonic()
        with self._bucket:
            self.level = min(self.rate, self.level + (now - self.at) * self.rate)
            self.at = now
            if self.level < 1:
                self.refused += 1
                error = HTTPError(429, "rate limited", headers={"retry-after": "1"})
                return 429, dict(error.headers), error.body()
            self.level -= 1
            self.arrivals.append(now)
        return super().answer(body)


def verdict_for(body: dict[str, Any]) -> Any:
    schema = (body.get("output_config") or {}).get("format", {}).get("schema", {})
    keys = schema.get("$defs", {}).get("CriteriaMet", {}).get("required", [])
    return verdict_reply(
        {"reasoning": "r", "criteria_met": dict.fromkeys(keys, True), "passed": True, "issues": []}
    )


def emulator_judge(base_url: str) -> AnthropicJudge:
    return AnthropicJudge(make_client(api_key="k", base_url=base_url), model="claude-haiku-4-5")


def judged(ray: Any, n: int, rate: float, latency: float) -> None:
    # the server's own latency sleeps run in its request threads, so 1.0 s holds
    server = LimitedEmulator(rate, keep_alive=True, latency=latency)
    server.responder = verdict_for
    try:
        limit = RateLimit(requests_per_minute=rate * 60, name="bench-ray")
        ds = ray.data.from_items(drafts(n), override_num_blocks=8).materialize()
        start = time.perf_counter()
        ds.map_batches(
            GradeBatch,
            fn_constructor_kwargs={
                "rubric": JUDGED,
                "judge": functools.partial(emulator_judge, server.base_url),
                "rate_limit": limit,
                "concurrency": 32,
            },
            compute=ray.data.ActorPoolStrategy(size=2),
            batch_size=64,
            batch_format="pyarrow",
        ).materialize()
        wall = time.perf_counter() - start
        times = sorted(server.arrivals)
        achieved = (len(times) - 1) / (times[-1] - times[0])
        print(
            f"judged, {n} drafts at {latency:.1f} s latency, global limit {rate:g}/s, "
            f"2 actors x 32 in flight (load {load()}):"
        )
        print(
            f"  {len(times)} requests answered in {wall:.1f} s; achieved {achieved:.2f}/s = "
            f"{achieved / rate:.3f} of the limit (target >= 0.9); 429s: {server.refused}"
        )
    finally:
        server.close()
        from gradeloop.integrations.ray import remove_rate_limit

        remove_rate_limit("bench-ray")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--drafts", type=int, default=100_000)
    parser.add_argument("--judged", type=int, default=600)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--join",
        type=int,
        default=8,
        help="pieces of ~200 characters a code-only draft (8: the shipped example's size)",
    )
    parser.add_argument("--batch", type=int, default=2000, help="rows a batch, code only")
    parser.add_argument("--only", choices=("code", "judged"), default=None)
    parser.add_argument(
        "--freeze-actors",
        action="store_true",
        help="the actors' owner freezes their set-up (docs/scale.md's recipe)",
    )
    args = parser.parse_args()
    if args.judged < 2 and args.only != "code":
        parser.error("--judged needs at least 2 drafts for a rate (or give --only code)")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # the cluster on loopback
    import ray

    print(f"load before: {load()}")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
        configure_logging=False,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        if args.only in (None, "code"):
            code_only(ray, args.drafts, args.repeat, args.batch, args.freeze_actors, args.join)
        if args.only in (None, "judged"):
            judged(ray, args.judged, args.rate, args.latency)
    finally:
        ray.shutdown()
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
