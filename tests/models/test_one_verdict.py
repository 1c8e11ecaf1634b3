"""A reply holds one verdict: two JSON objects, or prose beside one, are never a pass.

Small local models often echo an example before their answer; a reader that takes the
first object would accept a passing example followed by a failing "final" verdict.
Through the real ``anthropic`` and ``openai`` clients against the emulators, in every
structured mode: such a reply is unreadable (the one repair where the flow has one,
then a :class:`JudgeError`), and one verdict alone, bare or fenced, still reads.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from gradeloop import AnthropicJudge, Criterion, Rubric, grade
from gradeloop.errors import JudgeError
from gradeloop.grading._strict import WireError, strict_reply
from gradeloop.models import OpenAICompatibleJudge
from gradeloop.testing import text_reply
from tests.support.emulator import Emulator
from tests.support.oai_emulator import OAIEmulator, chat

RUBRIC = Rubric(criteria=[Criterion(key="cited", description="Every claim cites a source.")])
PASS = {"reasoning": "r", "criteria_met": {"cited": True}, "passed": True, "issues": []}
FAIL = {
    "reasoning": "no source for the second claim",
    "criteria_met": {"cited": False},
    "passed": False,
    "issues": ["cited: the second claim has no source"],
}


def fenced(data: dict[str, Any]) -> str:
    return f"```json\n{json.dumps(data)}\n```"


# Each holds a passing object first: a reader of the first object would accept.
TWO_READINGS = {
    "two fenced blocks": f"Example:\n{fenced(PASS)}\nFinal verdict:\n{fenced(FAIL)}",
    "fenced then bare": f"{fenced(PASS)}\n{json.dumps(FAIL)}",
    "bare then bare": f"{json.dumps(PASS)}\n{json.dumps(FAIL)}",
    "prose against the verdict": f"I must fail this draft: a claim has no source.\n{fenced(PASS)}",
    "prose after the verdict": f"{json.dumps(PASS)}\nOn reflection it fails: a claim is uncited.",
}
ONE_READING = {
    "bare": json.dumps(PASS),
    "fenced": fenced(PASS),
    "fenced, no info string, spaced": f"\n  ```\n{json.dumps(PASS)}\n```  \n",
    "braces inside its strings": json.dumps(
        {**PASS, "reasoning": 'it quotes {"passed": false} and ``` as text'}
    ),
}


@pytest.mark.parametrize("text", TWO_READINGS.values(), ids=TWO_READINGS.keys())
def test_a_reply_with_two_readings_is_unreadable(text: str) -> None:
    with pytest.raises(WireError, match=r"JSON objects|besides its JSON object"):
        strict_reply(text)


@pytest.mark.parametrize("text", ONE_READING.values(), ids=ONE_READING.keys())
def test_one_object_alone_or_fenced_reads(text: str) -> None:
    assert strict_reply(text)["passed"] is True


def test_two_objects_are_named_as_such_for_the_repair() -> None:
    with pytest.raises(WireError, match="holds 2 JSON objects"):
        strict_reply(TWO_READINGS["two fenced blocks"])


@pytest.mark.parametrize(
    "hostile",
    ["{" * 400_000, '{"' + "\\" * 400_000, "{" + '"' * 400_000, "```\n" * 100_000, "x" * 400_000],
)
def test_the_reader_is_linear_on_pathological_replies(hostile: str) -> None:
    started = time.perf_counter()
    with pytest.raises(WireError):
        strict_reply(hostile)
    assert time.perf_counter() - started < 2.0


# -- through both providers, every structured mode --------------------------------------


def anthropic_judge(emulator: Emulator, text: str, mode: str) -> AnthropicJudge:
    emulator.responder = lambda body: text_reply(text)
    return AnthropicJudge(client=emulator.client(max_retries=0), structured=mode)


def oai_judge(oai_emulator: OAIEmulator, text: str, mode: str) -> OpenAICompatibleJudge:
    oai_emulator.responder = lambda body: chat(text)
    return OpenAICompatibleJudge(
        model="gemma", client=oai_emulator.client(max_retries=0), structured=mode
    )


MODES = ["native", "json", "auto"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", TWO_READINGS.values(), ids=TWO_READINGS.keys())
def test_two_readings_never_pass_on_the_messages_api(
    emulator: Emulator, text: str, mode: str
) -> None:
    judge = anthropic_judge(emulator, text, mode)
    with pytest.raises(JudgeError) as info:
        grade("a draft", RUBRIC, task="t", judge=judge)
    assert info.value.reason == "invalid"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", TWO_READINGS.values(), ids=TWO_READINGS.keys())
def test_two_readings_never_pass_on_chat_completions(
    oai_emulator: OAIEmulator, text: str, mode: str
) -> None:
    judge = oai_judge(oai_emulator, text, mode)
    with pytest.raises(JudgeError) as info:
        grade("a draft", RUBRIC, task="t", judge=judge)
    assert info.value.reason == "invalid"
    assert "JSON object" in str(info.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", ONE_READING.values(), ids=ONE_READING.keys())
def test_one_verdict_passes_on_both_providers(
    emulator: Emulator, oai_emulator: OAIEmulator, text: str, mode: str
) -> None:
    for judge in (anthropic_judge(emulator, text, mode), oai_judge(oai_emulator, text, mode)):
        assert grade("a draft", RUBRIC, task="t", judge=judge).accepted
