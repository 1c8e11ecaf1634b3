"""Throughput under faults: ``grade_many`` when 1 reply in 10 is a 429, a 500 or a reset.

Run: ``python benchmarks/bench_faults.py [--drafts 5000] [--jobs 128] [--latency 0.2]
[--faults 0.1] [--repeat 1]`` (where the dev extras are installed: ``pip install -e
'.[dev]'``; the emulator needs them).

The Messages-API emulator runs in its own process (``_emulator_server.py``) and
answers every ``/v1/messages`` request ``--latency`` seconds after it arrived; with
``--faults``, that share of the answers is a fault, the three kinds equally often
(seeded): a 429 with ``retry-after: 1``, a 500, or the connection dropped with no
answer. The client is gradeloop's own (``make_client``, the SDK's retries with
``max_retries=4``), so what it meets is what a run against a busy gateway meets: the
SDK retries each failed request, and the batch's pacer decides how many drafts are
in flight.

Printed, for the same drafts graded without faults and with them (alternated,
``--repeat`` times each, the best kept): wall time, the ratio (target: <= 3x the
fault-free wall time), the faults the server injected, the drafts in flight at the
end and the 429s the pacer saw, and whether every draft came back accepted (every
answer the emulator gives is a pass: a draft that is not accepted is a lost answer).
Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._emulator_server import open_files_limit

from gradeloop import AnthropicJudge, Rubric, grade_many, make_client
from gradeloop.bulk import ManyProgress

HERE = Path(__file__).resolve().parent
RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "api_cited", "description": "Every API claim cites a spec section."},
            {"key": "tone", "description": "Plain and polite, no marketing voice."},
            {"key": "short", "description": "At most 200 words.", "checker": "length",
             "options": {"max_words": 200}},
        ]
    }
)  # fmt: skip


class Server:
    """The emulator in a child process, with its faults."""

    def __init__(self, latency: float, faults: float, seed: int) -> None:
        args = ["--latency", str(latency), "--faults", str(faults), "--seed", str(seed)]
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "_emulator_server.py"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        if not self.base_url:
            raise SystemExit("bench_faults: the emulator did not start (its error is above)")

    def counts(self) -> dict[str, float]:
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


def run(server: Server, drafts: list[str], jobs: int) -> dict[str, Any]:
    """One timed ``grade_many`` over ``drafts``: wall time, what came back, the pacer."""
    judge = AnthropicJudge(make_client(base_url=server.base_url, max_retries=4))
    last: list[ManyProgress] = []
    before = server.counts()
    started = time.perf_counter()
    out = grade_many(drafts, RUBRIC, task="t", judge=judge, concurrency=jobs, progress=last.append)
    wall = time.perf_counter() - started
    after = server.counts()
    faults = {k: after[k] - before[k] for k in after if k.startswith("fault_")}
    return {
        "wall": wall,
        "accepted": sum(e.accepted for e in out),
        "failed": sum(e.judge_error is not None for e in out),
        "requests": after["messages"] - before["messages"],
        "faults": faults,
        "throttled": last[-1].throttled if last else 0,
        "in_flight": last[-1].concurrency if last else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drafts", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--faults", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    open_files_limit()
    drafts = [
        f"Draft {i}: charges are created with POST /v1/charges (4.2)." for i in range(args.drafts)
    ]
    clean = Server(args.latency, 0.0, args.seed)
    faulty = Server(args.latency, args.faults, args.seed)
    results: dict[str, list[dict[str, Any]]] = {"fault-free": [], "faults": []}
    try:
        for _ in range(args.repeat):
            results["fault-free"].append(run(clean, drafts, args.jobs))
            results["faults"].append(run(faulty, drafts, args.jobs))
    finally:
        clean.close()
        faulty.close()
    ideal = -(-args.drafts // args.jobs) * args.latency
    print(
        f"{args.drafts:,} drafts, {args.jobs} in flight, {args.latency * 1000:.0f} ms a "
        f"request (ideal {ideal:.1f} s), faults {args.faults:.0%} of the answers"
    )
    best = {name: min(runs, key=lambda r: r["wall"]) for name, runs in results.items()}
    for name, r in best.items():
        walls = " / ".join(f"{x['wall']:.2f}" for x in results[name])
        injected = ", ".join(f"{k[6:]} {v:.0f}" for k, v in r["faults"].items()) or "none"
        print(
            f"{name:>10}: {r['wall']:7.2f} s ({walls}); {r['requests']:.0f} requests, "
            f"faults: {injected}; 429s seen {r['throttled']}, in flight at the end "
            f"{r['in_flight']}; accepted {r['accepted']:,}/{args.drafts:,}, judge "
            f"failures {r['failed']}"
        )
    ratio = best["faults"]["wall"] / best["fault-free"]["wall"]
    print(f"with faults / fault-free: {ratio:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
