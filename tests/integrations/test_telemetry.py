"""OpenTelemetry spans, checked with the SDK's in-memory exporter; and no cost without it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from gradeloop import (
    AnthropicGenerator,
    AnthropicJudge,
    CheckResult,
    OpenAICompatibleGenerator,
    Rubric,
    grade,
    run_loop,
)
from gradeloop.errors import JudgeError
from gradeloop.grading import Registry
from gradeloop.integrations import telemetry
from gradeloop.testing import text_reply, verdict_reply
from tests.support.cli_helpers import ROOT
from tests.support.emulator import Emulator, http_error
from tests.support.fakes import FakeGenerator, FakeJudge, verdict
from tests.support.oai_emulator import OAIEmulator, chat

RUBRIC = {
    "criteria": [
        {"key": "short", "description": "short", "checker": "length", "options": {"max_chars": 40}},
        {"key": "tone", "description": "friendly", "scale": "score", "threshold": 7},
    ]
}


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.use_tracer_provider(None)
        provider.shutdown()


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def parent_of(span: ReadableSpan, exporter: InMemorySpanExporter) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(
        (s for s in exporter.get_finished_spans() if s.context.span_id == span.parent.span_id),
        None,
    )


def test_a_loop_has_its_rounds_gradings_and_checkers_nested(
    spans: InMemorySpanExporter,
) -> None:
    judge = FakeJudge(verdict(False, {}, ["cold"], {"tone": 4}), verdict(True, {}, [], {"tone": 9}))
    result = run_loop("greet", RUBRIC, generator=FakeGenerator(), judge=judge)
    [loop] = named(spans, "gradeloop.loop")
    rounds = named(spans, "gradeloop.round")
    assert loop.attributes is not None
    assert loop.attributes["gradeloop.loop.id"] == result.loop_id
    assert loop.attributes["gradeloop.loop.stop_reason"] == "passed"
    assert loop.attributes["gradeloop.loop.passed"] is True
    assert loop.attributes["gradeloop.output_id"] == result.output_id
    assert [r.attributes["gradeloop.round"] for r in rounds] == [1, 2]  # type: ignore[index]
    assert [r.attributes["gradeloop.output_id"] for r in rounds] == [  # type: ignore[index]
        it.output_id for it in result.history
    ]
    assert [r.attributes["gradeloop.accepted"] for r in rounds] == [False, True]  # type: ignore[index]
    assert all(parent_of(r, spans) is loop for r in rounds)
    grades = named(spans, "gradeloop.grade")
    assert [parent_of(g, spans) for g in grades] == rounds
    assert grades[0].attributes["gradeloop.failed_keys"] == ("tone",)  # type: ignore[index]
    checks = named(spans, "gradeloop.check")
    assert [c.attributes["gradeloop.checker"] for c in checks] == ["length", "length"]  # type: ignore[index]
    assert [parent_of(c, spans) for c in checks] == grades


def test_model_calls_carry_gen_ai_attributes(
    spans: InMemorySpanExporter, emulator: Emulator
) -> None:
    emulator.enqueue(
        text_reply("hello friend"),
        verdict_reply(
            {
                "reasoning": "warm",
                "scores": {"tone": 9},
                "criteria_met": {},
                "passed": True,
                "issues": [],
            }
        ),
    )
    client = emulator.client(max_retries=0)
    result = run_loop(
        "greet",
        RUBRIC,
        generator=AnthropicGenerator(client=client, model="claude-gen"),
        judge=AnthropicJudge(client=client, model="claude-judge"),
    )
    assert result.passed
    calls = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert [s.name for s in calls] == ["chat claude-gen", "chat claude-judge"]
    gen, judge = (dict(s.attributes or {}) for s in calls)
    assert gen["gen_ai.system"] == "anthropic" and gen["gen_ai.operation.name"] == "chat"
    assert gen["gen_ai.request.model"] == "claude-gen"
    assert gen["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert gen["gradeloop.call.kind"] == "generate" and judge["gradeloop.call.kind"] == "evaluate"
    sent = [usage for _, usage in emulator.answered]
    for attrs, usage in zip((gen, judge), sent, strict=True):
        assert attrs["gen_ai.usage.output_tokens"] == usage["output_tokens"]
        assert attrs["gen_ai.usage.input_tokens"] == (
            usage["input_tokens"]
            + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"]
        )
    assert judge["gen_ai.request.max_tokens"] == 2048
    assert judge["gradeloop.loop.id"] == result.loop_id and judge["gradeloop.round"] == 1
    [grade_span] = named(spans, "gradeloop.grade")
    judge_span = calls[1]
    assert parent_of(judge_span, spans) is grade_span
    assert judge_span.start_time is not None and grade_span.start_time is not None
    assert (
        grade_span.start_time <= judge_span.start_time <= judge_span.end_time <= grade_span.end_time
    )  # type: ignore[operator]


def test_a_failed_call_is_an_error_span(spans: InMemorySpanExporter, emulator: Emulator) -> None:
    emulator.enqueue(http_error(400, "bad request"))
    judge = AnthropicJudge(client=emulator.client(max_retries=0), model="claude-judge")
    with pytest.raises(JudgeError):
        grade("hi", RUBRIC, judge=judge)
    [call] = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert call.status.status_code is StatusCode.ERROR
    assert (call.attributes or {})["error.type"] == "api_error"
    assert "bad request" in (call.status.description or "")
    [graded] = named(spans, "gradeloop.grade")
    assert graded.status.status_code is StatusCode.ERROR  # the exception left grade()
    assert any(e.name == "exception" for e in graded.events)


def test_a_judge_failure_marks_its_round(spans: InMemorySpanExporter) -> None:
    judge = FakeJudge(
        verdict(False, {}, ["x"], {"tone": 3}), JudgeError("no JSON", reason="invalid")
    )
    run_loop("t", RUBRIC, generator=FakeGenerator(), judge=judge, max_rounds=2)
    rounds = named(spans, "gradeloop.round")
    assert [r.status.status_code for r in rounds] == [StatusCode.UNSET, StatusCode.ERROR]
    assert "invalid: no JSON" in (rounds[1].status.description or "")


def test_a_checker_that_raises_is_recorded(spans: InMemorySpanExporter) -> None:
    reg = Registry()

    def broken(text: str) -> CheckResult:
        raise RuntimeError("boom")

    reg.add("broken", broken)
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "d", "checker": "broken"}]}, registry=reg
    )
    ev = grade("x", rubric, registry=reg)
    assert not ev.accepted
    [check] = named(spans, "gradeloop.check")
    assert check.status.status_code is StatusCode.ERROR
    assert [e.attributes["exception.message"] for e in check.events] == ["boom"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("answer", "passed", "issues"),
    [(True, True, 0), (False, False, 0), (CheckResult(False, ["no"]), False, 1)],
)
def test_a_check_span_records_a_bare_bool_as_its_answer(
    spans: InMemorySpanExporter, answer: CheckResult | bool, passed: bool, issues: int
) -> None:
    reg = Registry()
    reg.add("says", lambda text: answer)
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "d", "checker": "says"}]}, registry=reg
    )
    assert grade("x", rubric, registry=reg).accepted is passed
    [check] = named(spans, "gradeloop.check")
    assert check.attributes is not None
    assert check.attributes["gradeloop.check.passed"] is passed
    assert check.attributes["gradeloop.check.issues"] == issues


def test_an_exception_leaving_the_loop_is_recorded(spans: InMemorySpanExporter) -> None:
    class Broken:
        def generate(self, task: str, draft: str = "", issues: Any = None) -> str:
            raise ValueError("no draft")

    with pytest.raises(ValueError, match="no draft"):
        run_loop("t", RUBRIC, generator=Broken(), judge=FakeJudge())
    [loop] = named(spans, "gradeloop.loop")
    assert loop.status.status_code is StatusCode.ERROR
    assert named(spans, "gradeloop.round") == []


def test_no_provider_no_spans_and_the_same_results() -> None:
    telemetry.use_tracer_provider(None)  # the global provider: none configured in tests
    assert telemetry._tracer() is None
    judge = FakeJudge(verdict(True, {}, [], {"tone": 9}))
    assert run_loop("t", RUBRIC, generator=FakeGenerator(), judge=judge).passed


_NO_OTEL = """
import sys
sys.modules["opentelemetry"] = None  # as if the extra were not installed
from gradeloop import grade, run_loop
from gradeloop.integrations import telemetry
from gradeloop.grading._checks import run_checker
from gradeloop.loop._run import run_loop as raw
from tests.support.fakes import FakeGenerator, FakeJudge, verdict
rubric = {RUBRIC!r}
assert telemetry.AVAILABLE is False
# the decorators handed back the very functions: not even a wrapper call
assert not hasattr(raw, "__wrapped__") and not hasattr(run_checker, "__wrapped__")
judge = FakeJudge(verdict(True, {{}}, [], {{"tone": 9}}))
assert run_loop("t", rubric, generator=FakeGenerator(), judge=judge).passed
grade("hello", rubric, skip_judge=True)
loaded = [m for m, mod in sys.modules.items() if m.startswith("opentelemetry") and mod]
assert loaded == [], loaded
print("ok")
"""


def test_without_the_extra_nothing_is_imported_and_nothing_is_wrapped() -> None:
    assert _python(_NO_OTEL) == "ok"


def _python(template: str, env: dict[str, str] | None = None) -> str:
    """What a fresh interpreter running ``template`` (with this file's rubric) prints."""
    code = textwrap.dedent(template.format(RUBRIC=RUBRIC))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_with_the_extra_the_hot_functions_are_wrapped() -> None:
    # the twin of the test above: in this environment the API is installed
    from gradeloop import run_loop as raw
    from gradeloop.grading._checks import run_checker

    assert telemetry.AVAILABLE is True
    assert hasattr(raw, "__wrapped__") and hasattr(run_checker, "__wrapped__")


def test_the_docs_example_runs() -> None:
    text = (ROOT / "docs" / "telemetry.md").read_text(encoding="utf-8")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "docs/telemetry.md", "exec"), {})
    assert telemetry._provider is None  # the example hands its provider back


def test_an_openai_compatible_call_names_its_provider(
    spans: InMemorySpanExporter, oai_emulator: OAIEmulator
) -> None:
    oai_emulator.enqueue(chat("a draft"))
    generator = OpenAICompatibleGenerator(client=oai_emulator.client(max_retries=0), model="qwen3")
    assert generator.generate("write") == "a draft"
    [call] = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    attrs = dict(call.attributes or {})
    assert call.name == "chat qwen3"
    assert attrs["gen_ai.system"] == attrs["gen_ai.provider.name"] == "openai"
    assert attrs["gen_ai.usage.output_tokens"] == generator.calls[0].usage.output_tokens > 0


_GLOBAL_LATER = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from gradeloop import grade
from gradeloop.integrations import telemetry
rubric = {RUBRIC!r}
grade("hello", rubric, skip_judge=True)  # no provider yet: nothing recorded, and remembered
assert telemetry.active_tracer() is None
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)  # set in code after gradeloop first graded
grade("hello", rubric, skip_judge=True)
print(sorted({{s.name for s in exporter.get_finished_spans()}}))
"""


def test_a_global_provider_set_after_the_first_grade_is_seen() -> None:
    # gradeloop skips OpenTelemetry's per-call environment read, never a provider set later
    assert _python(_GLOBAL_LATER) == "['gradeloop.check', 'gradeloop.grade']"


_FROM_ENV = """
from gradeloop import grade
from gradeloop.integrations import telemetry
grade("hello", {RUBRIC!r}, skip_judge=True)
print(type(telemetry.active_tracer()).__module__)
"""


@pytest.mark.parametrize(
    ("named", "expected"),
    [("sdk_tracer_provider", "opentelemetry.sdk.trace"), (None, "builtins")],
)
def test_a_provider_named_in_the_environment_is_used(named: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_PYTHON_TRACER_PROVIDER"}
    if named is not None:
        env["OTEL_PYTHON_TRACER_PROVIDER"] = named
    assert _python(_FROM_ENV, env) == expected  # a tracer of the SDK's, or None (builtins)
