"""gradeloop against a real model server and a real model (issue 34; marker local_model).

Each test talks to the server the ``local_server`` fixture started (llama-cpp-python's,
and llama.cpp's own ``llama-server`` when ``GRADELOOP_LLAMA_SERVER`` names one) through
the real ``openai`` / ``anthropic`` clients. Prompts are small and ``max_tokens`` low:
the whole file takes a few minutes on 2 cores.

What must hold whatever the tiny model says: a verdict carries every judge key or the
judge fails closed; never a pass on an invalid reply; usage is the server's own numbers;
a server's refusal is one line, never a traceback or its file paths.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from gradeloop import (
    Evaluation,
    HistoryStore,
    OpenAICompatibleGenerator,
    OpenAICompatibleJudge,
    Rubric,
    grade,
    grade_many,
    run_loop,
)
from gradeloop.errors import JudgeError, NotAnAnswer, StructuredFormWarning
from tests.local_model.helpers import (
    GREEDY,
    LLAMA_SERVER,
    MODEL,
    LocalServer,
    ServerUsage,
    openai_client,
)
from tests.support.cli_helpers import EXAMPLE, cli

pytestmark = pytest.mark.local_model

RUBRIC = Rubric.load(EXAMPLE / "rubric.toml")
DRAFT = (EXAMPLE / "draft.md").read_text()
TASK = (EXAMPLE / "task.md").read_text()
SMALL = Rubric.from_dict(
    {
        "criteria": [
            {"key": "short", "description": "At most 40 words.", "checker": "length",
             "options": {"max_words": 40}},
            {"key": "polite", "description": "The reply is polite."},
        ]
    }
)  # fmt: skip


def judge_for(server: LocalServer, wire: ServerUsage, **kw: Any) -> OpenAICompatibleJudge:
    kw.setdefault("max_tokens", 384)
    return OpenAICompatibleJudge(
        client=openai_client(server, wire), model=MODEL, extra_body=GREEDY, **kw
    )


def graded(draft: str, rubric: Rubric, judge: Any) -> tuple[Evaluation | None, JudgeError | None]:
    """The evaluation, or the judge's failure; never anything else."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", StructuredFormWarning)
        try:
            return grade(draft, rubric, task=TASK, judge=judge), None
        except JudgeError as exc:
            return None, exc
        finally:
            judge.said = [str(w.message) for w in said if w.category is StructuredFormWarning]


def assert_sound(ev: Evaluation | None, error: JudgeError | None, rubric: Rubric) -> None:
    """A verdict with every judge key, or a fail-closed error: never a pass on nothing."""
    if ev is None:
        assert error is not None and error.reason in ("invalid", "max_tokens", "api_error")
        assert "\n" not in str(error) and "Traceback" not in str(error)
        return
    judged = {c.key for c in ev.criteria if c.filled_by == "judge"}
    assert judged == set(rubric.judge_keys)
    assert all(c.checked for c in ev.criteria if c.filled_by == "judge")
    assert set(ev.verdict.criteria_met) == set(rubric.keys)
    if ev.accepted:
        assert all(ev.verdict.criteria_met.values())


def assert_server_usage(calls: list[Any], wire: ServerUsage) -> None:
    """gradeloop's usage of these calls is exactly what the server reported."""
    total_in = sum(c.usage.total_input for c in calls)
    total_out = sum(c.usage.output_tokens for c in calls)
    assert total_in == wire.total("prompt_tokens") > 0
    assert total_out == wire.total("completion_tokens") > 0
    assert all(c.usage.cost_usd is None for c in calls if c.usage.output_tokens)  # no price


# -- the shipped example, in each structured mode ---------------------------------------


def test_auto_grades_the_example_in_the_form_the_server_takes(
    local_server: LocalServer, wire: ServerUsage
) -> None:
    judge = judge_for(local_server, wire)
    ev, error = graded(DRAFT, RUBRIC, judge)
    assert_sound(ev, error, RUBRIC)  # the grammar holds the shape; a string may still run on
    if local_server.refuses_json_schema:  # llama-cpp-python: its own json_object form
        assert judge.form == "json_object" and len(judge.said) == 1
        assert "json_object with the schema" in judge.said[0] and "\n" not in judge.said[0]
        assert judge.calls[0].ok is False and "refused" in (judge.calls[0].error or "")
    else:  # llama-server takes json_schema strict
        assert judge.form == "json_schema" and judge.said == []
    assert_server_usage(judge.calls, wire)
    if ev is not None:
        assert ev.judge_usage == judge.usage


def test_native_is_a_verdict_or_a_one_line_refusal(
    local_server: LocalServer, wire: ServerUsage
) -> None:
    judge = judge_for(local_server, wire, structured="native")
    ev, error = graded(DRAFT, RUBRIC, judge)
    assert_sound(ev, error, RUBRIC)
    if local_server.refuses_json_schema:
        assert error is not None and error.reason == "api_error"
        message = str(error)
        assert "HTTP 500" in message and "Input should be 'text' or 'json_object'" in message
        assert ".py" not in message and "File " not in message and "site-packages" not in message
        assert "structured='auto'" in message
    else:  # llama-server takes json_schema: a verdict, or cut off at max_tokens
        assert_server_usage(judge.calls, wire)


def test_json_mode_is_a_verdict_or_fails_closed(
    local_server: LocalServer, wire: ServerUsage
) -> None:
    judge = judge_for(local_server, wire, structured="json", max_tokens=160)
    ev, error = graded(DRAFT, RUBRIC, judge)
    assert_sound(ev, error, RUBRIC)
    assert judge.said == [] and all("response_format" not in str(c) for c in judge.calls)
    assert_server_usage(judge.calls, wire)  # failed attempts are counted too
    if error is not None:
        assert error.usage is not None and error.usage == judge.usage


# The CLI's judge asks for up to 2,048 tokens: on llama-server (which takes json_schema,
# so has no news to tell) a run-on string would cost minutes. The library tests above
# cover llama-server; these two are about llama-cpp-python's refusal.
@pytest.mark.parametrize("local_server", ["llama-cpp-python"], indirect=True)
def test_the_cli_grades_the_example_with_one_line_of_news(local_server: LocalServer) -> None:
    ran = cli(
        "grade", str(EXAMPLE / "draft.md"), "--rubric", str(EXAMPLE / "rubric.toml"),
        "--task-file", str(EXAMPLE / "task.md"), "--provider", "openai-compatible",
        "--base-url", local_server.base_url, "--judge-model", MODEL, "--no-history",
    )  # fmt: skip
    lines = ran.err.splitlines()
    news = [line for line in lines if line.startswith("gradeloop: warning: the server")]
    assert len(news) == 1 and "json_object with the schema" in news[0], ran.err
    assert "Traceback" not in ran.err
    if ran.code == 1:  # the code keys fail; the judge answered
        assert "judge: 2 calls" in ran.out and "cost unknown" in ran.out
    else:  # or the judge failed closed, in one line
        errors = [line for line in lines if line.startswith("gradeloop: error: ")]
        assert ran.code == 2 and len(errors) == 1 and "judge" in errors[0], ran.err


@pytest.mark.parametrize("local_server", ["llama-cpp-python"], indirect=True)
def test_the_cli_with_native_on_a_refusing_server_is_one_error_line(
    local_server: LocalServer,
) -> None:
    ran = cli(
        "grade", str(EXAMPLE / "draft.md"), "--rubric", str(EXAMPLE / "rubric.toml"),
        "--provider", "openai-compatible", "--base-url", local_server.base_url,
        "--judge-model", MODEL, "--structured", "native", "--no-history",
    )  # fmt: skip
    lines = [line for line in ran.err.splitlines() if not line.startswith("gradeloop: warning")]
    assert ran.code == 2 and len(lines) == 1, ran.err
    assert lines[0].startswith("gradeloop: error: ") and "HTTP 500" in lines[0]
    assert ".py" not in lines[0] and "File " not in lines[0]


# -- many drafts at once -----------------------------------------------------------------


def test_grade_many_with_four_in_flight(local_server: LocalServer, wire: ServerUsage) -> None:
    drafts = [
        "Thanks for writing. Your refund is on its way.",
        "No refunds. Go away.",
        "We are sorry for the trouble; the refund will reach you within five days.",
        "Refund approved.",
    ]
    judge = judge_for(local_server, wire, max_tokens=256)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", StructuredFormWarning)
        evaluations = grade_many(drafts, SMALL, task="Answer a refund request.", judge=judge,
                                 concurrency=4)  # fmt: skip
    news = [w for w in said if w.category is StructuredFormWarning]
    assert len(news) == (1 if local_server.refuses_json_schema else 0)
    assert len(evaluations) == 4
    for ev in evaluations:
        if ev.judge_error is None:
            assert_sound(ev, None, SMALL)
        else:
            assert not ev.accepted and "\n" not in ev.judge_error
    assert sum(ev.judge_error is None for ev in evaluations) >= 1
    assert_server_usage(judge.calls, wire)


# -- the loop, with the local model as generator and judge -------------------------------


def test_one_round_of_the_loop_is_recorded_with_the_server_numbers(
    local_server: LocalServer, wire: ServerUsage, tmp_path: Path
) -> None:
    client = openai_client(local_server, wire)
    generator = OpenAICompatibleGenerator(
        client=client, model=MODEL, max_tokens=64, extra_body={**GREEDY, "stop": ["\n\n"]}
    )
    judge = OpenAICompatibleJudge(client=client, model=MODEL, max_tokens=256, extra_body=GREEDY)
    db = tmp_path / "h.db"
    with HistoryStore(db) as store, warnings.catch_warnings():
        warnings.simplefilter("ignore", StructuredFormWarning)
        result = run_loop(
            "Reply in one sentence to a customer who asks for a refund.",
            SMALL, generator=generator, judge=judge, max_rounds=1, store=store,
        )  # fmt: skip
    assert result.rounds == 1 and result.stop_reason in ("passed", "max_rounds")
    assert result.passed == (result.evaluation is not None and result.evaluation.accepted)
    assert_server_usage(generator.calls + judge.calls, wire)
    assert result.usage.total_input == wire.total("prompt_tokens")
    listed = cli("history", "--db", str(db))
    assert "unknown" in listed.out and "$0.0000" not in listed.out  # gemma has no price
    shown = cli("history", result.loop_id, "--db", str(db))
    assert f"{result.usage.total_input}/{result.usage.output_tokens}" in shown.out


def test_a_draft_cut_off_at_max_tokens_is_counted_in_the_history(
    local_server: LocalServer, wire: ServerUsage, tmp_path: Path
) -> None:
    generator = OpenAICompatibleGenerator(
        client=openai_client(local_server, wire), model=MODEL, max_tokens=8, extra_body=GREEDY
    )
    db = tmp_path / "h.db"
    with HistoryStore(db) as store, pytest.raises(NotAnAnswer) as info:
        run_loop("Write a long essay about refunds.", SMALL, generator=generator,
                 judge=None, store=store)  # fmt: skip
    assert info.value.reason == "max_tokens"
    assert wire.total("completion_tokens") == 8
    with HistoryStore(db) as store:
        loop_id = store.latest_loop_id()
        assert loop_id is not None
        data = store.get(loop_id)
        assert data["stop_reason"] == "generator_failed"
        assert data["unrounded_usage"]["output_tokens"] == 8
        assert data["unrounded_usage"]["total_input"] == wire.total("prompt_tokens")
        assert store.loop_costs([loop_id]) == {loop_id: None}


# Only with GRADELOOP_LLAMA_SERVER: defined then, never collected as a skip otherwise.
if LLAMA_SERVER:

    @pytest.mark.parametrize("local_server", ["llama-server"], indirect=True)
    def test_the_messages_api_path_of_llama_server(local_server: LocalServer) -> None:
        """llama-server also serves /v1/messages (llama-cpp-python does not): it ignores
        output_config, so auto switches to JSON mode on the prose reply."""
        from gradeloop import AnthropicJudge, make_client

        client = make_client(base_url=local_server.root, max_retries=0)
        judge = AnthropicJudge(client, model=MODEL, max_tokens=256, extra_body=GREEDY)
        try:
            ev, error = graded(DRAFT, RUBRIC, judge)
        finally:
            client.close()
        assert_sound(ev, error, RUBRIC)
        assert sum(c.usage.output_tokens for c in judge.calls) > 0
