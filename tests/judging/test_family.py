"""The same-family warning: model families from ids, the loop, optimize, the graph tier."""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import optimize, run_loop
from gradeloop.errors import GradeloopWarning
from gradeloop.judging import Jury
from gradeloop.judging._family import announced, model_family, same_family
from tests.support.fakes import AllMet, FakeGenerator
from tests.support.judging_fakes import Voter

RUBRIC = {"criteria": [{"key": "ok", "description": "Fine."}]}


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "Anthropic Claude"),
        ("anthropic.claude-3-5-sonnet-20240620-v1:0", "Anthropic Claude"),
        ("claude-opus-4-1@20250805", "Anthropic Claude"),
        ("gpt-4o-mini", "OpenAI GPT"),
        ("o3-mini", "OpenAI GPT"),
        ("meta-llama/Llama-3.1-8B-Instruct", "Meta Llama"),
        ("llama3.1:8b", "Meta Llama"),
        ("Qwen/Qwen2.5-7B-Instruct", "Alibaba Qwen"),
        ("qwen3:32b", "Alibaba Qwen"),
        ("gemma3-270m", "Google Gemini/Gemma"),
        ("mistral-large-latest", "Mistral"),
        ("deepseek-r1", "DeepSeek"),
        ("my-finetune", None),
        ("gpt4all-j", None),
        ("philosopher-7b", None),
        ("phi4-mini", "Microsoft Phi"),
        ("gemma3n:e4b", "Google Gemini/Gemma"),
        ("", None),
        ("o", None),
    ],
)
def test_families_are_read_from_the_model_id(model: str, family: str | None) -> None:
    assert model_family(model) == family


class Gen(FakeGenerator):
    def __init__(self, model: str) -> None:
        super().__init__()
        self.model = model


class Judge(AllMet):
    def __init__(self, model: str) -> None:
        super().__init__()
        self.model = model


def test_a_loop_with_a_same_family_judge_warns_at_the_callers_line() -> None:
    with pytest.warns(
        GradeloopWarning, match=r"generator \(claude-sonnet-4-5\).*Anthropic Claude"
    ) as seen:
        run_loop("t", RUBRIC, generator=Gen("claude-sonnet-4-5"), judge=Judge("claude-haiku-4-5"))
    assert len(seen) == 1 and seen[0].filename == __file__


def test_a_loop_across_families_does_not_warn() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run_loop("t", RUBRIC, generator=Gen("claude-sonnet-4-5"), judge=Judge("gpt-4o"))
        run_loop("t", RUBRIC, generator=Gen("my-model"), judge=Judge("my-model"))
    assert not [w for w in seen if issubclass(w.category, GradeloopWarning)]


def test_optimize_warns_once() -> None:
    with pytest.warns(GradeloopWarning) as seen:
        optimize("t", RUBRIC, generator=Gen("gpt-4o"), judge=Judge("gpt-4o-mini"))
    assert len([w for w in seen if issubclass(w.category, GradeloopWarning)]) == 1


def test_a_jury_warns_for_its_same_family_members_and_for_one_family_throughout() -> None:
    jury = Jury([Voter(model="gpt-4o"), Voter(model="claude-sonnet-4-5"), Voter(model="qwen3")])
    text = same_family(Gen("claude-haiku-4-5"), jury)
    assert text is not None and "1 of the jury's 3 judges (claude-sonnet-4-5)" in text
    assert same_family(Gen("deepseek-r1"), jury) is None
    one_family = Jury([Voter(model="claude-sonnet-4-5"), Voter(model="claude-opus-4-1")])
    assert "the jury's judges are all Anthropic Claude models" in (
        same_family(Gen("gpt-4o"), one_family) or ""
    )


def test_announced_keeps_the_library_quiet_for_a_caller_that_said_it_already() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with announced():
            run_loop("t", RUBRIC, generator=Gen("gpt-4o"), judge=Judge("gpt-4o"))
    assert not [w for w in seen if issubclass(w.category, GradeloopWarning)]


def test_the_graph_tier_warns_too() -> None:
    pytest.importorskip("langgraph")
    from gradeloop.graph import build_graph

    with pytest.warns(GradeloopWarning, match="self-preference"):
        build_graph(RUBRIC, generator=Gen("llama3.1:8b"), judge=Judge("meta-llama/Llama-3.3-70B"))


@given(st.text(max_size=300))
def test_any_model_id_is_read_without_error(model: str) -> None:
    family = model_family(model)
    assert family is None or isinstance(family, str)


def test_a_pathological_model_id_is_read_in_linear_time() -> None:
    hostile = "-" * 200 + "x" * 200
    start = time.perf_counter()
    for _ in range(200):
        model_family(hostile)
    assert time.perf_counter() - start < 2.0
    assert model_family("claude" + "-" * 10_000) is None  # past the length limit: not looked at


def test_objects_without_a_model_never_warn() -> None:
    assert same_family(object(), object()) is None
    assert same_family(Gen("gpt-4o"), Any) is None


def test_the_async_loop_warns_too() -> None:
    import asyncio

    from gradeloop import arun_loop

    with pytest.warns(GradeloopWarning, match="Alibaba Qwen"):
        asyncio.run(arun_loop("t", RUBRIC, generator=Gen("qwen3:8b"), judge=Judge("qwen2.5:72b")))
