"""The Messages-API emulator itself: wire format, records, errors, usage, caching."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import anthropic
import pytest

from gradeloop.testing import refusal, text_reply, thinking_only, truncated
from tests.support.emulator import Emulator, http_error

USER = [{"role": "user", "content": "hello"}]


def create(emulator: Emulator, **kw: Any) -> Any:
    kw.setdefault("model", "claude-opus-5-5")
    kw.setdefault("max_tokens", 100)
    kw.setdefault("messages", USER)
    return emulator.client(max_retries=kw.pop("max_retries", 2)).messages.create(**kw)


def post(url: str, body: Any) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


def test_a_text_reply_arrives_as_a_real_message(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("hi there"))
    msg = create(emulator)
    assert isinstance(msg, anthropic.types.Message)
    assert msg.content[0].type == "text" and msg.content[0].text == "hi there"
    assert msg.model == "claude-opus-5-5" and msg.id.startswith("msg_emulated_")


def test_requests_are_recorded_with_headers_and_body(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("x"))
    create(emulator, system="be brief")
    req = emulator.requests[0]
    assert (req.method, req.path) == ("POST", "/v1/messages")
    assert req.headers["authorization"] == "Bearer test-key"
    assert "anthropic-version" in req.headers
    assert req.body["system"] == "be brief" and emulator.bodies == [req.body]


def test_refusal_truncation_and_thinking_keep_their_shape(emulator: Emulator) -> None:
    emulator.enqueue(
        refusal(category="cyber", explanation="why"), truncated("cut"), thinking_only()
    )
    r = create(emulator)
    assert r.stop_reason == "refusal" and r.content == []
    assert r.stop_details.category == "cyber" and r.stop_details.explanation == "why"
    assert create(emulator).stop_reason == "max_tokens"
    assert [b.type for b in create(emulator).content] == ["thinking"]


def test_an_error_is_retried_then_answered(emulator: Emulator) -> None:
    emulator.enqueue(http_error(429, "slow down"), text_reply("ok"))
    assert create(emulator).content[0].text == "ok"
    assert len(emulator.requests) == 2


def test_an_error_body_is_anthropic_shaped(emulator: Emulator) -> None:
    emulator.enqueue(http_error(529, "Overloaded"))
    with pytest.raises(anthropic.OverloadedError) as info:
        create(emulator, max_retries=0)
    assert info.value.type == "overloaded_error" and info.value.api_message == "Overloaded"


def test_custom_error_headers_replace_the_defaults(emulator: Emulator) -> None:
    emulator.enqueue(http_error(503, "down", x_should_retry="false"))
    with pytest.raises(anthropic.ServiceUnavailableError):
        create(emulator)
    assert len(emulator.requests) == 1  # x-should-retry: false stopped the retries


def test_an_exhausted_script_fails_the_request_without_retries(emulator: Emulator) -> None:
    with pytest.raises(anthropic.InternalServerError, match="no reply queued"):
        create(emulator)
    assert len(emulator.requests) == 1


def test_a_responder_answers_when_the_queue_is_empty(emulator: Emulator) -> None:
    emulator.responder = lambda body: text_reply(f"n={len(body['messages'])}")
    emulator.enqueue(text_reply("queued first"))
    assert create(emulator).content[0].text == "queued first"
    assert create(emulator).content[0].text == "n=1"


def test_other_paths_are_json_404s(emulator: Emulator) -> None:
    status, body = post(emulator.base_url + "/v1/complete", {})
    assert status == 404 and body["type"] == "error"
    assert body["error"]["type"] == "not_found_error"
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(emulator.base_url + "/v1/models")
    info.value.close()
    assert info.value.code == 404


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"max_tokens": 1, "messages": USER}, "model: Field required"),
        ({"model": "m", "max_tokens": 1, "messages": []}, "at least one message"),
        (
            {"model": "m", "max_tokens": 1, "messages": [{"role": "assistant", "content": "x"}]},
            "user role",
        ),
        (
            {
                "model": "m",
                "max_tokens": 1,
                "messages": USER,
                "system": [
                    {
                        "type": "text",
                        "text": "s",
                        "cache_control": {"type": "ephemeral", "ttl": "2h"},
                    }
                ],
            },
            "ttl",
        ),
    ],
)
def test_malformed_requests_are_400s(emulator: Emulator, body: dict[str, Any], words: str) -> None:
    status, reply = post(emulator.base_url + "/v1/messages", body)
    assert status == 400 and words in reply["error"]["message"]
    assert emulator.pending == 0


def test_usage_counts_four_characters_a_token(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("o" * 80))
    msg = create(emulator, messages=[{"role": "user", "content": "i" * 400}])
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (100, 20)


def system(text: str, ttl: str = "5m") -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral", "ttl": ttl}}]


def test_a_large_cached_prefix_is_created_then_read(emulator: Emulator) -> None:
    big = "criteria " * 600  # 5400 characters: 1350 tokens, over the 1024 minimum
    emulator.enqueue(text_reply("a"), text_reply("b"))
    first = create(emulator, system=system(big, "1h")).usage
    second = create(emulator, system=system(big, "1h")).usage
    assert first.cache_creation_input_tokens == 1350 and first.cache_read_input_tokens == 0
    assert first.cache_creation is not None
    assert first.cache_creation.ephemeral_1h_input_tokens == 1350
    assert second.cache_read_input_tokens == 1350 and second.cache_creation_input_tokens == 0
    assert first.input_tokens == second.input_tokens == 1  # "hello" outside the cache


def test_a_small_prefix_or_no_marker_caches_nothing(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("a"), text_reply("b"))
    small = create(emulator, system=system("short criteria")).usage
    unmarked = create(emulator, system=[{"type": "text", "text": "criteria " * 600}]).usage
    for usage in (small, unmarked):
        assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0


def test_a_raw_dict_is_sent_as_is(emulator: Emulator) -> None:
    emulator.enqueue(
        {
            "id": "raw",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "raw"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 7, "output_tokens": 8},
        }
    )
    msg = create(emulator)
    assert msg.id == "raw" and msg.usage.input_tokens == 7
