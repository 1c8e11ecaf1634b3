"""Usage attribution when one judge and one generator serve many threads at once.

Each loop must count exactly the requests it made: the emulator's own record of
what it sent is the ground truth.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gradeloop import AnthropicGenerator, AnthropicJudge, Rubric, run_loop
from gradeloop.errors import JudgeError
from gradeloop.grading import Registry
from gradeloop.models import Usage
from gradeloop.testing import text_reply, verdict_reply
from tests.support.emulator import Emulator

THREADS = 32
TAG = re.compile(r"LOOP-(\d+)-END")


def _loop_of(body: dict[str, Any]) -> int:
    text = json.dumps(body["messages"])
    found = TAG.search(text)
    assert found, "every request carries its loop's tag"
    return int(found.group(1))


def _responder(body: dict[str, Any]) -> Any:
    time.sleep(random.uniform(0, 0.004))  # let the threads' calls interleave
    n = _loop_of(body)
    if "output_config" in body:  # a judge request: fail, so every loop runs all rounds
        return verdict_reply(
            {
                "reasoning": "x" * (n * 7),  # a different size per loop
                "criteria_met": {"tone": False},
                "passed": False,
                "issues": [f"fix {n}"],
            }
        )
    return text_reply(f"draft of loop {n} " + "y" * (n * 13 + random.randrange(50)))


def _usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        raw["input_tokens"],
        raw["output_tokens"],
        raw["cache_creation_input_tokens"],
        raw["cache_read_input_tokens"],
    )


def test_32_threads_sharing_one_judge_and_generator_count_their_own_calls(
    emulator: Emulator,
) -> None:
    emulator.responder = _responder
    client = emulator.client()
    generator, judge = AnthropicGenerator(client), AnthropicJudge(client)
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "tone", "description": "Warm."}]}, registry=Registry(autoload=False)
    )
    start = threading.Barrier(THREADS)

    def one(n: int) -> Any:
        start.wait()
        return run_loop(
            f"Write note LOOP-{n}-END.",
            rubric,
            generator=generator,
            judge=judge,
            max_rounds=3,
            stagnation_rounds=0,
            similarity=None,
            reuse_identical=False,  # random drafts may repeat: every round asks the judge
        )

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(one, range(THREADS)))

    truth: dict[int, Usage] = {n: Usage() for n in range(THREADS)}
    requests: dict[int, int] = dict.fromkeys(range(THREADS), 0)
    for body, usage in emulator.answered:
        truth[_loop_of(body)] += _usage(usage)
        requests[_loop_of(body)] += 1
    assert [r.stop_reason for r in results] == ["max_rounds"] * THREADS
    assert len(emulator.answered) == THREADS * 6  # 3 generates + 3 evaluations each
    for n, result in enumerate(results):
        assert requests[n] == 6
        assert result.usage == truth[n], f"loop {n}"
        gen = sum((it.generation_usage for it in result.history), Usage())
        ev = sum((it.evaluation_usage for it in result.history), Usage())
        assert gen + ev == truth[n]
        assert all(it.evaluation_usage.output_tokens > 0 for it in result.history)
    # the shared objects still hold every call, for whoever wants the grand total
    assert generator.usage + judge.usage == sum(truth.values(), Usage())


def test_a_judge_error_counts_only_its_own_attempts_under_threads(emulator: Emulator) -> None:
    def respond(body: dict[str, Any]) -> Any:
        time.sleep(random.uniform(0, 0.004))
        n = _loop_of(body)
        return text_reply("not json at all " * (n + 1))  # prose: repair, then give up

    emulator.responder = respond
    judge = AnthropicJudge(emulator.client(), structured="json")
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "tone", "description": "Warm."}]}, registry=Registry(autoload=False)
    )
    start = threading.Barrier(16)

    def one(n: int) -> tuple[int, Usage]:
        start.wait()
        try:
            judge.evaluate(f"LOOP-{n}-END", "a draft", rubric)
        except JudgeError as exc:
            return exc.attempts, exc.usage
        raise AssertionError("an invalid reply must fail")

    with ThreadPoolExecutor(16) as pool:
        got = list(pool.map(one, range(16)))
    truth: dict[int, Usage] = {n: Usage() for n in range(16)}
    for body, usage in emulator.answered:
        truth[_loop_of(body)] += _usage(usage)
    for n, (attempts, usage) in enumerate(got):
        assert attempts == 2  # the reply and its one repair
        assert usage == truth[n], f"call {n}"
