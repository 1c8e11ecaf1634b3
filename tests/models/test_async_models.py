"""aevaluate / agenerate: the async twins, through the real AsyncAnthropic client."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anthropic

from gradeloop import AnthropicGenerator, AnthropicJudge, make_client
from gradeloop.errors import JudgeError
from gradeloop.models._aclient import AsyncTwin, async_twin
from gradeloop.testing import ScriptedClient, refusal, text_reply, verdict_reply
from tests.models.test_judge import CRITERIA, JUDGE_KEYS, good
from tests.support.emulator import Emulator, http_error


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def evaluate_and_close(j: AnthropicJudge, *drafts: str) -> list[Any]:
    try:
        return await asyncio.gather(
            *(j.aevaluate("the task", d, CRITERIA) for d in drafts), return_exceptions=True
        )
    finally:
        await j.aclose()


def test_aevaluate_sends_the_same_request_as_evaluate(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(good()), verdict_reply(good()))
    j = AnthropicJudge(client=make_client(base_url=emulator.base_url))
    sync = j.evaluate("the task", "the draft", CRITERIA)
    [verdict] = run(evaluate_and_close(j, "the draft"))
    assert verdict == sync
    first, second = emulator.requests
    assert first.body == second.body
    assert "AsyncAnthropic" in second.headers["user-agent"]
    assert [c.kind for c in j.calls] == ["evaluate", "evaluate"]


def test_aevaluate_types_failures_like_evaluate(emulator: Emulator) -> None:
    emulator.enqueue(
        refusal(category="cyber"),
        http_error(400, "bad request"),
        verdict_reply(good(criteria_met={})),
    )
    j = AnthropicJudge(client=emulator.client(max_retries=0), structured="native")
    errors = [run(evaluate_and_close(j, "d"))[0] for _ in range(3)]
    assert all(isinstance(e, JudgeError) for e in errors)
    assert [e.reason for e in errors] == ["refusal", "api_error", "invalid"]
    assert "declined" in str(errors[0]) and "HTTP 400" in str(errors[1])


def test_aevaluate_repairs_once_in_json_mode(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("not json at all"), verdict_reply(good()))
    j = AnthropicJudge(client=emulator.client(), structured="json")
    [verdict] = run(evaluate_and_close(j, "d"))
    assert verdict.criteria_met["api_cited"] is True
    assert [c.kind for c in j.calls] == ["evaluate", "repair"]
    assert emulator.bodies[1]["messages"][1] == {"role": "assistant", "content": "not json at all"}


def test_the_async_twin_keeps_the_sync_clients_settings(emulator: Emulator) -> None:
    client = emulator.client(max_retries=0, default_headers={"x-team": "grading"}, timeout=7.0)
    twin = async_twin(client)
    try:
        assert twin.base_url == client.base_url
        assert (twin.max_retries, twin.timeout, twin.api_key) == (0, 7.0, "test-key")
    finally:
        run(twin.close())
    emulator.enqueue(http_error(500, "down"))
    j = AnthropicJudge(client=client)
    [err] = run(evaluate_and_close(j, "d"))
    assert isinstance(err, JudgeError) and err.reason == "api_error"
    assert len(emulator.requests) == 1  # max_retries=0 carried over: no retry
    assert emulator.requests[0].headers["x-team"] == "grading"


def test_requests_really_overlap(emulator: Emulator) -> None:
    # Five requests must be in flight at once to pass the barrier; in series the
    # first would wait alone until the barrier times out.
    barrier = threading.Barrier(5, timeout=10)

    def answer(body: dict[str, Any]) -> Any:
        barrier.wait()
        return verdict_reply(good())

    emulator.responder = answer
    j = AnthropicJudge(client=emulator.client())
    results = run(evaluate_and_close(j, *(f"draft {i}" for i in range(5))))
    assert all(not isinstance(r, BaseException) for r in results)
    assert len(emulator.requests) == 5


def test_a_failure_reports_its_own_usage_not_a_neighbours(emulator: Emulator) -> None:
    def answer(body: dict[str, Any]) -> Any:
        text = body["messages"][0]["content"]
        return refusal() if "bad" in text else verdict_reply(good(reasoning="x" * 400))

    emulator.responder = answer
    j = AnthropicJudge(client=emulator.client())
    results = run(evaluate_and_close(j, "good one", "bad one", "good two"))
    err = results[1]
    assert isinstance(err, JudgeError) and err.attempts == 1
    refused = next(c for c in j.calls if not c.ok)
    assert err.usage == refused.usage
    assert err.usage.output_tokens < j.usage.output_tokens


def test_each_event_loop_gets_its_own_client_and_aclose_closes_it(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(good())
    j = AnthropicJudge(client=make_client(base_url=emulator.base_url))
    seen = []

    async def once() -> None:
        await j.aevaluate("t", "d", CRITERIA)
        seen.append(j._async.client())
        await j.aclose()

    run(once())
    run(once())  # a second asyncio.run: a new loop, so a new client
    assert seen[0] is not seen[1]
    assert all(c.is_closed() for c in seen)


def test_a_callers_own_sdk_client_is_used_as_it_is_off_the_loop(emulator: Emulator) -> None:
    # e.g. a client with a proxy or a CA of the caller's: no twin replaces its HTTP
    # client; its sync calls run in a worker thread
    import anthropic

    emulator.responder = lambda body: verdict_reply(good())
    http = anthropic.DefaultHttpxClient(headers={"x-callers-stack": "yes"})
    client = anthropic.Anthropic(api_key="k", base_url=emulator.base_url, http_client=http)
    j = AnthropicJudge(client=client)
    [verdict] = run(evaluate_and_close(j, "d"))
    assert verdict.passed
    [request] = emulator.requests
    assert request.headers["x-callers-stack"] == "yes"
    assert request.headers["user-agent"].startswith("Anthropic/")
    assert AsyncTwin(client).client() is None
    client.close()


def test_a_client_that_is_not_the_sdks_runs_in_a_worker_thread() -> None:
    threads: list[str] = []

    def answer(kwargs: dict[str, Any]) -> Any:
        threads.append(threading.current_thread().name)
        return verdict_reply(good())

    j = AnthropicJudge(client=ScriptedClient(responder=answer))
    [verdict] = run(evaluate_and_close(j, "d"))
    assert verdict.passed and threads and threads[0] != threading.main_thread().name
    assert AsyncTwin(ScriptedClient()).client() is None


def test_a_given_async_client_is_used(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(good()))

    async def go() -> Any:
        given = anthropic.AsyncAnthropic(api_key="k2", base_url=emulator.base_url)
        try:
            j = AnthropicJudge(client=ScriptedClient(), async_client=given)
            return await j.aevaluate("t", "d", CRITERIA)
        finally:
            await given.close()

    assert run(go()).criteria_met == {k: True for k in JUDGE_KEYS}
    assert emulator.requests[0].headers["authorization"] == "Bearer k2"


# -- the generator ----------------------------------------------------------------------


def test_agenerate_drafts_and_revises(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("first"), text_reply("second"))
    gen = AnthropicGenerator(client=emulator.client())

    async def go() -> tuple[str, str]:
        try:
            return await gen.agenerate("the task"), await gen.agenerate("the task", "first", ["x"])
        finally:
            await gen.aclose()

    assert run(go()) == ("first", "second")
    assert emulator.bodies[0]["messages"] == [{"role": "user", "content": "the task"}]
    assert (
        "<previous_draft>\nfirst\n</previous_draft>" in emulator.bodies[1]["messages"][0]["content"]
    )
    assert [c.ok for c in gen.calls] == [True, True]


def test_agenerate_fails_like_generate(emulator: Emulator) -> None:
    emulator.enqueue(refusal(), http_error(400, "no"))
    gen = AnthropicGenerator(client=emulator.client(max_retries=0))

    async def go() -> list[Any]:
        try:
            return await asyncio.gather(
                gen.agenerate("a"), gen.agenerate("b"), return_exceptions=True
            )
        finally:
            await gen.aclose()

    kinds = sorted(type(e).__name__ for e in run(go()))
    assert kinds == ["BadRequestError", "NotAnAnswer"]
    assert [c.ok for c in gen.calls] == [False, False]


def test_agenerate_with_a_scripted_client() -> None:
    gen = AnthropicGenerator(client=ScriptedClient(text_reply("hello")))
    assert run(gen.agenerate("t")) == "hello"
