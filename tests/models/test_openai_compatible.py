"""OpenAICompatibleJudge / Generator through the real openai client against the emulator."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

from gradeloop import Criterion, OpenAICompatibleGenerator, OpenAICompatibleJudge, Rubric, grade
from gradeloop.cli import main
from gradeloop.errors import ConfigError, JudgeError, NotAnAnswer
from gradeloop.models._openai import SCHEMA_NAME, make_openai_client
from gradeloop.models._prompts import judge_system, judge_user
from gradeloop.models._wire import wire_spec
from tests.support.oai_emulator import OAIEmulator, OAIError, chat, strict_problem, verdict_chat

CITED = Criterion(key="api_cited", description="Every API claim cites a spec section.")
CLARITY = Criterion(key="clarity", description="Clear to a new reader.", scale="score")
CODE = Criterion(key="short", description="Short.", checker="length", options={"max_words": 5})
CRITERIA = (CITED, CLARITY)


def good(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "reasoning": "Section 4.2 is cited.",
        "scores": {"clarity": 8},
        "criteria_met": {"api_cited": True},
        "passed": True,
        "issues": [],
    }
    return data | overrides


def judge(emu: OAIEmulator, **kw: Any) -> OpenAICompatibleJudge:
    retries = kw.pop("max_retries", 2)
    return OpenAICompatibleJudge(client=emu.client(max_retries=retries), model="qwen3", **kw)


def judge_error(j: OpenAICompatibleJudge) -> JudgeError:
    with pytest.raises(JudgeError) as info:
        j.evaluate("the task", "the draft", CRITERIA)
    return info.value


# -- the request ------------------------------------------------------------------------


def test_a_valid_verdict_and_the_strict_schema_request(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(verdict_chat(good()))
    v = judge(oai_emulator).evaluate("the task", "the draft", (*CRITERIA, CODE))
    assert v.criteria_met == {"api_cited": True, "clarity": True}
    assert v.scores == {"clarity": 8.0}
    body = oai_emulator.bodies[0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True and fmt["json_schema"]["name"] == SCHEMA_NAME
    assert fmt["json_schema"]["schema"] == wire_spec(CRITERIA).schema  # the same wire schema
    assert strict_problem(fmt["json_schema"]["schema"]) is None
    assert body["messages"] == [
        {"role": "system", "content": judge_system(CRITERIA)},
        {"role": "user", "content": judge_user("the task", "the draft")},
    ]
    assert body["model"] == "qwen3" and body["max_tokens"] == 2048
    assert "short" not in json.dumps(body)  # code-filled keys never reach the judge


def test_the_emulator_refuses_a_schema_that_is_not_strict() -> None:
    assert strict_problem({"type": "object", "properties": {"a": {}}, "required": ["a"]})
    assert strict_problem(
        {"type": "object", "properties": {"a": {}}, "required": [], "additionalProperties": False}
    )


def test_a_scored_key_is_decided_in_code(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(verdict_chat(good(scores={"clarity": 6}, passed=True)))
    v = judge(oai_emulator).evaluate("t", "d", CRITERIA)
    assert v.criteria_met["clarity"] is False


# -- failures ---------------------------------------------------------------------------


def test_an_invalid_reply_gets_one_repair(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(verdict_chat(good(passed="yes")), verdict_chat(good()))
    j = judge(oai_emulator)
    v = j.evaluate("t", "d", CRITERIA)
    assert v.passed is True
    assert [c.kind for c in j.calls] == ["evaluate", "repair"]
    assert [c.ok for c in j.calls] == [False, True]
    repair = oai_emulator.bodies[1]
    assert repair["response_format"]["json_schema"]["strict"] is True
    assert repair["messages"][2] == {"role": "assistant", "content": json.dumps(good(passed="yes"))}
    assert "could not be used" in repair["messages"][3]["content"]


def test_still_invalid_after_the_repair_fails_closed(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(verdict_chat(good(passed="yes")), chat("{not json"))
    err = judge_error(judge(oai_emulator))
    assert err.reason == "invalid" and "after one repair attempt" in str(err)
    assert err.attempts == 2


def test_invalid_json_is_repaired_too(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(chat('{"reasoning": "cut'), verdict_chat(good()))
    j = judge(oai_emulator, structured="native")
    assert j.evaluate("t", "d", CRITERIA).passed
    assert [c.kind for c in j.calls] == ["evaluate", "repair"]


def test_a_truncated_reply_is_max_tokens(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(chat('{"reasoning": "half', finish_reason="length"))
    err = judge_error(judge(oai_emulator))
    assert err.reason == "max_tokens" and "max_tokens" in str(err)
    assert len(oai_emulator.bodies) == 1  # truncation is not repaired


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (chat(None, refusal="I can't help with that."), "declined"),
        (chat("", finish_reason="content_filter"), "content filter"),
    ],
)
def test_a_refusal_is_typed(oai_emulator: OAIEmulator, reply: Any, fragment: str) -> None:
    oai_emulator.enqueue(reply)
    err = judge_error(judge(oai_emulator))
    assert err.reason == "refusal" and fragment in str(err) and "declined" in str(err)


@pytest.mark.parametrize("content", [None, "", "   "])
def test_empty_content_is_no_text(oai_emulator: OAIEmulator, content: str | None) -> None:
    oai_emulator.enqueue(chat(content))
    err = judge_error(judge(oai_emulator))
    assert err.reason == "no_text" and "no text block" in str(err)


def test_no_choices_is_no_text(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue({"object": "chat.completion", "created": 0, "choices": []})
    assert judge_error(judge(oai_emulator)).reason == "no_text"


def test_prose_switches_auto_mode_to_json_mode(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(chat("The draft looks fine to me."), verdict_chat(good()))
    j = judge(oai_emulator)
    assert j.evaluate("t", "d", CRITERIA).passed
    assert j.mode == "json"
    second = oai_emulator.bodies[1]
    assert "response_format" not in second
    assert "<schema>" in second["messages"][0]["content"]


def test_native_mode_never_switches(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(chat("The draft looks fine."), chat("Still prose."))
    j = judge(oai_emulator, structured="native")
    assert judge_error(j).reason == "invalid"
    assert j.mode == "native"


def test_429_is_retried_by_the_client(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(OAIError(429, "slow down"), verdict_chat(good()))
    j = judge(oai_emulator)
    assert j.evaluate("t", "d", CRITERIA).passed
    assert len(oai_emulator.bodies) == 2 and len(j.calls) == 1


def test_429_past_the_retries_is_an_api_error(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(OAIError(429), OAIError(429))
    err = judge_error(judge(oai_emulator, max_retries=1))
    assert err.reason == "api_error" and "HTTP 429" in str(err)
    assert len(oai_emulator.bodies) == 2


# -- usage ------------------------------------------------------------------------------


def test_usage_is_recorded_with_the_cached_prefix(oai_emulator: OAIEmulator) -> None:
    oai_emulator.cache_min_tokens = 10
    oai_emulator.enqueue(verdict_chat(good()), verdict_chat(good()))
    j = judge(oai_emulator)
    j.evaluate("t", "d", CRITERIA)
    j.evaluate("t", "d2", CRITERIA)
    first, second = (c.usage for c in j.calls)
    system_tokens = len(judge_system(CRITERIA)) // 4
    assert first.cache_read_input_tokens == 0 and first.input_tokens > system_tokens
    assert second.cache_read_input_tokens == system_tokens
    assert second.input_tokens == second.total_input - system_tokens  # the rest is uncached
    assert first.output_tokens == len(json.dumps(good())) // 4
    assert first.cost_usd is None  # no price is known for a local model: unknown, not 0
    assert j.calls[0].model == "qwen3"


# -- async, grade, construction ---------------------------------------------------------


def test_aevaluate_runs_the_same_flow(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(verdict_chat(good(passed="yes")), verdict_chat(good()))
    j = judge(oai_emulator)
    v = asyncio.run(j.aevaluate("t", "d", CRITERIA))
    assert v.passed and [c.kind for c in j.calls] == ["evaluate", "repair"]


def test_grade_with_the_open_model_judge(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(verdict_chat(good()))
    rubric = Rubric([CITED, CLARITY, CODE])
    ev = grade("one two three", rubric, task="t", judge=judge(oai_emulator))
    assert ev.accepted and ev["short"].source == "code"


def test_base_url_and_model_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="give base_url"):
        make_openai_client()
    with pytest.raises(ConfigError, match="name the model"):
        OpenAICompatibleJudge(base_url="http://127.0.0.1:9/v1")
    monkeypatch.setenv("GRADELOOP_JUDGE_MODEL", "llama3")
    j = OpenAICompatibleJudge(base_url="http://127.0.0.1:9/v1")
    assert j.model == "llama3" and j.client.api_key == "gradeloop-local"


def test_importing_gradeloop_does_not_import_openai() -> None:
    code = (
        "import sys, gradeloop\n"
        "assert 'openai' not in sys.modules\n"
        "cls = gradeloop.OpenAICompatibleJudge\n"
        "assert 'openai' in sys.modules and cls.__name__ == 'OpenAICompatibleJudge'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- the generator ----------------------------------------------------------------------


def generator(emu: OAIEmulator, **kw: Any) -> OpenAICompatibleGenerator:
    return OpenAICompatibleGenerator(client=emu.client(max_retries=1), model="qwen3", **kw)


def test_the_generator_drafts_and_revises(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(chat("first"), chat("second"))
    g = generator(oai_emulator, system="Be brief.")
    assert g.generate("Write a haiku.") == "first"
    assert g.generate("Write a haiku.", "first", ["too long"]) == "second"
    first, second = oai_emulator.bodies
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Write a haiku."},
    ]
    assert "too long" in second["messages"][1]["content"]
    assert [c.kind for c in g.calls] == ["generate", "generate"] and g.usage.output_tokens > 0


@pytest.mark.parametrize(
    ("reply", "reason", "fragment"),
    [
        (chat(None, refusal="no"), "refusal", "declined"),
        (chat("half a dra", finish_reason="length"), "max_tokens", "max_tokens"),
        (chat(""), "no_text", "no text block"),
    ],
)
def test_the_generator_types_failures(
    oai_emulator: OAIEmulator, reply: Any, reason: str, fragment: str
) -> None:
    oai_emulator.enqueue(reply)
    g = generator(oai_emulator)
    with pytest.raises(NotAnAnswer) as info:
        g.generate("task")
    assert info.value.reason == reason and fragment in str(info.value)
    assert g.calls[0].ok is False


def test_the_generator_reraises_api_errors_and_async_works(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(OAIError(429), OAIError(429), chat("async draft"))
    g = generator(oai_emulator)
    with pytest.raises(openai.RateLimitError):
        g.generate("task")
    assert g.calls[0].error is not None and "HTTP 429" in g.calls[0].error
    assert asyncio.run(g.agenerate("task")) == "async draft"


# -- the command line -------------------------------------------------------------------

RUBRIC = """
[[criteria]]
key = "api_cited"
description = "Every API claim cites a spec section."

[[criteria]]
key = "short"
description = "At most five words."
checker = "length"
options = { max_words = 5 }
"""


def test_cli_grade_with_the_openai_compatible_provider(
    oai_emulator: OAIEmulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("See 4.2.")
    oai_emulator.enqueue(
        verdict_chat(
            {"reasoning": "r", "criteria_met": {"api_cited": True}, "passed": True, "issues": []}
        )
    )
    args = ["grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml"), "--json"]
    model = ["--judge-model", "qwen3", "--no-history"]
    code = main(
        [*args, "--provider", "openai-compatible", "--base-url", oai_emulator.base_url, *model]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert json.loads(out)["passed"] is True
    assert oai_emulator.bodies[0]["model"] == "qwen3"


def test_cli_provider_from_the_environment_and_its_errors(
    oai_emulator: OAIEmulator,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("See 4.2.")
    args = ["grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml"), "--no-history"]
    monkeypatch.setenv("GRADELOOP_PROVIDER", "openai-compatible")
    assert main(args) == 2
    assert "set OPENAI_BASE_URL" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_BASE_URL", oai_emulator.base_url)
    assert main(args) == 2
    assert "name the model" in capsys.readouterr().err
    monkeypatch.setenv("GRADELOOP_JUDGE_MODEL", "qwen3")
    oai_emulator.enqueue(
        verdict_chat(
            {
                "reasoning": "r",
                "criteria_met": {"api_cited": False},
                "passed": False,
                "issues": ["api_cited: no"],
            }
        )
    )
    assert main(args) == 1
    assert "api_cited: no" in capsys.readouterr().out
    monkeypatch.setenv("GRADELOOP_PROVIDER", "bedrock")
    assert main(args) == 2
    assert "is not a provider" in capsys.readouterr().err


def test_without_the_extra_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as if the extra were not installed: the lazy name's module is loaded again, and its
    # "import openai" fails (everything put back afterwards)
    import gradeloop
    import gradeloop.models

    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.delitem(sys.modules, "gradeloop.models._openai", raising=False)
    monkeypatch.delattr(gradeloop.models, "_openai", raising=False)
    monkeypatch.delitem(vars(gradeloop), "OpenAICompatibleJudge", raising=False)
    with pytest.raises(ImportError, match=re.escape("pip install 'gradeloop[openai]'")):
        gradeloop.OpenAICompatibleJudge  # noqa: B018


def test_cli_optimize_drafts_and_judges_on_the_openai_compatible_server(
    oai_emulator: OAIEmulator, tmp_path: Path
) -> None:
    from tests.support.cli_helpers import cli

    (tmp_path / "r.toml").write_text(RUBRIC)
    met = {"reasoning": "r", "criteria_met": {"api_cited": True}, "passed": True, "issues": []}
    oai_emulator.enqueue(chat("See 4.2 for the rule."), verdict_chat(met))
    ran = cli(
        "optimize", "--rubric", str(tmp_path / "r.toml"), "--task", "Write one line.",
        "--provider", "openai-compatible", "--base-url", oai_emulator.base_url,
        "--model", "gen-model", "--judge-model", "judge-model", "--no-history",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    assert "See 4.2 for the rule." in ran.out
    generate, evaluate = oai_emulator.bodies
    assert generate["model"] == "gen-model" and "response_format" not in generate
    assert evaluate["model"] == "judge-model" and evaluate["response_format"]["json_schema"]
