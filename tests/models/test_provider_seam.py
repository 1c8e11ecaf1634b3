"""The provider seam's proof: what worked only on the Messages API works on chat completions.

Each is tried as a user would: the CLI's verdict cache with ``--provider
openai-compatible``, ``propose``'s model step and ``align``'s rewrite request with an
OpenAI-compatible judge, the rewrite request stepping down through the structured forms
as the judge does (llama-cpp-python's server refuses json_schema with an HTTP 500). The
real ``openai`` client talks to the chat-completions emulator on 127.0.0.1.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, Criterion
from gradeloop.errors import JudgeError, StructuredFormWarning
from gradeloop.migration import propose_checkers
from gradeloop.migration._rewrite import Case, ask_rewrites
from gradeloop.models._model_judge import ModelJudge
from gradeloop.models._openai import OpenAICompatibleJudge
from tests.models.test_structured_forms import LLAMA_CPP_PYTHON_500, NO_RETRY
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator
from tests.support.oai_emulator import OAIEmulator, OAIError, chat, verdict_chat
from tests.support.propose_helpers import length_rule, rubric

RUBRIC = """
[[criteria]]
key = "api_cited"
description = "Every API claim cites a spec section."
"""
MET = {
    "reasoning": "4.2 is cited",
    "criteria_met": {"api_cited": True},
    "passed": True,
    "issues": [],
}


def refused() -> OAIError:
    return OAIError(500, LLAMA_CPP_PYTHON_500, headers=NO_RETRY)


def forms(bodies: list[dict[str, Any]]) -> list[str]:
    return [(b.get("response_format") or {}).get("type", "json") for b in bodies]


def test_the_two_judges_are_peers_on_one_provider_neutral_judge() -> None:
    assert not issubclass(OpenAICompatibleJudge, AnthropicJudge)
    assert not issubclass(AnthropicJudge, OpenAICompatibleJudge)
    assert issubclass(OpenAICompatibleJudge, ModelJudge) and issubclass(AnthropicJudge, ModelJudge)
    own = set(vars(OpenAICompatibleJudge)) | set(vars(AnthropicJudge))
    assert not {name for name in own if name.startswith("_") and not name.startswith("__")}


# -- (1) the CLI's verdict cache, on an OpenAI-compatible judge ----------------------------


def grade_args(oai: OAIEmulator, tmp_path: Path) -> tuple[str, ...]:
    """``gradeloop grade`` of one draft against a local chat-completions server."""
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("Charges are created with POST /v1/charges (section 4.2).")
    return (
        "grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml"),
        "--provider", "openai-compatible", "--base-url", oai.base_url,
        "--judge-model", "gemma", "--json",
    )  # fmt: skip


def grade_twice(oai: OAIEmulator, tmp_path: Path, *extra: str) -> tuple[Any, Any]:
    oai.responder = lambda body: verdict_chat(MET)
    args = (*grade_args(oai, tmp_path), *extra)
    return cli(*args), cli(*args)


def test_a_second_identical_cli_run_answers_from_the_verdict_cache(
    oai_emulator: OAIEmulator, tmp_path: Path
) -> None:
    first, second = grade_twice(oai_emulator, tmp_path)
    assert first.code == second.code == 0, first.err + second.err
    assert len(oai_emulator.bodies) == 1  # the second run asked nothing
    judged = [json.loads(ran.out)["judge"] for ran in (first, second)]
    assert (judged[0]["calls"], judged[0]["cached"]) == (1, 0)
    assert (judged[1]["calls"], judged[1]["cached"]) == (0, 1)


def test_no_cache_asks_the_server_again(oai_emulator: OAIEmulator, tmp_path: Path) -> None:
    first, second = grade_twice(oai_emulator, tmp_path, "--no-cache")
    assert first.code == second.code == 0, first.err + second.err
    assert len(oai_emulator.bodies) == 2


def test_a_rerun_against_a_server_that_refused_json_schema_asks_nothing(
    oai_emulator: OAIEmulator, tmp_path: Path
) -> None:
    def llama_cpp_python(body: dict[str, Any]) -> Any:  # refuses json_schema, as it does
        fmt = body.get("response_format") or {}
        return refused() if fmt.get("type") == "json_schema" else verdict_chat(MET)

    oai_emulator.responder = llama_cpp_python
    args = grade_args(oai_emulator, tmp_path)
    ran = [cli(*args), cli(*args), cli(*args, "--no-cache")]
    assert [r.code for r in ran] == [0, 0, 0], [r.err for r in ran]
    # run 1: refused, then json_object; run 2: from the cache, nothing asked (not even
    # the refused form); the twin, --no-cache: both again
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object"] * 2
    assert json.loads(ran[1].out)["judge"]["cached"] == 1


# -- (2) propose's model step, on an OpenAI-compatible judge --------------------------------


def proposals(candidates: list[dict[str, Any]], notes: list[str] | None = None) -> Any:
    return chat(json.dumps({"candidates": candidates, "notes": notes or []}))


def test_propose_asks_an_openai_compatible_judges_model(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(
        proposals([{"checker": "length", "options": {"max_words": 80}, "why": "w"}], ["a note"])
    )
    judge = OpenAICompatibleJudge(client=oai_emulator.client(max_retries=0), model="gemma")
    p = propose_checkers(rubric(), "short", length_rule(), judge=judge, seed=1)
    assert p.model is not None and p.model.error is None, p.model and p.model.error
    assert p.notes == ["a note"]
    assert p.model.usage is not None and p.model.usage.output_tokens > 0
    (body,) = oai_emulator.bodies
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "proposals"
    # its checkers' options may be left out, which strict mode does not allow: not strict
    assert fmt["json_schema"]["strict"] is False
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert [c.kind for c in judge.calls] == ["generate"]


def test_propose_steps_down_where_the_server_refuses_json_schema(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(refused(), proposals([]))
    judge = OpenAICompatibleJudge(client=oai_emulator.client(max_retries=0), model="gemma")
    with pytest.warns(StructuredFormWarning, match="json_object"):
        p = propose_checkers(rubric(), "short", length_rule(), judge=judge)
    assert p.model is not None and p.model.error is None, p.model and p.model.error
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object"]
    assert oai_emulator.bodies[1]["response_format"]["schema"]["required"] == [
        "candidates",
        "notes",
    ]


def test_a_judge_without_ask_is_named_not_called() -> None:
    class Custom:
        model = "m"

        def evaluate(self, *args: Any) -> Any:
            raise AssertionError("not a way to ask for candidates")

    p = propose_checkers(rubric(), "short", length_rule(), judge=Custom())
    assert p.model is not None and "ask() method" in (p.model.error or "")


# -- (3) align's rewrite request steps down as the judge does --------------------------------

CITES = Criterion(key="cites", description="Cites sources.")
CASES = [Case("t", "A draft with no source.", False, True, "looks fine")]
REWRITE = {"description": "Names a spec section for every claim.", "examples": []}


def rewrites() -> Any:
    return chat(json.dumps({"proposals": [REWRITE]}))


def test_the_rewrite_request_steps_down_to_json_object_then_to_json_mode(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(
        refused(),
        OAIError(400, "response_format json_object is not supported", headers=NO_RETRY),
        rewrites(),
    )
    judge = OpenAICompatibleJudge(client=oai_emulator.client(max_retries=0), model="gemma")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", StructuredFormWarning)
        found, dropped = ask_rewrites(judge, CITES, CASES, proposals=1)
    assert [r.description for r in found] == [REWRITE["description"]] and dropped == []
    assert forms(oai_emulator.bodies) == ["json_schema", "json_object", "json"]
    system = oai_emulator.bodies[2]["messages"][0]["content"]
    assert "<schema>" in system and '"proposals"' in system  # JSON mode: the schema in the prompt
    assert len([w for w in said if w.category is StructuredFormWarning]) == 2
    assert [c.ok for c in judge.calls] == [False, False, True]
    # the client remembers: the next request starts in JSON mode
    oai_emulator.enqueue(rewrites())
    ask_rewrites(judge, CITES, CASES, proposals=1)
    assert forms(oai_emulator.bodies)[3:] == ["json"]


def test_a_native_rewrite_request_never_steps_down(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(refused())
    judge = OpenAICompatibleJudge(
        client=oai_emulator.client(max_retries=0), model="gemma", structured="native"
    )
    with pytest.raises(JudgeError) as info:
        ask_rewrites(judge, CITES, CASES, proposals=1)
    assert info.value.reason == "api_error" and "HTTP 500" in str(info.value)
    assert "Traceback" not in str(info.value)
    assert forms(oai_emulator.bodies) == ["json_schema"]


def test_an_invalid_rewrite_reply_fails_closed_with_its_reason(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(chat('{"proposals": [], "proposals": []}'))
    judge = OpenAICompatibleJudge(client=oai_emulator.client(max_retries=0), model="gemma")
    with pytest.raises(JudgeError, match="appears twice") as info:
        ask_rewrites(judge, CITES, CASES, proposals=1)
    assert info.value.reason == "invalid" and [c.ok for c in judge.calls] == [False]


# -- strict mode on chat completions: only for a schema in its subset ------------------------


@pytest.mark.parametrize(
    "keys", [["api_cited"], ["properties", "type"], ["a", "b", "required", "additionalProperties"]]
)
def test_every_judge_schema_goes_strict(keys: list[str]) -> None:
    from gradeloop.models._chat_api import _strict_ready
    from gradeloop.models._prefer import prefer_spec
    from gradeloop.models._wire import wire_spec

    criteria = [Criterion(key=k, description="d") for k in keys]
    scored = [Criterion(key=k, description="d", scale="score") for k in keys]
    assert _strict_ready(wire_spec(criteria, feedback=True).schema)
    assert _strict_ready(wire_spec([*criteria[:1], *scored[1:]]).schema)
    assert _strict_ready(prefer_spec(criteria).schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": []},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "required": ["a"],
            "additionalProperties": False,
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        },
    ],
)
def test_a_schema_outside_strict_modes_subset_is_not_sent_strict(schema: dict[str, Any]) -> None:
    from gradeloop.models._chat_api import _strict_ready

    assert not _strict_ready(schema)


# -- Message Batches stay the Messages API's ----------------------------------------------


def test_an_openai_compatible_jury_member_is_refused_by_message_batches(
    oai_emulator: OAIEmulator, emulator: Emulator
) -> None:
    from gradeloop.bulk.batches._members import batch_members
    from gradeloop.errors import BatchError
    from gradeloop.judging import Jury

    anthropic_judge = AnthropicJudge(client=emulator.client(), model="claude-opus-5-5")
    chat_judge = OpenAICompatibleJudge(client=oai_emulator.client(), model="gemma")
    with pytest.raises(BatchError, match=r"OpenAICompatibleJudge.*cannot go through Message"):
        batch_members(Jury([anthropic_judge, chat_judge]))
    twin = AnthropicJudge(client=emulator.client(), model="claude-sonnet-5-5")
    assert len(batch_members(Jury([anthropic_judge, twin]))) == 2
