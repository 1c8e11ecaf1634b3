"""Each reward step as an OpenTelemetry span carrying its figures."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from gradeloop.integrations import telemetry
from gradeloop.rewards import trl_reward
from tests.rewards.fakes import RUBRIC, WordJudge, columns


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


def test_a_step_is_a_span_with_its_figures(spans: InMemorySpanExporter) -> None:
    reward = trl_reward(
        RUBRIC, judge=WordJudge("a"), audit=WordJudge("b", "hello"), audit_fraction=0.5
    )
    completions = ["hello", "hello", "so rude", "please fail"]
    state = SimpleNamespace(global_step=4)
    reward(prompts=["p"] * 4, completions=completions, **{**columns(4), "trainer_state": state})
    steps = [s for s in spans.get_finished_spans() if s.name == "gradeloop.reward.step"]
    assert len(steps) == 1
    attrs = dict(steps[0].attributes or {})
    assert attrs["gradeloop.reward.step"] == 4
    assert attrs["gradeloop.reward.rollouts"] == 4 and attrs["gradeloop.reward.unique"] == 3
    assert attrs["gradeloop.reward.unanswered"] == 1
    assert attrs["gradeloop.reward.audit.audited"] == 2
    assert "gradeloop.reward.audit.gap" in attrs
    assert "gradeloop.reward.audit.agreement.polite" in attrs


def test_no_span_without_a_tracer() -> None:
    reward = trl_reward(RUBRIC, judge=WordJudge())
    assert reward(prompts=["p"], completions=["hello"], **columns(1)) == [1.0]
    assert "gradeloop.reward.audit.gap" not in reward.steps[0].attributes()


def test_the_span_carries_the_intervals(spans: InMemorySpanExporter) -> None:
    reward = trl_reward(
        RUBRIC, judge=WordJudge("a"), audit=WordJudge("b", "hello"), audit_fraction=1.0
    )
    reward(prompts=["p"] * 3, completions=["hello", "hi", "hey"], **columns(3))
    step = reward.watch.steps[0]
    (span,) = [s for s in spans.get_finished_spans() if s.name == "gradeloop.reward.step"]
    attrs = dict(span.attributes or {})
    assert attrs["gradeloop.reward.audit.ci.level"] == 0.95
    gap = [
        attrs["gradeloop.reward.audit.gap.ci.lower"],
        attrs["gradeloop.reward.audit.gap.ci.upper"],
    ]
    assert step.gap_ci is not None and gap == step.gap_ci
    polite = [
        attrs["gradeloop.reward.audit.agreement.polite.ci.lower"],
        attrs["gradeloop.reward.audit.agreement.polite.ci.upper"],
    ]
    assert polite == step.agreement_ci("polite")


def test_a_figure_without_an_interval_has_no_ci_attributes(spans: InMemorySpanExporter) -> None:
    reward = trl_reward(
        RUBRIC, judge=WordJudge("a"), audit=WordJudge("b", "hello"), audit_fraction=1.0
    )
    reward(prompts=["p"], completions=["hello"], **columns(1))  # one rollout: no interval
    (span,) = [s for s in spans.get_finished_spans() if s.name == "gradeloop.reward.step"]
    attrs = dict(span.attributes or {})
    assert "gradeloop.reward.audit.gap" in attrs
    assert not any(k.startswith("gradeloop.reward.audit.gap.ci") for k in attrs)
    assert "gradeloop.reward.audit.agreement.polite.ci.lower" in attrs  # Wilson holds at n = 1
