"""Grading at scale: concurrency against a fixed-latency server, the verdict cache, batches.

Run: ``python benchmarks/bench_scale.py [--drafts 500] [--latency 0.1] [--jobs 1,8,32,64]
[--batch-drafts 1000] [--repeat 3]``

The Messages-API emulator of the test suite runs in its own process (so its work does
not share this process's interpreter lock) and answers every request after a fixed
``--latency``. Printed, each measured in this run:

* ``grade_many`` over ``--drafts`` drafts, a rubric of 3 judge keys and 2 code keys
  (``code_runs``, ``sentence_len``), at each ``--jobs``: wall time, the ideal
  (drafts x latency / jobs), the share of the ideal reached, the speed-up over
  ``--jobs 1`` and the requests the server received (target: >= 90 % of the ideal
  at 32); each ``--jobs`` above 1 runs ``--repeat`` times (the machine's speed drifts
  by several points from run to run): every run's share is printed, with the CPU
  time the hypervisor took from this machine meanwhile (``steal`` in /proc/stat),
  and the row holds the best; beside it, the baseline of the issue: ``grade()`` in
  a thread pool of the same size, with the sync client; then the client's CPU a
  draft, the server's CPU a request, and how late the server's answers left
  (median / largest, in ms after arrival + latency: the emulator's own precision),
  all for the last ``grade_many`` run;
* the same grading run twice with a verdict cache: the second run's requests (0) and
  time;
* the Message Batches path over ``--batch-drafts`` drafts: submitted, waited for and
  collected, with the HTTP requests it took.

Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradeloop import (
    AnthropicJudge,
    DraftItem,
    HistoryStore,
    JudgeCache,
    Rubric,
    batches,
    grade,
    grade_many,
    make_client,
)

HERE = Path(__file__).resolve().parent
RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "api_cited", "description": "Every API claim cites a spec section."},
            {"key": "errors_named", "description": "All four failure codes are named."},
            {"key": "tone", "description": "Plain and polite, no marketing voice."},
            {
                "key": "code_runs",
                "description": "Every sample is valid Python 3.9.",
                "checker": "code_runs",
            },
            {
                "key": "short_sentences",
                "description": "No sentence over 40 words.",
                "checker": "sentence_len",
            },
        ]
    }
)


def draft(n: int) -> str:
    """A ~1 KB guide, different for every n (so no two requests are the same)."""
    return (
        f"# Payments guide, part {n}\n\n"
        "Charges are created with `POST /v1/charges` (section 4.2). A declined card "
        "returns 402; a bad key 401; a missing field 400; a server error 500.\n\n"
        "```python\nimport json\n\n"
        f"def charge(amount: int = {n}) -> str:\n"
        "    return json.dumps({'amount': amount, 'currency': 'eur'})\n```\n\n"
        + "Retry only on 500, with a backoff of a second or two. "
        * 6
    )


class Server:
    """The emulator in a child process."""

    def __init__(self, latency: float, front: str = "asyncio") -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "_emulator_server.py"),
                "--latency",
                str(latency),
                "--front",
                front,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        if not self.base_url:
            raise SystemExit(
                "bench_scale: the emulator did not start (its error is above); run the "
                "benchmarks where the dev extras are installed: pip install -e '.[dev]'"
            )

    def counts(self) -> dict[str, float]:
        """Requests received so far (``messages``, ``batches``) and CPU used (``cpu_s``)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        out: dict[str, float] = json.loads(self.proc.stdout.readline())
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)


def judge(server: Server, cache: JudgeCache | None = None) -> AnthropicJudge:
    return AnthropicJudge(
        make_client(base_url=server.base_url), model="claude-opus-5-5", cache=cache
    )


def timed(server: Server, fn: Any) -> tuple[Any, float, dict[str, float]]:
    """``fn()``, its wall time, and what it cost: requests and server CPU (the server's
    counts), and ``client_cpu_s``, this process's CPU seconds."""
    before = server.counts()
    steal = stolen_ms()
    cpu, started = time.process_time(), time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu
    steal = stolen_ms() - steal
    after = server.counts()
    spent = {k: after[k] - before[k] for k in ("messages", "batches", "cpu_s")}
    late = {k: after[k] for k in after if k.startswith("late_")}  # since the last count
    return result, elapsed, spent | late | {"client_cpu_s": client_cpu, "steal_ms": steal}


def stolen_ms() -> float:
    """The machine's CPU time taken by its hypervisor so far (``steal`` in
    /proc/stat, all CPUs, in ms); NaN where there is no /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
        return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def concurrency(server: Server, n: int, latency: float, jobs: list[int], repeat: int) -> None:
    drafts = [draft(i) for i in range(n)]
    print(f"grade_many: {n} drafts, 3 judge keys + 2 code keys, {latency * 1000:.0f} ms a request")
    print(
        f"{'jobs':>6} {'wall s':>8} {'ideal s':>8} {'% ideal':>8} {'speed-up':>9} "
        f"{'requests':>9} {'threads s':>10} {'% ideal':>8} {'client ms':>10} {'server ms':>10}"
        f" {'late ms':>10}"
    )
    serial: float | None = None
    for j in jobs:
        walls: list[float] = []
        steals: list[float] = []
        for _ in range(1 if j == 1 else repeat):
            fresh = judge(server)  # built before the clock starts, as a caller holds one
            evaluations, one, counts = timed(
                server,
                lambda j=j, fresh=fresh: grade_many(
                    drafts, RUBRIC, task="t", judge=fresh, concurrency=j
                ),
            )
            assert len(evaluations) == n and all(e.judge_error is None for e in evaluations)
            walls.append(one)
            steals.append(counts["steal_ms"])
        wall = min(walls)
        ideal = n * latency / j
        if len(walls) > 1:
            each = " / ".join(f"{ideal / w * 100:.0f}" for w in walls)
            stolen = " / ".join(f"{ms:.0f}" for ms in steals)
            print(
                f"{'':>6} runs at {j}: {each} % of the ideal (the best is in the row);"
                f" CPU time the host took meanwhile: {stolen} ms"
            )
        if j == 1:
            serial = wall
        speedup = f"{(serial / wall):.1f}x" if serial else "-"
        pooled = threads(server, drafts, j) if j > 1 else wall
        print(
            f"{j:>6} {wall:>8.2f} {ideal:>8.2f} {ideal / wall * 100:>7.0f}% {speedup:>9}"
            f" {counts['messages']:>9.0f} {pooled:>10.2f} {ideal / pooled * 100:>7.0f}%"
            f" {counts['client_cpu_s'] / n * 1000:>10.2f}"
            f" {counts['cpu_s'] / max(1, counts['messages']) * 1000:>10.2f}"
            f" {counts.get('late_median_ms', 0):>5.2f}/{counts.get('late_max_ms', 0):<4.1f}"
        )


def threads(server: Server, drafts: list[str], jobs: int) -> float:
    """The baseline: grade() in a thread pool, sharing one judge on the sync client."""
    shared = judge(server)
    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda d: grade(d, RUBRIC, task="t", judge=shared), drafts))
    return time.perf_counter() - started


def cached(server: Server, n: int, jobs: int, folder: Path) -> None:
    drafts = [draft(i) for i in range(n)]
    with JudgeCache(folder / "cache.db") as cache:
        cached_judge = judge(server, cache)
        _, first, c1 = timed(
            server,
            lambda: grade_many(drafts, RUBRIC, task="t", judge=cached_judge, concurrency=jobs),
        )
        again, second, c2 = timed(
            server,
            lambda: grade_many(drafts, RUBRIC, task="t", judge=cached_judge, concurrency=jobs),
        )
    assert all(e.judge_cached for e in again)
    print(
        f"\nverdict cache, {n} drafts at --jobs {jobs}: first run {first:.2f} s with "
        f"{c1['messages']} requests; second run {second:.2f} s with {c2['messages']} requests "
        f"({first / second:.1f}x faster)"
    )


def batch(server: Server, n: int, folder: Path) -> None:
    items = [DraftItem(f"d{i}", "t", draft(i)) for i in range(n)]
    j = judge(server)
    with HistoryStore(folder / "history.db") as store:
        job, t_submit, c_submit = timed(
            server, lambda: batches.submit(items, RUBRIC, judge=j, store=store)
        )
        result, t_collect, c_collect = timed(
            server,
            lambda: (
                batches.wait(job, client=j.client, store=store, poll=0.05),
                batches.collect(job, judge=j, store=store),
            )[1],
        )
    assert len(result.evaluations) == n and all(e.accepted for e in result.evaluations)
    calls = c_submit["batches"] + c_collect["batches"]
    cost = sum(e.judge_usage.cost_usd for e in result.evaluations)
    print(
        f"\nMessage Batches, {n} drafts: submitted in {t_submit:.2f} s, waited for and "
        f"collected in {t_collect:.2f} s; {calls} HTTP requests to the batch endpoints and "
        f"{c_submit['messages'] + c_collect['messages']} to /v1/messages; judge cost "
        f"${cost:.4f} at the batch price"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drafts", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--jobs", default="1,8,32,64")
    parser.add_argument("--batch-drafts", type=int, default=1000)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each --jobs above 1 (the row shows the best; every run is printed)",
    )
    parser.add_argument(
        "--front",
        choices=("asyncio", "threads"),
        default="asyncio",
        help="the emulator's HTTP front (see _emulator_server.py)",
    )
    args = parser.parse_args()
    server = Server(args.latency, args.front)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            concurrency(
                server,
                args.drafts,
                args.latency,
                [int(x) for x in args.jobs.split(",")],
                args.repeat,
            )
            cached(server, args.drafts, 32, Path(tmp))
            batch(server, args.batch_drafts, Path(tmp))
    finally:
        server.close()


if __name__ == "__main__":
    main()
