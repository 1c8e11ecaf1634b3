"""The judge's raw path: an SDK client is sent the request through its public
``messages.with_raw_response.create`` and the reply's JSON is read without the SDK's
models (gradeloop.models._messages_api, gradeloop.models._raw)."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from gradeloop import AnthropicJudge, Criterion
from gradeloop.errors import JudgeError
from gradeloop.models._raw import RawBlock, raw_client, read_message
from gradeloop.testing import ScriptedClient, refusal, verdict_reply
from tests.support.emulator import Emulator, http_error

CRITERIA = (Criterion(key="api_cited", description="Every API claim cites a spec section."),)
GOOD = {
    "reasoning": "Section 4.2 is cited.",
    "criteria_met": {"api_cited": True},
    "passed": True,
    "issues": [],
}


def _no_parse(**kw: Any) -> Any:
    raise AssertionError("messages.parse must not be called for an SDK client")


class NotTheSDKs:
    """A client that is not the SDK's own, answering through a real one's messages
    (as a caller's wrapper would): the judge asks it through ``messages.parse``."""

    def __init__(self, client: Any) -> None:
        self.messages = client.messages
        self.base_url = client.base_url


def test_an_sdk_client_is_sent_the_same_body_without_messages_parse(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.enqueue(verdict_reply(GOOD), verdict_reply(GOOD))
    client = emulator.client()
    parse = client.messages.parse
    monkeypatch.setattr(client.messages, "parse", _no_parse)
    j = AnthropicJudge(client=client, extra_body={"temperature": 0})
    assert j.evaluate("t", "d", CRITERIA).criteria_met == {"api_cited": True}
    # the twin: the same request through messages.parse, from a client that is not the SDK's
    monkeypatch.setattr(client.messages, "parse", parse)
    wrapped = AnthropicJudge(client=NotTheSDKs(client), extra_body={"temperature": 0})
    assert not raw_client(wrapped.client)
    wrapped.evaluate("t", "d", CRITERIA)
    raw, parsed = emulator.requests
    assert raw.body == parsed.body and raw.body["temperature"] == 0
    # the SDK still sends its own headers: key, version, retry count, timeouts (each
    # path adds its own marker: the helper parse() names, the raw response asked for)
    markers = ("x-stainless-helper", "x-stainless-raw-response")
    assert {k: v for k, v in parsed.headers.items() if k not in markers} == {
        k: v for k, v in raw.headers.items() if k not in markers
    }
    assert raw.headers["authorization"] == "Bearer test-key"


def test_an_async_sdk_client_takes_the_raw_path_too(emulator: Emulator) -> None:
    import anthropic

    emulator.enqueue(verdict_reply(GOOD))
    given = anthropic.AsyncAnthropic(base_url=emulator.base_url, api_key="k")
    given.messages.parse = _no_parse  # type: ignore[method-assign]
    j = AnthropicJudge(client=emulator.client(), async_client=given)

    async def run() -> Any:
        try:
            return await j.aevaluate("t", "d", CRITERIA)
        finally:
            await given.close()

    assert asyncio.run(run()).criteria_met == {"api_cited": True}
    assert len(emulator.bodies) == 1


def test_only_the_sdks_own_clients_take_the_raw_path(emulator: Emulator) -> None:
    import anthropic

    assert raw_client(emulator.client())
    assert raw_client(anthropic.AsyncAnthropic(base_url=emulator.base_url, api_key="k"))
    fake = ScriptedClient(verdict_reply(GOOD))
    assert not raw_client(fake)
    assert AnthropicJudge(client=fake).evaluate("t", "d", CRITERIA).passed


def test_failures_keep_their_reasons_on_the_raw_path(emulator: Emulator) -> None:
    emulator.enqueue(
        refusal(category="cyber"),
        {"unexpected": True},  # JSON, but not a message
        http_error(400, "bad request"),
    )
    j = AnthropicJudge(client=emulator.client(max_retries=0))
    reasons = []
    for _ in range(3):
        with pytest.raises(JudgeError) as info:
            j.evaluate("t", "d", CRITERIA)
        reasons.append((info.value.reason, str(info.value)))
    assert reasons[0][0] == "refusal" and "cyber" in reasons[0][1]
    assert reasons[1][0] == "api_error" and "not a Messages API response" in reasons[1][1]
    assert reasons[2][0] == "api_error" and "HTTP 400 BadRequestError" in reasons[2][1]
    assert [c.ok for c in j.calls] == [False, False, False]


def test_usage_and_model_are_read_from_the_raw_reply(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(GOOD))
    j = AnthropicJudge(client=emulator.client(), model="claude-opus-5-5")
    j.evaluate("t", "d", CRITERIA)
    (call,) = j.calls
    _body, sent = emulator.answered[0]
    assert call.usage.input_tokens == sent["input_tokens"] > 0
    assert call.usage.output_tokens == sent["output_tokens"] > 0
    assert call.model == "claude-opus-5-5" and call.stop_reason == "end_turn"
    assert call.usage.cost_usd is not None and call.usage.cost_usd > 0


def test_a_deprecated_model_still_warns_and_a_current_one_does_not(
    emulator: Emulator,
) -> None:
    from anthropic._data.deprecated_models import DEPRECATED_MODELS

    emulator.enqueue(verdict_reply(GOOD), verdict_reply(GOOD))
    old = next(iter(DEPRECATED_MODELS))
    with pytest.warns(DeprecationWarning, match="deprecated"):
        AnthropicJudge(client=emulator.client(), model=old).evaluate("t", "d", CRITERIA)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        AnthropicJudge(client=emulator.client()).evaluate("t", "d", CRITERIA)


def test_a_max_tokens_too_large_to_wait_for_fails_before_sending(emulator: Emulator) -> None:
    # the SDK's rule for non-streaming calls (parse() applied it too); a client with
    # its own timeout has no such rule
    emulator.enqueue(verdict_reply(GOOD))
    with pytest.raises(JudgeError):
        AnthropicJudge(client=emulator.client(), max_tokens=1_000_000).evaluate("t", "d", CRITERIA)
    assert emulator.bodies == []
    own = AnthropicJudge(client=emulator.client(timeout=30.0), max_tokens=1_000_000)
    assert own.evaluate("t", "d", CRITERIA).passed
    assert emulator.bodies[0]["max_tokens"] == 1_000_000


# -- reading the reply's JSON --------------------------------------------------------------


def test_read_message_reads_what_the_judge_needs() -> None:
    reply = read_message(
        b'{"id": "m1", "model": "x", "stop_reason": "end_turn", "content": '
        b'[{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "{}"}, 7],'
        b' "usage": {"input_tokens": 3}}'
    )
    assert reply.content == (RawBlock("thinking"), RawBlock("text", "{}"), RawBlock(None))
    assert (reply.id, reply.model, reply.stop_reason) == ("m1", "x", "end_turn")
    assert reply.usage == {"input_tokens": 3} and reply.stop_details is None


@pytest.mark.parametrize(
    "body",
    [b"<html>proxy error</html>", b"[1, 2]", b'"text"', b'{"type": "error"}', b""],
)
def test_read_message_refuses_what_is_not_a_message(body: bytes) -> None:
    with pytest.raises(ValueError):
        read_message(body)


def test_read_message_is_lenient_about_the_envelope_like_the_sdk() -> None:
    reply = read_message(b'{"stop_reason": "end_turn", "content": "not a list", "usage": 5}')
    assert reply.content == () and reply.usage is None and reply.model is None


def test_a_body_plain_json_cannot_hold_is_left_to_the_sdks_encoder(emulator: Emulator) -> None:
    from datetime import datetime

    emulator.enqueue(verdict_reply(GOOD), verdict_reply(GOOD))
    when = datetime(2026, 1, 2, 3, 4, 5)
    AnthropicJudge(client=emulator.client(), extra_body={"when": when}).evaluate("t", "d", CRITERIA)
    AnthropicJudge(client=emulator.client(), extra_body={"n": 1}).evaluate("t", "d", CRITERIA)
    assert emulator.bodies[0]["when"] == "2026-01-02T03:04:05"
    assert emulator.bodies[1]["n"] == 1


def test_the_sdks_own_span_is_still_opened_and_filled(emulator: Emulator) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    emulator.enqueue(verdict_reply(GOOD))
    client = emulator.client(open_telemetry={"tracer_provider": provider})
    try:
        AnthropicJudge(client=client, model="claude-opus-5-5").evaluate("t", "d", CRITERIA)
    finally:
        provider.shutdown()
    [span] = exporter.get_finished_spans()
    attrs = dict(span.attributes or {})
    assert span.name.startswith("anthropic.messages.create") or "chat" in span.name
    assert attrs.get("gen_ai.request.model") == "claude-opus-5-5"
    assert attrs.get("gen_ai.output.type") == "json"  # the request attributes of create
    assert attrs.get("gen_ai.usage.output_tokens") == emulator.answered[0][1]["output_tokens"]


def test_a_current_trace_context_still_reaches_the_server_without_a_provider(
    emulator: Emulator,
) -> None:
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    parent = SpanContext(
        trace_id=0x0AF7651916CD43DD8448EB211C80319C,
        span_id=0x00F067AA0BA902B7,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    emulator.enqueue(verdict_reply(GOOD), verdict_reply(GOOD))
    judge = AnthropicJudge(client=emulator.client())
    with trace.use_span(NonRecordingSpan(parent)):
        judge.evaluate("t", "d", CRITERIA)
    judge.evaluate("t", "d", CRITERIA)
    inside, outside = emulator.requests
    assert "0af7651916cd43dd8448eb211c80319c" in inside.headers.get("traceparent", "")
    assert "traceparent" not in outside.headers


def test_a_users_middleware_still_sees_the_body_as_data(emulator: Emulator) -> None:
    import anthropic

    emulator.enqueue(verdict_reply(GOOD), verdict_reply(GOOD))
    AnthropicJudge(client=emulator.client(), extra_body={"temperature": 0}).evaluate(
        "t", "d", CRITERIA
    )
    seen: list[Any] = []

    def reads_the_body(request: Any, call_next: Any) -> Any:
        seen.append(request.options.json_data["temperature"])
        return call_next(request)

    client = anthropic.Anthropic(
        base_url=emulator.base_url, api_key="k", middleware=[reads_the_body]
    )
    try:
        AnthropicJudge(client=client, extra_body={"temperature": 0}).evaluate("t", "d", CRITERIA)
    finally:
        client.close()
    assert seen == [0]
    first, second = emulator.requests
    assert first.body == second.body and first.body["temperature"] == 0
