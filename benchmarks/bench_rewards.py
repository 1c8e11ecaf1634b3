"""Rewards at training scale: a GRPO step of 512 prompts x 8 generations is 4,096 rewards.

Run: ``python benchmarks/bench_rewards.py [--rollouts 4096] [--jobs 256] [--latency 1.0]
[--repeat 3]`` (where the dev extras are installed: ``pip install -e '.[dev]'``).

1. **Code keys only** (a format regex, a length bound, the reference answer contained:
   what RL rewards check by code), 4,096 distinct completions through
   :func:`gradeloop.rewards.trl_reward`, called as TRL calls it, pinned to one core;
   then a step as GRPO makes it, 512 prompts x 8 generations of which a quarter repeat
   another of the same prompt (identical rollouts are graded once). Target: < 1 s.
2. **With a judge key** at ``--latency`` seconds a request (the Messages-API emulator in
   its own process, as ``bench_scale.py`` runs it), ``--jobs`` requests in flight: the
   4,096 distinct completions as one batch (the TRL form) and as 4,096 single rollouts
   awaited at once (verl's streaming form). Ideal wall = ceil(rollouts / jobs) x
   latency. Printed: rewards per second, wall / ideal (target <= 1.3 at 256 in flight)
   and this process's CPU a reward, beside plain ``grade_many`` on the same drafts (the
   forms alternated, so a busy machine slows each alike).

Every run's figure is printed and the row holds the best. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradeloop import AnthropicJudge, Rubric, grade_many, make_client
from gradeloop.migration import DraftItem
from gradeloop.rewards import trl_reward, verl_reward

HERE = Path(__file__).resolve().parent
CODE_KEYS = [
    {
        "key": "format",
        "description": "The answer ends with a line 'Answer: <number>'.",
        "checker": "regex",
        "options": {"pattern": r"Answer: -?\d+\s*$"},
    },
    {
        "key": "brief",
        "description": "At most 80 words.",
        "checker": "length",
        "options": {"max_words": 80},
    },
    {
        "key": "correct",
        "description": "The answer contains the reference answer.",
        "checker": "string_check",
        "options": {"operation": "like", "reference_field": "answer"},
    },
]
CODE = Rubric.from_dict({"criteria": CODE_KEYS})
JUDGED = Rubric.from_dict(
    {"criteria": [*CODE_KEYS, {"key": "reasoning", "description": "Each step follows."}]}
)


def completion(n: int) -> str:
    """A ~300-character worked answer, different for every n."""
    return (
        f"We add {n} and {n + 1}. First {n} plus {n} is {2 * n}; one more makes {2 * n + 1}. "
        "Checking: the two numbers differ by one, so the sum is odd, as found.\n"
        f"Answer: {2 * n + 1}"
    )


def columns(n: int, answers: list[str]) -> dict[str, Any]:
    return {"completion_ids": [[0]] * n, "trainer_state": None, "answer": answers}


def best(label: str, runs: list[float], extra: Callable[[float], str] = lambda w: "") -> None:
    shown = ", ".join(f"{r:.3f}" for r in runs)
    print(f"  {label:<44} best {min(runs):7.3f} s{extra(min(runs))}   runs: {shown}")


def code_only(rollouts: int, repeat: int) -> None:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    print(f"\ncode keys only ({len(CODE)} keys), one core, {rollouts} rollouts")
    texts = [completion(i) for i in range(rollouts)]
    answers = [str(2 * i + 1) for i in range(rollouts)]
    prompts = [f"Add {i} and {i + 1}." for i in range(rollouts)]
    numbers = [i // 8 * 8 + (i % 8) % 6 for i in range(rollouts)]  # 2 of 8 repeat one
    grouped_texts = [completion(n) for n in numbers]
    grouped_prompts = [f"Add {i // 8 * 8} and {i // 8 * 8 + 1}." for i in range(rollouts)]
    grouped_answers = [str(2 * n + 1) for n in numbers]
    for label, p, t, a in (
        ("distinct completions", prompts, texts, answers),
        ("512 prompts x 8, a quarter repeated", grouped_prompts, grouped_texts, grouped_answers),
    ):
        runs = []
        for _ in range(repeat):
            reward = trl_reward(CODE)
            started = time.perf_counter()
            out = reward(prompts=p, completions=t, **columns(rollouts, a))
            runs.append(time.perf_counter() - started)
            assert len(out) == rollouts and all(r is not None for r in out)
        unique = reward.steps[-1].unique
        per = lambda w: f", {w / rollouts * 1e6:5.0f} us a reward"  # noqa: E731
        best(f"{label} ({unique} graded)", runs, per)
    os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))


class Server:
    """The Messages-API emulator in a child process (benchmarks/_emulator_server.py)."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "_emulator_server.py"), "--latency", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        if not self.base_url:
            raise SystemExit("bench_rewards: the emulator did not start (its error is above)")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)


def judged(rollouts: int, jobs: int, latency: float, repeat: int) -> None:
    ideal = math.ceil(rollouts / jobs) * latency
    print(
        f"\nwith a judge key at {latency:g} s a request, {jobs} in flight, {rollouts} distinct "
        f"rollouts (ideal {ideal:g} s)"
    )
    server = Server(latency)
    texts = [completion(i) for i in range(rollouts)]
    answers = [str(2 * i + 1) for i in range(rollouts)]
    prompts = [f"Add {i} and {i + 1}." for i in range(rollouts)]
    try:
        forms = ("grade_many (the baseline)", "batch (TRL)", "one by one (verl)")
        runs: dict[str, list[float]] = {f: [] for f in forms}
        cpu: dict[str, list[float]] = {f: [] for f in forms}
        for _ in range(repeat):  # alternated, so a drift of the machine hits every form
            for form in forms:
                client = make_client(base_url=server.base_url)
                judge = AnthropicJudge(client, model="claude-opus-5-5")
                started, cpu_started = time.perf_counter(), time.process_time()
                out = _one_form(form, judge, jobs, prompts, texts, answers)
                runs[form].append(time.perf_counter() - started)
                cpu[form].append(time.process_time() - cpu_started)
                assert len(out) == rollouts and all(r is not None for r in out)
        for form in forms:
            client_ms = min(cpu[form]) / rollouts * 1000
            best(
                form,
                runs[form],
                lambda w, c=client_ms: (
                    f", {rollouts / w:5.0f} rewards/s, wall/ideal "
                    f"{w / ideal:.2f}, client CPU {c:.2f} ms/reward"
                ),
            )
    finally:
        server.close()


def _one_form(
    form: str, judge: Any, jobs: int, prompts: list[str], texts: list[str], answers: list[str]
) -> list[Any]:
    if form.startswith("grade_many"):
        items = [
            DraftItem(f"r{i}", p, t, metadata={"answer": a})
            for i, (p, t, a) in enumerate(zip(prompts, texts, answers, strict=True))
        ]
        return [e.overall_score for e in grade_many(items, JUDGED, judge=judge, concurrency=jobs)]
    if form.startswith("batch"):
        reward = trl_reward(JUDGED, judge=judge, concurrency=jobs)
        out = reward(prompts=prompts, completions=texts, **columns(len(texts), answers))
        assert reward.steps[-1].unanswered == 0
        return out
    return asyncio.run(_streamed(judge, jobs, texts, answers))


async def _streamed(judge: Any, jobs: int, texts: list[str], answers: list[str]) -> list[Any]:
    compute_score = verl_reward(JUDGED, judge=judge, asynchronous=True, concurrency=jobs)
    try:
        results = await asyncio.gather(
            *(
                compute_score("bench", t, a, {"question": "Add.", "answer": a})
                for t, a in zip(texts, answers, strict=True)
            )
        )
    finally:
        await compute_score.__self__.aclose()
    return [r["score"] if r["judge_ok"] else None for r in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=4096)
    parser.add_argument("--jobs", type=int, default=256)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-judge", action="store_true", help="only the code-only figures")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    code_only(args.rollouts, args.repeat)
    if not args.skip_judge:
        judged(args.rollouts, args.jobs, args.latency, max(1, args.repeat - 1))


if __name__ == "__main__":
    main()
