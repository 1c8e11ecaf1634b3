"""structured="auto" steps down when a server refuses a structured form (issue 34).

The refusals are the real ones: llama-cpp-python's server answers ``response_format``
json_schema with an HTTP 500 wrapping a validation error and a traceback (the body
below was read from llama-cpp-python 0.3.36); a Messages-API server that does not
know ``output_config`` answers 400 naming it. The real ``openai`` and ``anthropic``
clients talk to the emulators on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from gradeloop import AnthropicJudge, Criterion, OpenAICompatibleJudge, Rubric, grade_many
from gradeloop.errors import JudgeError, StructuredFormWarning
from tests.support.emulator import Emulator, http_error
from tests.support.oai_emulator import OAIEmulator, OAIError, chat, verdict_chat

# What llama-cpp-python 0.3.36 answers to response_format json_schema (its own paths).
LLAMA_CPP_PYTHON_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/srv/venv/lib/python3.11/"
    'site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
    "    POST /v1/chat/completions"
)
NO_RETRY = {"x-should-retry": "false"}
CITED = Criterion(key="api_cited", description="Every API claim cites a spec section.")
CRITERIA = (CITED,)


def verdict(met: bool = True) -> dict[str, Any]:
    return {"reasoning": "r", "criteria_met": {"api_cited": met}, "passed": met, "issues": []}


def refused(message: str = LLAMA_CPP_PYTHON_500, status: int = 500) -> OAIError:
    return OAIError(status, message, headers=NO_RETRY)


def oai_judge(client: Any, **kw: Any) -> OpenAICompatibleJudge:
    return OpenAICompatibleJudge(client=client, model="gemma", **kw)


def forms(bodies: list[dict[str, Any]]) -> list[str]:
    """The structured form of each request: the response_format type, or json."""
    return [(b.get("response_format") or {}).get("type", "json") for b in bodies]


# -- chat completions: json_schema -> json_object with schema -> JSON mode ---------------


def test_a_refused_json_schema_steps_down_to_json_object_with_the_schema(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(refused(), verdict_chat(verdict()), verdict_chat(verdict()))
    client = oai_emulator.client()
    j = oai_judge(client)
    with pytest.warns(StructuredFormWarning) as said:
        v = j.evaluate("t", "d", CRITERIA)
    assert v.criteria_met == {"api_cited": True}
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object"]
    second = oai_emulator.bodies[1]["response_format"]
    assert second["schema"] == oai_emulator.bodies[0]["response_format"]["json_schema"]["schema"]
    assert len(said) == 1
    line = str(said[0].message)
    assert "\n" not in line and "json_object with the schema" in line
    assert "Input should be 'text' or 'json_object'" in line and "/srv/" not in line
    assert j.form == "json_object" and j.mode == "native"
    # the refused call is on record, never as a verdict; the next draft starts there
    assert [c.ok for c in j.calls] == [False, True]
    assert "refused the json_schema form" in (j.calls[0].error or "")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: no second warning
        j.evaluate("t", "d2", CRITERIA)
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object", "json_object"]


def test_the_form_is_remembered_per_client_not_per_judge(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(refused(), verdict_chat(verdict()), verdict_chat(verdict()))
    shared = oai_emulator.client()
    with pytest.warns(StructuredFormWarning):
        oai_judge(shared).evaluate("t", "d", CRITERIA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        oai_judge(shared).evaluate("t", "d", CRITERIA)  # another judge, the same client
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object", "json_object"]
    oai_emulator.enqueue(verdict_chat(verdict()))
    oai_judge(oai_emulator.client()).evaluate("t", "d", CRITERIA)  # another client
    assert forms(oai_emulator.bodies)[-1] == "json_schema"


def test_both_structured_forms_refused_ends_in_json_mode_with_the_schema_in_the_system(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(
        refused(),
        refused("response_format: 'schema' is not supported", status=400),
        verdict_chat(verdict()),
    )
    j = oai_judge(oai_emulator.client())
    with pytest.warns(StructuredFormWarning) as said:
        v = j.evaluate("t", "d", CRITERIA)
    assert v.passed and forms(oai_emulator.bodies) == ["json_schema", "json_object", "json"]
    assert len(said) == 2 and "JSON mode" in str(said[1].message)
    system = oai_emulator.bodies[2]["messages"][0]["content"]
    assert '"api_cited"' in system and "JSON" in system  # the schema is in the system text
    assert j.mode == "json" and j.form == "json"


def test_a_refusal_never_spends_the_repair_attempt(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(refused(), chat('{"reasoning": "r"}'), verdict_chat(verdict(met=False)))
    j = oai_judge(oai_emulator.client())
    with pytest.warns(StructuredFormWarning):
        v = j.evaluate("t", "d", CRITERIA)
    assert v.criteria_met == {"api_cited": False}  # the repair answered
    assert [c.kind for c in j.calls] == ["evaluate", "evaluate", "repair"]
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object", "json_object"]


def test_an_invalid_reply_after_a_refusal_fails_closed_never_a_pass(
    oai_emulator: OAIEmulator,
) -> None:
    bad = {"reasoning": "r", "criteria_met": {"api_cited": "yes"}, "passed": True, "issues": []}
    oai_emulator.enqueue(refused(), verdict_chat(bad), verdict_chat(bad))
    j = oai_judge(oai_emulator.client())
    with pytest.warns(StructuredFormWarning), pytest.raises(JudgeError) as info:
        j.evaluate("t", "d", CRITERIA)
    assert info.value.reason == "invalid" and info.value.attempts == 3


def test_native_never_steps_down_and_says_the_fix_in_one_line(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(refused())
    j = oai_judge(oai_emulator.client(), structured="native")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(JudgeError) as info:
            j.evaluate("t", "d", CRITERIA)
    message = str(info.value)
    assert info.value.reason == "api_error" and "\n" not in message
    assert "HTTP 500" in message and "Input should be 'text' or 'json_object'" in message
    assert "structured='auto'" in message
    assert "app.py" not in message and "File " not in message and "/srv/" not in message
    assert len(oai_emulator.bodies) == 1


def test_a_500_that_names_no_structured_field_is_a_failure_not_a_step_down(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(refused("the model crashed: out of memory"))
    j = oai_judge(oai_emulator.client())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(JudgeError) as info:
            j.evaluate("t", "d", CRITERIA)
    assert info.value.reason == "api_error" and len(oai_emulator.bodies) == 1
    assert j.form == "json_schema"


def test_a_429_naming_the_schema_is_not_a_refusal(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(refused("rate limit for json_schema requests", status=429))
    j = oai_judge(oai_emulator.client(), max_tokens=64)
    with pytest.raises(JudgeError):
        j.evaluate("t", "d", CRITERIA)
    assert j.form == "json_schema"


def test_json_mode_sends_no_structured_form_and_is_never_refused_into_anything(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(refused("schema trouble", status=400))
    j = oai_judge(oai_emulator.client(), structured="json")
    with pytest.raises(JudgeError):
        j.evaluate("t", "d", CRITERIA)
    assert forms(oai_emulator.bodies) == ["json"] and len(oai_emulator.bodies) == 1


def test_four_drafts_in_flight_step_down_once(oai_emulator: OAIEmulator) -> None:
    def answer(body: dict[str, Any]) -> Any:
        if body["response_format"]["type"] == "json_schema":
            return refused()
        return verdict_chat(verdict())

    oai_emulator.responder = answer
    j = oai_judge(oai_emulator.client())
    rubric = Rubric.from_dict({"criteria": [CITED.model_dump(exclude_defaults=True)]})
    with pytest.warns(StructuredFormWarning) as said:
        evaluations = grade_many(["a", "b", "c", "d"], rubric, task="t", judge=j, concurrency=4)
    assert [e.accepted for e in evaluations] == [True] * 4
    assert len([w for w in said if w.category is StructuredFormWarning]) == 1
    refusals = forms(oai_emulator.bodies).count("json_schema")
    assert 1 <= refusals <= 4 and forms(oai_emulator.bodies).count("json_object") == 4


def test_aevaluate_steps_down_the_same_way(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(refused(), verdict_chat(verdict()))
    j = oai_judge(oai_emulator.client())
    with pytest.warns(StructuredFormWarning):
        v = asyncio.run(j.aevaluate("t", "d", CRITERIA))
    assert v.passed and forms(oai_emulator.bodies) == ["json_schema", "json_object"]


# -- the Messages API: output_config -> JSON mode ----------------------------------------


def _anthropic_verdict() -> Any:
    from gradeloop.testing import verdict_reply

    return verdict_reply(verdict())


def test_a_refused_output_config_steps_down_to_json_mode(emulator: Emulator) -> None:
    emulator.enqueue(
        http_error(400, "output_config: Extra inputs are not permitted", x_should_retry="false"),
        _anthropic_verdict(),
        _anthropic_verdict(),
    )
    client = emulator.client()
    j = AnthropicJudge(client, model="local")
    with pytest.warns(StructuredFormWarning) as said:
        v = j.evaluate("t", "d", CRITERIA)
    assert v.passed and len(said) == 1 and "JSON mode" in str(said[0].message)
    first, second = emulator.bodies
    assert "output_config" in first and "output_config" not in second
    assert '"api_cited"' in second["system"][0]["text"]  # the schema went to the system text
    assert j.mode == "json" and [c.ok for c in j.calls] == [False, True]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AnthropicJudge(client, model="local").evaluate("t", "d", CRITERIA)  # same client
    assert "output_config" not in emulator.bodies[2]


def test_a_messages_api_400_about_something_else_is_a_failure(emulator: Emulator) -> None:
    emulator.enqueue(http_error(400, "max_tokens: too large", x_should_retry="false"))
    j = AnthropicJudge(emulator.client(), model="local")
    with pytest.raises(JudgeError) as info:
        j.evaluate("t", "d", CRITERIA)
    assert info.value.reason == "api_error" and j.mode == "native"
    assert "max_tokens: too large" in str(info.value) and "\n" not in str(info.value)


def test_a_pairwise_request_steps_down_to_its_own_json_prompt(oai_emulator: OAIEmulator) -> None:
    # prefer() shares the judge's sending: a server refusing both structured forms gets
    # the pairwise prompt with its schema in the system text, not the verdict prompt
    import json

    answer = {"reasoning": "r", "preferred": {"api_cited": "first"}}
    oai_emulator.enqueue(
        refused(),
        refused("response_format json_object: schema is not supported", 400),
        chat(json.dumps(answer)),
    )
    j = oai_judge(oai_emulator.client())
    with pytest.warns(StructuredFormWarning):
        got = j.prefer("t", "draft one", "draft two", CRITERIA)
    assert got == {"api_cited": "first"}
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object", "json"]
    system = oai_emulator.bodies[2]["messages"][0]["content"]
    assert '"first"' in system and "comparing two drafts" in system  # prefer's own prompt
