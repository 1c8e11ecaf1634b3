"""arun_loop: the same decisions as run_loop step for step; async models awaited;
usage per loop under concurrent tasks; loop events; the cost budget."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from gradeloop import (
    AnthropicGenerator,
    AnthropicJudge,
    Criterion,
    HistoryStore,
    Rubric,
    Verdict,
    arun_loop,
    run_loop,
)
from gradeloop.errors import InputError, JudgeError
from gradeloop.grading import Registry
from gradeloop.loop import LoopEvent
from gradeloop.testing import text_reply, verdict_reply
from tests.support.emulator import Emulator
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

RUBRIC = Rubric.from_dict(
    {"criteria": [{"key": "a", "description": "A."}, {"key": "b", "description": "B."}]},
    registry=Registry(autoload=False),
)
FAIL = verdict(False, {"a": True, "b": False}, issues=["b: fix it"])
PASS = verdict(True, {"a": True, "b": True})
ERR = JudgeError("refused", reason="refusal")


class Boom(FakeGenerator):
    """Fails on its second call (the first revision)."""

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        if len(self.prompts) == 1:
            self.prompts.append({})
            raise RuntimeError("generator down")
        return super().generate(task, draft, issues)


SCENARIOS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "pass at once": ([PASS], {}),
    "all fail at the cap": ([FAIL, FAIL, FAIL], {"stagnation_rounds": 0, "similarity": None}),
    "judge fails first": ([ERR], {}),
    "judge fails then passes": ([FAIL, ERR, PASS], {"stagnation_rounds": 0}),
    "cap zero": ([], {"max_rounds": 0}),
    "stagnation": ([FAIL, FAIL, FAIL, FAIL], {"max_rounds": 5, "similarity": None}),
}


def summary(result: Any, calls: list[str]) -> tuple[Any, ...]:
    rounds = [(it.content, it.judged, it.judge_error is not None) for it in result.history]
    return result.stop_reason, result.passed, result.draft, calls, rounds


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_arun_loop_decides_exactly_as_run_loop(name: str) -> None:
    script, kw = SCENARIOS[name]
    out = []
    for runner in ("sync", "async"):
        calls: list[str] = []
        gen, judge = FakeGenerator(calls=calls), FakeJudge(*script, calls=calls)
        if runner == "sync":
            result = run_loop("t", RUBRIC, generator=gen, judge=judge, **kw)
        else:
            result = asyncio.run(arun_loop("t", RUBRIC, generator=gen, judge=judge, **kw))
        out.append(summary(result, calls))
    assert out[0] == out[1]


def test_a_failing_revision_stops_both_the_same_way() -> None:
    results = []
    for runner in (run_loop, arun_loop):
        gen = Boom()
        kw: dict[str, Any] = {"generator": gen, "judge": FakeJudge(FAIL)}
        result = runner("t", RUBRIC, **kw)
        result = asyncio.run(result) if asyncio.iscoroutine(result) else result
        results.append((result.stop_reason, result.error, result.draft))
    assert (
        results[0]
        == results[1]
        == (
            "generator_failed",
            "the generator failed: RuntimeError: generator down",
            "d0",
        )
    )


def test_the_first_generate_failing_propagates() -> None:
    class Down:
        def generate(self, task: str, draft: str = "", issues: Any = None) -> str:
            raise RuntimeError("down from the start")

    with pytest.raises(RuntimeError, match="down from the start"):
        asyncio.run(arun_loop("t", RUBRIC, generator=Down(), judge=FakeJudge()))


class AsyncModels:
    """agenerate / aevaluate only (their sync methods must not be used)."""

    def __init__(self) -> None:
        self.threads: set[str] = set()
        self.n = 0

    def generate(self, *a: Any) -> str:
        raise AssertionError("generate must be awaited through agenerate")

    async def agenerate(self, task: str, draft: str = "", issues: Any = None) -> str:
        self.threads.add(threading.current_thread().name)
        self.n += 1
        return f"draft {self.n}"

    def evaluate(self, *a: Any) -> Verdict:
        raise AssertionError("evaluate must be awaited through aevaluate")

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.threads.add(threading.current_thread().name)
        return PASS if draft == "draft 2" else FAIL


def test_async_models_are_awaited_on_the_event_loop() -> None:
    models = AsyncModels()
    result = asyncio.run(arun_loop("t", RUBRIC, generator=models, judge=models))
    assert result.passed and result.draft == "draft 2"
    assert models.threads == {threading.main_thread().name}


def test_events_come_in_order() -> None:
    events: list[LoopEvent] = []
    asyncio.run(
        arun_loop(
            "t", RUBRIC, generator=FakeGenerator(), judge=FakeJudge(FAIL, PASS),
            on_event=events.append,
        )
    )  # fmt: skip
    assert [(e.kind, e.round) for e in events] == [
        ("generate_start", 1),
        ("round_start", 1),
        ("evaluate_start", 1),
        ("iteration", 1),
        ("generate_start", 2),
        ("round_start", 2),
        ("evaluate_start", 2),
        ("iteration", 2),
    ]
    assert events[3].iteration is not None and events[3].iteration.iteration == 1
    sync_events: list[LoopEvent] = []
    run_loop(
        "t", RUBRIC, generator=FakeGenerator(), judge=FakeJudge(FAIL, PASS),
        on_event=sync_events.append,
    )  # fmt: skip
    assert [(e.kind, e.round) for e in sync_events] == [(e.kind, e.round) for e in events]


# -- through the SDK ------------------------------------------------------------------------


def judged(body: dict[str, Any]) -> Any:
    content = body["messages"][0]["content"]
    met = "revised" in content
    return verdict_reply(
        {"reasoning": "r", "criteria_met": {"a": True, "b": met}, "passed": met,
         "issues": [] if met else ["b: revise"]}
    )  # fmt: skip


def drafting(body: dict[str, Any]) -> Any:
    prompt = body["messages"][0]["content"]
    topic = prompt.split("topic ")[1].split()[0]
    return text_reply(f"{'revised' if '<previous_draft>' in prompt else 'first'} {topic} " * 20)


def test_concurrent_loops_sharing_models_each_count_their_own_usage(emulator: Emulator) -> None:
    emulator.responder = lambda body: judged(body) if "output_config" in body else drafting(body)
    client = emulator.client()
    gen = AnthropicGenerator(client=client, model="claude-opus-5-5")
    judge = AnthropicJudge(client=client, model="claude-opus-5-5")

    async def many() -> list[Any]:
        try:
            return await asyncio.gather(
                *(
                    arun_loop(f"write about topic t{i} now", RUBRIC, generator=gen, judge=judge)
                    for i in range(8)
                )
            )
        finally:
            await gen.aclose()
            await judge.aclose()

    results = asyncio.run(many())
    assert all(r.passed and r.stop_reason == "passed" for r in results)
    sent = [usage for _, usage in emulator.answered]
    assert sum(r.usage.total_input for r in results) == sum(
        u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
        for u in sent
    )
    for i, r in enumerate(results):
        mine = [u for body, u in emulator.answered if f"t{i} " in json_text(body)]
        assert r.usage.output_tokens == sum(u["output_tokens"] for u in mine)
        assert r.usage.cost_usd == pytest.approx(
            sum(it.usage.cost_usd for it in r.history)  # type: ignore[misc]
        )


def json_text(body: dict[str, Any]) -> str:
    import json

    return json.dumps(body)


def test_the_cost_budget_stops_the_loop(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(
        {"reasoning": "r", "criteria_met": {"a": True, "b": False}, "passed": False,
         "issues": ["b: no"]}
    ) if "output_config" in body else text_reply("a draft " * 50)  # fmt: skip
    client = emulator.client()
    gen = AnthropicGenerator(client=client, model="claude-opus-5-5")
    judge = AnthropicJudge(client=client, model="claude-opus-5-5")
    result = run_loop(
        "t", RUBRIC, generator=gen, judge=judge, max_rounds=10, stagnation_rounds=0,
        similarity=None, max_cost_usd=1e-9,
    )  # fmt: skip
    assert result.stop_reason == "cost_budget" and result.rounds == 1 and not result.passed
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 1e-9
    free = run_loop(
        "t", RUBRIC, generator=gen, judge=judge, max_rounds=3, stagnation_rounds=0,
        similarity=None, max_cost_usd=100.0,
    )  # fmt: skip
    assert free.stop_reason == "max_rounds"  # a budget not reached changes nothing


def test_an_unknown_price_stops_a_budgeted_loop_and_says_why(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(
        {"reasoning": "r", "criteria_met": {"a": True, "b": False}, "passed": False,
         "issues": ["b: no"]}
    ) if "output_config" in body else text_reply("a draft")  # fmt: skip
    client = emulator.client()
    result = run_loop(
        "t", RUBRIC, generator=AnthropicGenerator(client=client, model="my-local-model"),
        judge=AnthropicJudge(client=client, model="my-local-model"), max_cost_usd=5.0,
    )  # fmt: skip
    assert result.stop_reason == "cost_budget"
    assert result.error is not None and "cost is unknown" in result.error


@pytest.mark.parametrize("bad", [0, -1.5])
def test_a_bad_cost_budget_is_refused(bad: float) -> None:
    with pytest.raises(InputError, match="max_cost_usd must be positive"):
        run_loop("t", RUBRIC, generator=FakeGenerator(), judge=FakeJudge(PASS), max_cost_usd=bad)


def test_models_that_cost_nothing_never_reach_the_budget() -> None:
    result = run_loop(
        "t", RUBRIC, generator=FakeGenerator(), judge=FakeJudge(PASS), max_cost_usd=1e-12
    )
    assert result.stop_reason == "passed"  # the fakes cost nothing, and passing comes first


def test_arun_loop_records_history(tmp_path: Any) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        result = asyncio.run(
            arun_loop("t", RUBRIC, generator=FakeGenerator(), judge=FakeJudge(FAIL, PASS),
                      store=store)
        )  # fmt: skip
        history = store.get(result.loop_id)
    assert history["stop_reason"] == "passed" and len(history["iterations"]) == 2
