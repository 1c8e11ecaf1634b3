"""The client's CPU per judge request: one ``AnthropicJudge`` on the SDK's own client.

Run: ``python benchmarks/bench_judge_cpu.py [--requests 400] [--repeat 5] [--inflight 8]``
(where the dev extras are installed). To compare two checkouts, run it with each on
``PYTHONPATH`` (``PYTHONPATH=../other/src python benchmarks/bench_judge_cpu.py``),
alternating, in the same minutes.

The Messages-API emulator (``_emulator_server.py``) runs in its own process and answers
at once (latency 0), so the client's own work is what is timed: the judge's flow, the
SDK's request pipeline, reading the reply. Two ways, alternated ``--repeat`` times:

* ``sync``  - ``judge.evaluate`` in a loop (the sync client);
* ``async`` - ``judge.aevaluate``, ``--inflight`` at a time (the async twin).

Printed: this process's CPU milliseconds per request (best run, then every run), and
the server's, for each way. A rubric of three judge keys; a ~1 KB draft.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scale import RUBRIC, Server, draft

import gradeloop
from gradeloop import AnthropicJudge, make_client


def run_sync(judge: AnthropicJudge, n: int) -> None:
    criteria = RUBRIC.judge_criteria
    for i in range(n):
        judge.evaluate("t", draft(i), criteria)


def run_async(judge: AnthropicJudge, n: int, inflight: int) -> None:
    criteria = RUBRIC.judge_criteria

    async def main() -> None:
        gate = asyncio.Semaphore(inflight)

        async def one(i: int) -> None:
            async with gate:
                await judge.aevaluate("t", draft(i), criteria)

        try:
            await asyncio.gather(*(one(i) for i in range(n)))
        finally:
            await judge.aclose()

    asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--inflight", type=int, default=8)
    args = parser.parse_args()
    server = Server(0.0)
    print(f"gradeloop from {Path(gradeloop.__file__).parent}; python {sys.version.split()[0]}")
    try:
        judge = AnthropicJudge(make_client(base_url=server.base_url), model="claude-opus-5-5")
        run_sync(judge, 50)  # warm: imports, the schema cache, connections
        run_async(judge, 50, args.inflight)
        runs: dict[str, list[tuple[float, float]]] = {"sync": [], "async": []}
        for _ in range(args.repeat):
            for way in runs:
                before = server.counts()
                cpu, wall = time.process_time(), time.perf_counter()
                if way == "sync":
                    run_sync(judge, args.requests)
                else:
                    run_async(judge, args.requests, args.inflight)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                after = server.counts()
                sent = after["messages"] - before["messages"]
                assert sent == args.requests, (sent, args.requests)
                runs[way].append(
                    (cpu / sent * 1000, (after["cpu_s"] - before["cpu_s"]) / sent * 1000)
                )
        for way, figures in runs.items():
            best = min(f[0] for f in figures)
            each = " / ".join(f"{c:.3f}" for c, _ in figures)
            server_ms = min(f[1] for f in figures)
            print(
                f"{way:>6}: client {best:.3f} ms a request (runs: {each}); server {server_ms:.3f}"
            )
    finally:
        server.close()


if __name__ == "__main__":
    main()
