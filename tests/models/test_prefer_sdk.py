"""prefer() through the real SDK clients: the Messages-API emulator (anthropic) and the
chat-completions emulator (openai). Request shape, caching, strict reading, repair,
JSON mode, the async path, compare_drafts and a Jury across both providers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from gradeloop import AnthropicJudge, Criterion, JudgeCache, OpenAICompatibleJudge, grade
from gradeloop.errors import JudgeError
from gradeloop.judging import Jury, acompare_drafts, compare_drafts, compare_many
from gradeloop.models._prefer import prefer_spec, prefer_system
from gradeloop.testing import text_reply, verdict_reply
from tests.support.emulator import Emulator
from tests.support.oai_emulator import OAIEmulator, chat, strict_problem

CITED = Criterion(key="cited", description="Cites the spec.")
CLEAR = Criterion(key="clear", description="Clear to a new reader.", scale="score")
SHORT = Criterion(key="short", description="Short.", checker="length", options={"max_words": 9})
CRITERIA = (CITED, CLEAR)
RUBRIC = {"criteria": [c.model_dump(exclude_defaults=True) for c in (CITED, CLEAR, SHORT)]}


def answer(cited: str = "first", clear: str = "tie", **extra: Any) -> dict[str, Any]:
    return {
        "reasoning": "The first cites 4.2.",
        "preferred": {"cited": cited, "clear": clear},
        **extra,
    }


BOTH = {"cited": "first", "clear": "tie"}


def judge(emulator: Emulator, **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), model="claude-test", **kw)


def test_a_request_carries_the_per_rubric_schema_and_both_drafts_as_data(
    emulator: Emulator,
) -> None:
    emulator.enqueue(verdict_reply(answer()))
    choices = judge(emulator).prefer("the task", "draft A", "draft B", [*CRITERIA, SHORT])
    assert dict(choices) == {"cited": "first", "clear": "tie"}
    assert choices.reasoning == "The first cites 4.2."
    body = emulator.bodies[0]
    schema = body["output_config"]["format"]["schema"]
    preferred = schema["$defs"]["Preferred"] if "$defs" in schema else schema
    assert schema["required"] == ["reasoning", "preferred"]
    assert schema["additionalProperties"] is False
    props = preferred["properties"]
    assert list(props) == ["cited", "clear"]  # code keys are not asked
    assert props["cited"]["enum"] == ["first", "second", "tie"]
    assert preferred["additionalProperties"] is False and preferred["required"] == [
        "cited",
        "clear",
    ]
    user = body["messages"][0]["content"]
    assert user.index("<first_draft>\ndraft A") < user.index("<second_draft>\ndraft B")
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert "draft A" not in body["system"][0]["text"]


def test_both_orders_send_a_byte_identical_system_prompt(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(answer("first")), verdict_reply(answer("second")))
    pref = compare_drafts("alpha", "beta", RUBRIC, task="t", judge=judge(emulator))
    first, second = emulator.bodies
    assert first["system"] == second["system"]
    assert first["output_config"] == second["output_config"]
    assert first["messages"] != second["messages"]
    assert pref.by_key["cited"] == "a" and pref.consistent["cited"]  # first, then second
    assert pref.by_key["short"] == "tie" and pref.requests == 2
    assert pref.usage.total_input > 0


def test_an_emulated_position_bias_shows_in_the_figure(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(answer("first", "first"))
    batch = compare_many([("a1", "b1"), ("a2", "b2")], RUBRIC, judge=judge(emulator), concurrency=2)
    assert batch.position_bias.rate == 1.0 and batch.position_bias.favours == "first"
    assert batch.requests == 4 and all(p.winner == "tie" for p in batch)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"reasoning": "r", "preferred": {"cited": "first", "cited": "second", "clear": "tie"}}',
         "appears twice"),
        (json.dumps(answer("First")), "preferred.cited: expected 'first'"),
        (json.dumps(answer(clear=True)), "preferred.clear"),  # type: ignore[arg-type]
        (json.dumps({"reasoning": "r", "preferred": {"cited": "first"}}), "clear: missing"),
        (json.dumps({"preferred": BOTH}), "reasoning: missing"),
        (json.dumps({"reasoning": 3, "preferred": BOTH}), "reasoning"),
    ],
)  # fmt: skip
def test_an_invalid_reply_gets_one_repair_then_fails_closed(
    emulator: Emulator, text: str, why: str
) -> None:
    emulator.enqueue(text_reply(text), text_reply(text))
    j = judge(emulator)
    with pytest.raises(JudgeError, match=why) as info:
        j.prefer("t", "a", "b", CRITERIA)
    assert info.value.reason == "invalid" and info.value.attempts == 2
    repair = emulator.bodies[1]["messages"]
    assert repair[1] == {"role": "assistant", "content": text}
    assert [c.kind for c in j.calls] == ["prefer", "repair"]


def test_a_repaired_reply_is_used(emulator: Emulator) -> None:
    emulator.enqueue(text_reply(json.dumps(answer("First"))), verdict_reply(answer("second")))
    assert judge(emulator).prefer("t", "a", "b", CRITERIA)["cited"] == "second"


def test_prose_switches_to_json_mode_with_the_schema_in_the_prompt(emulator: Emulator) -> None:
    emulator.enqueue(text_reply("I think the first is better."), verdict_reply(answer()))
    j = judge(emulator)
    assert j.prefer("t", "a", "b", CRITERIA)["cited"] == "first"
    assert j.mode == "json"
    second = emulator.bodies[1]
    assert "output_config" not in second
    assert "<schema>" in second["system"][0]["text"]
    assert second["system"][0]["text"] == prefer_system(
        CRITERIA, prefer_spec(CRITERIA).schema_text()
    )


def test_a_refusal_and_an_api_error_are_judge_errors(emulator: Emulator) -> None:
    from gradeloop.testing import refusal
    from tests.support.emulator import http_error

    emulator.enqueue(refusal(), http_error(500))
    j = judge(emulator)
    with pytest.raises(JudgeError) as info:
        j.prefer("t", "a", "b", CRITERIA)
    assert info.value.reason == "refusal"
    with pytest.raises(JudgeError) as info:
        j.prefer("t", "a", "b", CRITERIA)
    assert info.value.reason == "api_error"


def test_a_cached_answer_is_reused_and_a_damaged_one_never(
    emulator: Emulator, tmp_path: Any
) -> None:
    with JudgeCache(tmp_path / "c.db") as cache:
        emulator.enqueue(verdict_reply(answer()))
        j = judge(emulator, cache=cache)
        j.prefer("t", "a", "b", CRITERIA)
        again = j.prefer("t", "a", "b", CRITERIA)
        assert again["cited"] == "first" and len(emulator.bodies) == 1
        assert j.calls[-1].cached


def test_the_async_path_sends_the_same_requests(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(answer("first")), verdict_reply(answer("second")))
    j = judge(emulator)

    async def both() -> Any:
        try:
            return await j.aprefer("t", "a", "b", CRITERIA), await j.aprefer(
                "t", "b", "a", CRITERIA
            )
        finally:
            await j.aclose()

    ab, ba = asyncio.run(both())
    assert ab["cited"] == "first" and ba["cited"] == "second"
    assert emulator.bodies[0]["system"] == emulator.bodies[1]["system"]


def test_a_large_rubric_caches_its_prompt_across_orders_and_pairs(emulator: Emulator) -> None:
    text = "The guide explains this requirement in full detail with examples. " * 14
    criteria = [Criterion(key=f"rule_{i}", description=text) for i in range(8)]
    reply = {"reasoning": "r", "preferred": {c.key: "tie" for c in criteria}}
    emulator.responder = lambda body: verdict_reply(reply)
    j = judge(emulator)
    for pair in (("a", "b"), ("b", "a"), ("c", "d")):
        j.prefer("t", *pair, criteria)
    created, *read = [c.usage for c in j.calls]
    assert created.cache_creation_input_tokens > 1024
    assert all(u.cache_read_input_tokens == created.cache_creation_input_tokens for u in read)


# -- the OpenAI-compatible judge ------------------------------------------------------------


def oai(emu: OAIEmulator) -> OpenAICompatibleJudge:
    return OpenAICompatibleJudge(client=emu.client(max_retries=0), model="qwen3")


def test_the_openai_compatible_judge_sends_a_strict_response_format(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(chat(json.dumps(answer("second", "first"))))
    choices = oai(oai_emulator).prefer("t", "a", "b", CRITERIA)
    assert dict(choices) == {"cited": "second", "clear": "first"}
    body = oai_emulator.bodies[0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert strict_problem(fmt["json_schema"]["schema"]) is None
    assert body["messages"][0]["role"] == "system"


def test_the_openai_compatible_judge_repairs_then_fails_closed(oai_emulator: OAIEmulator) -> None:
    bad = chat(json.dumps(answer("maybe")))
    oai_emulator.enqueue(bad, bad)
    with pytest.raises(JudgeError, match="still invalid after one repair"):
        oai(oai_emulator).prefer("t", "a", "b", CRITERIA)


def test_a_jury_across_providers_grades_and_names_each_member(
    emulator: Emulator, oai_emulator: OAIEmulator
) -> None:
    verdict = {
        "reasoning": "r",
        "scores": {"clear": 8},
        "criteria_met": {"cited": True},
        "passed": True,
        "issues": [],
    }
    emulator.enqueue(verdict_reply(verdict))
    other = {**verdict, "criteria_met": {"cited": False}, "passed": False, "issues": ["cited: x"]}
    oai_emulator.enqueue(chat(json.dumps(other)))
    jury = Jury([judge(emulator), oai(oai_emulator)], quorum=2)
    ev = grade("draft", RUBRIC, judge=jury)
    assert jury.names == ("claude-test", "qwen3")
    assert ev["cited"].judging["jury"]["votes"] == {"claude-test": True, "qwen3": False}  # type: ignore[index]
    assert not ev["cited"].passed  # a tie is not met
    assert ev["clear"].passed and ev["clear"].agreement == 1.0
    assert len(ev.judge_calls) == 2  # one request each, both metered into the evaluation


def test_the_openai_compatible_judge_prefers_awaited_too(oai_emulator: OAIEmulator) -> None:
    def likes_b(body: dict[str, Any]) -> Any:  # both orders go at once: answer by content
        first = body["messages"][1]["content"].split("<first_draft>\n", 1)[1][:1]
        return chat(json.dumps(answer("first" if first == "b" else "second")))

    oai_emulator.responder = likes_b
    pref = asyncio.run(acompare_drafts("a", "b", RUBRIC, task="t", judge=oai(oai_emulator)))
    assert pref.by_key["cited"] == "b" and pref.consistent["cited"]
    assert len(oai_emulator.bodies) == 2
