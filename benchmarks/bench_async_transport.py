"""agrade_many's async client: the lean asyncio transport against httpx's own, A/B.

Run: ``python benchmarks/bench_async_transport.py [--drafts 500] [--latency 0.1]
[--jobs 32] [--runs 3]``

The emulator of benchmarks/bench_scale.py (its own process, a fixed ``--latency``)
answers ``agrade_many`` (awaited directly, so the judge goes through the async twin,
not grade_many's sync client in worker threads), the same 500 drafts and rubric as
bench_scale. Runs alternate between the lean transport (models/_atransport.py) and
httpx's (``GRADELOOP_HTTPX_TRANSPORT=1``), each on a fresh judge after one warm-up
run of each; printed per run: wall time, the share of the ideal (drafts x latency /
jobs) reached, and the client's CPU a draft. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import RUBRIC, Server, draft, judge

from gradeloop import agrade_many
from gradeloop.models._transport import OPT_OUT


def run_once(server: Server, drafts: list[str], jobs: int, lean: bool) -> tuple[float, float]:
    """(wall s, client CPU s) of one agrade_many run on a fresh judge."""
    if lean:
        os.environ.pop(OPT_OUT, None)
    else:
        os.environ[OPT_OUT] = "1"
    fresh = judge(server)

    async def main() -> None:
        # the code checkers' worker threads, as grade_many sizes them
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(jobs))
        try:
            out = await agrade_many(drafts, RUBRIC, task="t", judge=fresh, concurrency=jobs)
            assert len(out) == len(drafts) and all(e.judge_error is None for e in out)
        finally:
            await fresh.aclose()

    cpu, started = time.process_time(), time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drafts", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--jobs", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    server = Server(args.latency)
    try:
        drafts = [draft(i) for i in range(args.drafts)]
        ideal = args.drafts * args.latency / args.jobs
        for lean in (True, False):  # warm-up: imports, TLS context, first connections
            run_once(server, drafts[:64], args.jobs, lean)
        print(f"agrade_many: {args.drafts} drafts at {args.jobs}, ideal {ideal:.2f} s")
        print(f"{'transport':>10} {'wall s':>8} {'% ideal':>8} {'client ms':>10}")
        for _ in range(args.runs):
            for lean in (True, False):
                wall, cpu = run_once(server, drafts, args.jobs, lean)
                print(
                    f"{'lean' if lean else 'httpx':>10} {wall:>8.2f} {ideal / wall * 100:>7.0f}%"
                    f" {cpu / args.drafts * 1000:>10.2f}"
                )
    finally:
        server.close()


if __name__ == "__main__":
    main()
