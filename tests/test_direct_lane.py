"""The direct lane (gradeloop.models._direct): after a pilot request built by the SDK,
a judge's async twin writes requests from that template straight to the transport,
keeps only plain 2xx JSON answers, and hands every other outcome to the SDK as the
answer to its own first attempt. Everything the caller can see must be what the SDK
alone gives: the result or the error, the requests the server receives, their
headers and bodies."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from gradeloop.errors import JudgeError
from gradeloop.models import _direct
from gradeloop.models._aclient import tls_context
from gradeloop.models._atransport import LeanAsyncTransport, Tap, tapped
from gradeloop.models._judge import AnthropicJudge
from gradeloop.models._pacing import Pacer, pacing
from gradeloop.testing import verdict_reply
from tests.emulator import Emulator, HTTPError, http_error
from tests.test_judge import CRITERIA, JUDGE_KEYS, good

OK = dict.fromkeys(JUDGE_KEYS, True)  # what good() gives for the judge keys


@pytest.fixture
def sdk_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per request the async SDK client builds itself."""
    built: list[int] = []
    original = anthropic.AsyncAnthropic._build_request

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(anthropic.AsyncAnthropic, "_build_request", counting)
    return built


@pytest.fixture
def no_lane(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_direct, "lane_for", lambda client: None)
    yield


async def _evaluate(j: AnthropicJudge, drafts: list[str], *, together: bool = False) -> list[Any]:
    async def one(d: str) -> Any:
        try:
            return (await j.aevaluate("the task", d, CRITERIA)).criteria_met
        except JudgeError as exc:
            return (exc.reason, str(exc).split(" after ")[0])

    try:
        if together:
            return list(await asyncio.gather(*(one(d) for d in drafts)))
        return [await one(d) for d in drafts]
    finally:
        await j.aclose()


def _run(emulator: Emulator, drafts: list[str], **client: Any) -> list[Any]:
    j = AnthropicJudge(client=emulator.client(**client))
    return asyncio.run(_evaluate(j, drafts))


def _but_host(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k != "host"}  # each server its own port


def _seen(emulator: Emulator) -> list[tuple[str, dict[str, str], Any]]:
    return [(r.path, r.headers, r.body) for r in emulator.requests]


def test_after_the_pilot_requests_are_written_from_its_template(
    emulator: Emulator, sdk_builds: list[int]
) -> None:
    emulator.enqueue(*(verdict_reply(good()) for _ in range(4)))
    results = _run(emulator, ["one", "two", "three", "four"])
    assert all(r == OK for r in results)
    assert len(sdk_builds) == 1  # the pilot; the three others took the lane
    heads = [r.headers for r in emulator.requests]
    assert len(heads) == 4
    # the same headers, in value, as the SDK's own request (the body's length aside)
    for h in heads[1:]:
        assert {k: v for k, v in h.items() if k != "content-length"} == {
            k: v for k, v in heads[0].items() if k != "content-length"
        }
    # each with its own body: the draft it was sent for
    for request, draft in zip(emulator.requests, ["one", "two", "three", "four"], strict=True):
        assert f"<draft>\n{draft}\n</draft>" in request.body["messages"][0]["content"]


def test_without_the_lane_every_request_is_built_by_the_sdk(
    emulator: Emulator, sdk_builds: list[int], no_lane: None
) -> None:
    emulator.enqueue(*(verdict_reply(good()) for _ in range(3)))
    _run(emulator, ["one", "two", "three"])
    assert len(sdk_builds) == 3


def test_concurrent_first_requests_wait_for_one_pilot(
    emulator: Emulator, sdk_builds: list[int]
) -> None:
    emulator.responder = lambda body: verdict_reply(good())
    j = AnthropicJudge(client=emulator.client())
    results = asyncio.run(_evaluate(j, [f"d{i}" for i in range(8)], together=True))
    assert len(results) == 8 and all(r == OK for r in results)
    assert len(sdk_builds) == 1
    assert len(emulator.requests) == 8


# Every outcome the lane does not keep must come out exactly as the SDK alone gives it.
OUTCOMES: dict[str, list[Any]] = {
    "429 then ok": [http_error(429, retry_after="0"), verdict_reply(good())],
    "529 twice then ok": [http_error(529), http_error(529), verdict_reply(good())],
    "500 then ok": [http_error(500), verdict_reply(good())],
    "503 three times": [http_error(503), http_error(503), http_error(503)],
    "500 no retry": [http_error(500, x_should_retry="false")],
    "400": [http_error(400, "bad request")],
    "401": [http_error(401, "bad key")],
    "404": [http_error(404, "no such model")],
    "408 then ok": [http_error(408), verdict_reply(good())],
    "409 then ok": [http_error(409), verdict_reply(good())],
    "413": [http_error(413, "too large")],
    "200 as text": [HTTPError(200, "hello", headers={"content-type": "text/plain"})],
    "200 not a message": [HTTPError(200, "odd")],
}


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_an_outcome_the_lane_does_not_keep_is_the_sdks_own(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def once(lane: bool) -> tuple[list[Any], list[Any]]:
        server = Emulator()
        try:
            if not lane:
                monkeypatch.setattr(_direct, "lane_for", lambda client: None)
            # the pilot, then the scripted answers
            script = [verdict_reply(good()), *OUTCOMES[name]]
            server.enqueue(*script)
            results = _run(server, ["pilot", "the draft"], max_retries=2)
            sent = [(p, _but_host(h), b) for p, h, b in _seen(server)]
            return results, sent
        finally:
            monkeypatch.undo()
            server.close()

    with_lane, without = once(True), once(False)
    assert with_lane == without
    assert with_lane[0][0] == OK


def test_a_connection_failure_on_the_lane_is_retried_by_the_sdk(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.enqueue(verdict_reply(good()), verdict_reply(good()))
    real = LeanAsyncTransport.handle_async_request
    failed: list[str] = []

    async def flaky(self: LeanAsyncTransport, request: httpx2.Request) -> httpx2.Response:
        if len(emulator.requests) == 1 and not failed:  # the lane's first attempt
            failed.append(request.headers["x-stainless-retry-count"])
            raise httpx2.ConnectError("refused", request=request)
        return await real(self, request)

    monkeypatch.setattr(LeanAsyncTransport, "handle_async_request", flaky)
    results = _run(emulator, ["pilot", "the draft"], max_retries=1)
    assert results == [OK] * 2
    assert failed == ["0"]
    # the SDK retried it as its own first attempt: the retry says so
    assert emulator.requests[1].headers["x-stainless-retry-count"] == "1"


def test_a_timeout_on_the_lane_is_the_sdks_timeout_error(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.enqueue(verdict_reply(good()))
    real = LeanAsyncTransport.handle_async_request

    timed_out: list[int] = []

    async def slow(self: LeanAsyncTransport, request: httpx2.Request) -> httpx2.Response:
        if emulator.requests and not timed_out:  # the lane's attempt after the pilot
            timed_out.append(1)
            raise httpx2.ReadTimeout("timed out", request=request)
        return await real(self, request)  # the SDK's attempt: the timeout replayed

    monkeypatch.setattr(LeanAsyncTransport, "handle_async_request", slow)
    j = AnthropicJudge(client=emulator.client(max_retries=0))

    async def main() -> Any:
        try:
            await j.aevaluate("the task", "pilot", CRITERIA)
            with pytest.raises(JudgeError) as caught:
                await j.aevaluate("the task", "the draft", CRITERIA)
            return caught.value
        finally:
            await j.aclose()

    error = asyncio.run(main())
    assert error.reason == "api_error"
    assert isinstance(error.__cause__, anthropic.APITimeoutError)
    assert timed_out == [1] and len(emulator.requests) == 1  # the replay is not sent


def test_a_cookie_is_kept_and_later_requests_carry_it(
    emulator: Emulator, sdk_builds: list[int]
) -> None:
    emulator.enqueue(*(verdict_reply(good()) for _ in range(3)))
    answer = emulator.answer
    calls: list[int] = []

    def with_cookie(body: dict[str, Any]) -> Any:
        status, headers, out = answer(body)
        calls.append(1)
        if len(calls) == 2:  # the lane's first answer sets a cookie
            headers = {**headers, "set-cookie": "sid=abc; Path=/"}
        return status, headers, out

    emulator.answer = with_cookie  # type: ignore[method-assign]
    results = _run(emulator, ["pilot", "cookie", "after"])
    assert results == [OK] * 3
    assert len(emulator.requests) == 3  # the cookie's answer was not asked twice
    assert "cookie" not in emulator.requests[1].headers
    assert emulator.requests[2].headers["cookie"] == "sid=abc"
    assert len(sdk_builds) == 1  # both after the pilot took the lane


def test_a_template_keeps_no_cookie(emulator: Emulator) -> None:
    emulator.enqueue(*(verdict_reply(good()) for _ in range(2)))
    judge = AnthropicJudge(client=emulator.client())

    async def main() -> None:
        jar = _direct._LANES[judge._async.client()].http.cookies
        try:
            jar.set("sid", "old", domain="127.0.0.1")
            await judge.aevaluate("the task", "pilot", CRITERIA)
            jar.set("sid", "new", domain="127.0.0.1")
            await judge.aevaluate("the task", "on the lane", CRITERIA)
        finally:
            await judge.aclose()

    asyncio.run(main())
    assert [r.headers.get("cookie") for r in emulator.requests] == ["sid=old", "sid=new"]


def test_pacing_sees_each_answer_once(emulator: Emulator) -> None:
    emulator.enqueue(
        verdict_reply(good()),  # the pilot
        http_error(429, retry_after="0"),  # the lane's, replayed to the SDK, which retries
        *(verdict_reply(good()) for _ in range(3)),
    )
    pacer = Pacer(4)

    async def main() -> list[Any]:
        with pacing(pacer):
            judge = AnthropicJudge(client=emulator.client())
            return await _evaluate(judge, ["a", "b", "c", "d"])

    assert asyncio.run(main()) == [OK] * 4
    assert pacer.throttled == 1  # halved to 2 once; then three successes raise it to 3
    assert pacer.limit == 3


def test_the_lane_waits_out_a_pause(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(good()), verdict_reply(good()))
    pacer = Pacer(4)
    judge = AnthropicJudge(client=emulator.client())

    async def main() -> float:
        with pacing(pacer):
            try:
                await judge.aevaluate("the task", "pilot", CRITERIA)
                pacer.observe(429, {"retry-after-ms": "300"})
                started = time.monotonic()
                await judge.aevaluate("the task", "paused", CRITERIA)
                return time.monotonic() - started
            finally:
                await judge.aclose()

    assert asyncio.run(main()) >= 0.25


def test_a_debug_logger_keeps_every_request_on_the_sdk(
    emulator: Emulator, sdk_builds: list[int]
) -> None:
    emulator.enqueue(*(verdict_reply(good()) for _ in range(3)))
    logger = logging.getLogger("anthropic")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        _run(emulator, ["one", "two", "three"])
    finally:
        logger.setLevel(level)
    assert len(sdk_builds) == 3


def test_a_given_async_client_has_no_lane(emulator: Emulator) -> None:
    given = anthropic.AsyncAnthropic(base_url=emulator.base_url, api_key="k")
    assert _direct.lane_for(given) is None
    j = AnthropicJudge(client=emulator.client())

    async def twin() -> Any:
        client = j._async.client()
        try:
            return _direct.lane_for(client)
        finally:
            await j.aclose()

    assert isinstance(asyncio.run(twin()), _direct.Lane)


def test_a_tap_serves_one_request_and_ends_with_its_block() -> None:
    seen: list[str] = []
    response = httpx2.Response(204)
    transport = LeanAsyncTransport(tls_context())

    async def main() -> list[Any]:
        request = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")
        out = []
        with tapped(Tap(seen=lambda r: seen.append(str(r.url)), replay=response)):
            out.append(await transport.handle_async_request(request))
            with pytest.raises(httpx2.ConnectError):  # no tap left: really sent (refused)
                await transport.handle_async_request(request)
        with tapped(Tap(replay=httpx2.ConnectError("no"))), pytest.raises(httpx2.ConnectError):
            await transport.handle_async_request(request)
        return out

        await transport.aclose()

    assert asyncio.run(main()) == [response]
    assert seen == ["http://127.0.0.1:9/v1/messages"]


@pytest.mark.parametrize(
    ("status", "headers", "kept"),
    [
        (200, {"content-type": "application/json"}, True),
        (201, {"content-type": "application/vnd.api+json; charset=utf-8"}, True),
        # the SDK decodes these as text, with the charset they name: the SDK's to read
        (200, {"content-type": "text/plain; charset=latin-1"}, False),
        (200, {}, False),
        (200, {"content-type": "application/json", "set-cookie": "a=b"}, True),
        (429, {"content-type": "application/json"}, False),
        (302, {"content-type": "application/json"}, False),
    ],
)
def test_only_plain_json_successes_stay_on_the_lane(
    status: int, headers: dict[str, str], kept: bool
) -> None:
    assert _direct._plain_success(httpx2.Response(status, headers=headers)) is kept


@pytest.mark.parametrize("setting", ["none", "custom_auth", "idempotency", "cookie"])
def test_a_twin_that_signs_its_requests_has_no_lane(emulator: Emulator, setting: str) -> None:
    judge = AnthropicJudge(client=emulator.client())

    async def main() -> Any:
        twin = judge._async.client()
        try:
            if setting == "custom_auth":
                twin._custom_auth = httpx2.Auth()
            elif setting == "idempotency":
                twin._idempotency_header = "Idempotency-Key"
            elif setting == "cookie":
                _direct._LANES[twin].http.cookies.set("sid", "abc")
            return _direct.lane_for(twin)
        finally:
            await judge.aclose()

    assert (asyncio.run(main()) is not None) is (setting in ("none", "cookie"))


@pytest.mark.parametrize(
    ("method", "retry", "extensions", "usable"),
    [
        ("POST", "0", {"timeout": {}}, True),
        ("POST", "1", {"timeout": {}}, False),
        ("GET", "0", {"timeout": {}}, False),
        ("POST", "0", {"timeout": {}, "sni_hostname": "my-host"}, False),
    ],
)
def test_only_a_plain_first_post_makes_a_template(
    method: str, retry: str, extensions: dict[str, Any], usable: bool
) -> None:
    request = httpx2.Request(
        method,
        "http://h/v1/messages",
        headers={"x-stainless-retry-count": retry},
        extensions=extensions,
    )
    assert _direct._Template.usable(request) is usable
