"""Grading at scale on the SDK's own HTTP clients, at the latency judge calls really have.

Run: ``python benchmarks/bench_scale.py [--latency 1.0,0.1] [--jobs 64,256] [--waves 4]
[--repeat 2] [--batch-drafts 1000]`` (where the dev extras are installed:
``pip install -e '.[dev]'``; the emulator needs them).

The Messages-API emulator of the test suite runs in its own process (so its work does
not share this process's interpreter lock) and answers every ``/v1/messages`` request
``--latency`` seconds after it arrived. A real judge request takes 1-10 s, so 1.0 s is
the figure that matters; 0.1 s is printed for comparison (there the client's own CPU
shows).

For each latency and each ``--jobs`` (drafts in flight), ``grade_many`` grades
``jobs x waves`` drafts (a rubric of 3 judge keys and 2 code keys), so the ideal wall
time is ``waves x latency``. Three ways to send, measured in the same run, alternated,
``--repeat`` times each (every run's figure is printed, the row holds the best):

* ``aiohttp`` - the async twin on ``anthropic.DefaultAioHttpClient`` (``gradeloop[aiohttp]``);
* ``httpx`` - the async twin on ``anthropic.DefaultAsyncHttpxClient`` (without aiohttp);
* ``threads`` - the baseline: ``grade()`` in a thread pool of ``jobs`` threads, sharing one
  judge on the SDK's sync client.

Printed: wall time, wall / ideal (targets: <= 1.2 at 64 in flight, <= 1.6 at 256 with
a 1.0 s latency), the client's CPU per request (this process) and the server's. Then,
at 0.1 s: the verdict cache (a second run sends nothing) and the Message Batches path.
Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._emulator_server import open_files_limit

from gradeloop import (
    AnthropicJudge,
    HistoryStore,
    JudgeCache,
    Rubric,
    grade,
    grade_many,
    make_client,
)
from gradeloop.bulk import batches
from gradeloop.migration import DraftItem

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
WAYS = ("aiohttp", "httpx", "threads")


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

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "_emulator_server.py"), "--latency", str(latency)],
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


def timed(server: Server, fn: Callable[[], Any]) -> tuple[Any, float, dict[str, float]]:
    """``fn()``, its wall time, and what it cost: requests and server CPU (the server's
    counts), and ``client_cpu_s``, this process's CPU seconds."""
    before = server.counts()
    cpu, started = time.process_time(), time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu
    after = server.counts()
    spent = {k: after[k] - before[k] for k in ("messages", "batches", "cpu_s")}
    return result, elapsed, spent | {"client_cpu_s": client_cpu}


class NoAiohttp:
    """Stands in for the SDK's aiohttp client, as it is without the aiohttp extra."""

    def __init__(self, **kwargs: Any) -> None:
        raise RuntimeError("To use the aiohttp client you must have installed the package")


def one_run(server: Server, way: str, drafts: list[str], jobs: int) -> Callable[[], Any]:
    """What one timed run does, for ``way``; the judge is built before the clock starts,
    as a caller holds one."""
    import anthropic

    fresh = judge(server)
    if way == "threads":

        def pooled() -> list[Any]:
            with ThreadPoolExecutor(jobs) as pool:
                return list(pool.map(lambda d: grade(d, RUBRIC, task="t", judge=fresh), drafts))

        return pooled

    def batch() -> list[Any]:
        real = anthropic.DefaultAioHttpClient
        if way == "httpx":
            anthropic.DefaultAioHttpClient = NoAiohttp  # type: ignore[misc,assignment]
        try:
            return grade_many(drafts, RUBRIC, task="t", judge=fresh, concurrency=jobs)
        finally:
            anthropic.DefaultAioHttpClient = real  # type: ignore[misc]

    return batch


def concurrency(server: Server, jobs: list[int], waves: int, repeat: int) -> None:
    latency = server.latency
    print(
        f"\n{latency * 1000:.0f} ms a request; {waves} waves of drafts "
        "(ideal wall = waves x latency); 3 judge keys + 2 code keys"
    )
    print(
        f"{'in flight':>9} {'way':>8} {'drafts':>7} {'wall s':>7} {'ideal s':>8} "
        f"{'wall/ideal':>10} {'client ms/req':>14} {'server ms/req':>14}  runs (wall/ideal)"
    )
    ideal = waves * latency
    for j in jobs:
        drafts = [draft(i) for i in range(j * waves)]
        runs: dict[str, list[tuple[float, dict[str, float]]]] = {w: [] for w in WAYS}
        for _ in range(repeat):  # alternated, so a drift of the machine hits every way
            for way in WAYS:
                out, wall, counts = timed(server, one_run(server, way, drafts, j))
                assert len(out) == len(drafts) and all(e.judge_error is None for e in out)
                runs[way].append((wall, counts))
        for way in WAYS:
            wall, counts = min(runs[way], key=lambda r: r[0])
            requests = max(1.0, counts["messages"])
            each = " / ".join(f"{w / ideal:.2f}" for w, _ in runs[way])
            print(
                f"{j:>9} {way:>8} {len(drafts):>7} {wall:>7.2f} {ideal:>8.2f} "
                f"{wall / ideal:>10.2f} {counts['client_cpu_s'] / requests * 1000:>14.2f}"
                f" {counts['cpu_s'] / requests * 1000:>14.2f}  {each}"
            )


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
        f"\nverdict cache, {n} drafts at {jobs} in flight, {server.latency * 1000:.0f} ms a "
        f"request: first run {first:.2f} s with {c1['messages']:.0f} requests; second run "
        f"{second:.2f} s with {c2['messages']:.0f} requests ({first / second:.1f}x faster)"
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
        f"collected in {t_collect:.2f} s; {calls:.0f} HTTP requests to the batch endpoints "
        f"and {c_submit['messages'] + c_collect['messages']:.0f} to /v1/messages; judge "
        f"cost ${cost:.4f} at the batch price"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", default="1.0,0.1", help="seconds a request, comma-separated")
    parser.add_argument("--jobs", default="64,256", help="drafts in flight, comma-separated")
    parser.add_argument("--waves", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each way (alternated)")
    parser.add_argument("--batch-drafts", type=int, default=1000)
    args = parser.parse_args()
    jobs = [int(x) for x in args.jobs.split(",")]
    limit = open_files_limit()  # each connection in flight is a descriptor here too
    print(f"open-files limit {limit}; python {sys.version.split()[0]}")
    for latency in (float(x) for x in args.latency.split(",")):
        server = Server(latency)
        try:
            concurrency(server, jobs, args.waves, args.repeat)
            if latency < 0.5:  # the cache and batch figures, where a run is short
                with tempfile.TemporaryDirectory() as tmp:
                    cached(server, 500, 32, Path(tmp))
                    batch(server, args.batch_drafts, Path(tmp))
        finally:
            server.close()


if __name__ == "__main__":
    main()
