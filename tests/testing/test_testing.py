"""gradeloop.testing: the scripted client users put in their own tests."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from anthropic.types import Message

from gradeloop import AnthropicGenerator, AnthropicJudge, Criterion, accepted
from gradeloop.errors import JudgeError, NotAnAnswer
from gradeloop.testing import (
    ScriptedClient,
    api_error,
    refusal,
    text_reply,
    thinking_only,
    truncated,
    verdict_reply,
)

CITED = Criterion(key="api_cited", description="Cites the spec.")


def test_helpers_build_real_messages_with_usage() -> None:
    for reply in (
        text_reply("x"),
        refusal(),
        truncated(),
        thinking_only(),
        verdict_reply({"a": 1}),
    ):
        assert isinstance(reply, Message)
        assert reply.usage.output_tokens >= 1 and reply.usage.input_tokens >= 0


def test_reply_shapes() -> None:
    r = refusal(category="bio", explanation="lab methods")
    assert r.content == [] and r.stop_reason == "refusal"
    assert r.stop_details is not None and r.stop_details.category == "bio"
    assert truncated("abc").stop_reason == "max_tokens"
    assert [b.type for b in thinking_only().content] == ["thinking"]
    assert [b.type for b in text_reply("t", thinking="hm").content] == ["thinking", "text"]
    assert json.loads(verdict_reply({"passed": False}).content[0].text) == {  # type: ignore[union-attr]
        "passed": False
    }


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, anthropic.BadRequestError),
        (401, anthropic.AuthenticationError),
        (429, anthropic.RateLimitError),
        (500, anthropic.InternalServerError),
        (529, anthropic.OverloadedError),
        (502, anthropic.InternalServerError),
        (418, anthropic.APIStatusError),
    ],
)
def test_api_error_builds_the_matching_sdk_exception(status: int, cls: type) -> None:
    err = api_error(status, "nope")
    assert type(err) is cls and err.status_code == status and err.api_message == "nope"


def test_calls_are_recorded_and_replies_come_in_order() -> None:
    client = ScriptedClient(text_reply("one"), text_reply("two"))
    gen = AnthropicGenerator(client=client, model="claude-haiku-5-5")
    assert gen.generate("a") == "one"
    assert gen.generate("b", "one", ["x"]) == "two"
    assert client.methods == ["create", "create"]
    assert client.calls[0]["messages"] == [{"role": "user", "content": "a"}]
    assert client.pending == 0
    assert gen.calls[0].model == "claude-haiku-5-5"  # the reply echoes the request's model


def test_an_empty_queue_names_the_call() -> None:
    client = ScriptedClient(text_reply("only one"))
    gen = AnthropicGenerator(client=client)
    gen.generate("a")
    with pytest.raises(AssertionError, match=r"call #2 \(messages.create\) found no reply"):
        gen.generate("b")


def test_queued_exceptions_are_raised() -> None:
    client = ScriptedClient(api_error(529))
    judge = AnthropicJudge(client=client)
    with pytest.raises(JudgeError, match="HTTP 529") as info:
        judge.evaluate("t", "d", [CITED])
    assert info.value.reason == "api_error" and client.methods == ["parse"]


def test_callables_and_a_responder_answer_from_the_request() -> None:
    def echo(kw: dict[str, Any]) -> Message:
        return text_reply(f"echo: {kw['messages'][0]['content']}")

    client = ScriptedClient(echo, responder=lambda kw: text_reply("default"))
    gen = AnthropicGenerator(client=client)
    assert gen.generate("hi") == "echo: hi"
    assert gen.generate("again") == "default"
    assert gen.generate("and again") == "default"
    client.enqueue(refusal())
    with pytest.raises(NotAnAnswer, match="declined"):
        gen.generate("no")


def test_a_judge_runs_on_scripted_verdicts() -> None:
    client = ScriptedClient(
        verdict_reply(
            {"reasoning": "r", "criteria_met": {"api_cited": True}, "passed": True, "issues": []}
        ),
        verdict_reply({"reasoning": "r", "criteria_met": {}, "passed": True, "issues": []}),
    )
    judge = AnthropicJudge(client=client, structured="native")
    assert accepted(judge.evaluate("t", "d", [CITED]), ["api_cited"])
    with pytest.raises(JudgeError) as info:
        judge.evaluate("t", "d", [CITED])
    assert info.value.reason == "invalid"
    assert "output_config" in client.calls[0]
