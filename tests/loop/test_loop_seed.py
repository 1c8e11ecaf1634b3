"""Seed 002's loop guards, through the public API, with plain fakes: ``optimize`` and
the same plain loop through ``arun_loop`` (the two drivers of the loop's one flow)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from gradeloop import Rubric, arun_loop, optimize
from gradeloop.grading import Registry
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

KEYS = ("api_cited", "code_runs", "errors_named", "sentence_len", "no_invention")


@pytest.fixture
def rubric() -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": k, "description": f"{k} holds"} for k in KEYS]},
        registry=Registry(autoload=False),
    )


def fails(n: int = 9) -> list:
    return [
        verdict(False, dict.fromkeys(KEYS, False), issues=["add caveats", "cite section"])
        for _ in range(n)
    ]


def passes() -> object:
    return verdict(True, dict.fromkeys(KEYS, True))


def models(script: list) -> tuple[FakeGenerator, FakeJudge, list[str]]:
    calls: list[str] = []
    return FakeGenerator(calls=calls), FakeJudge(*script, calls=calls), calls


Plain = Callable[..., tuple[str, bool]]


async def aoptimize(task: str, rubric: Any, **kw: Any) -> tuple[str, bool]:
    """``optimize``'s plain loop, awaited (its fixed settings, through arun_loop)."""
    result = await arun_loop(
        task, rubric, stagnation_rounds=0, return_policy="last", similarity=None,
        reuse_identical=False, **kw,
    )  # fmt: skip
    return result.draft, result.passed


@pytest.fixture(params=["optimize", "arun_loop"])
def plain(request: pytest.FixtureRequest) -> Plain:
    if request.param == "optimize":
        return optimize
    return lambda *a, **kw: asyncio.run(aoptimize(*a, **kw))


def test_all_fail_at_cap_3_is_2n_calls_and_the_last_judged_draft(
    plain: Plain, rubric: Rubric
) -> None:
    gen, judge, calls = models(fails())
    assert plain("t", rubric, generator=gen, judge=judge, max_rounds=3) == ("d2", False)
    assert calls == ["generate", "evaluate"] * 3
    assert judge.seen[-1]["draft"] == "d2"  # the returned draft is the one judged last


def test_pass_on_round_one_is_two_calls(plain: Plain, rubric: Rubric) -> None:
    gen, judge, calls = models([passes()] * 4)
    assert plain("t", rubric, generator=gen, judge=judge) == ("d0", True)
    assert calls == ["generate", "evaluate"]


def test_pass_on_round_two(plain: Plain, rubric: Rubric) -> None:
    gen, judge, calls = models([fails(1)[0], passes()])
    assert plain("t", rubric, generator=gen, judge=judge) == ("d1", True)
    assert calls == ["generate", "evaluate"] * 2


@pytest.mark.parametrize("cap", [0, -1, 1, 3])
def test_the_cap_halts_at_every_value(plain: Plain, rubric: Rubric, cap: int) -> None:
    gen, judge, calls = models(fails())
    _, ok = plain("t", rubric, generator=gen, judge=judge, max_rounds=cap)
    assert ok is False
    assert len(calls) == max(1, 2 * cap), calls
    if cap < 1:
        assert calls == ["generate"]


@pytest.mark.parametrize(
    "met",
    [
        {},  # empty evidence
        {"api_cited": True},  # one key of five
        dict.fromkeys(KEYS, True) | {"no_invention": False},  # one False value
    ],
)
def test_the_claim_alone_never_passes(plain: Plain, rubric: Rubric, met: dict[str, bool]) -> None:
    gen, judge, calls = models([verdict(True, met)] * 3)
    assert plain("t", rubric, generator=gen, judge=judge) == ("d2", False)
    assert calls == ["generate", "evaluate"] * 3


def test_a_real_pass_passes(plain: Plain, rubric: Rubric) -> None:
    # the twin of the three above: a gate of `return False` would fail here
    gen, judge, _ = models([passes()])
    assert plain("t", rubric, generator=gen, judge=judge, max_rounds=1) == ("d0", True)


def test_feedback_reaches_the_generator_as_bullets_with_the_previous_draft(
    plain: Plain, rubric: Rubric
) -> None:
    gen, judge, _ = models([fails(1)[0], passes()])
    plain("t", rubric, generator=gen, judge=judge)
    revision = gen.prompts[1]
    assert revision["draft"] == "d0"
    assert revision["issues"] == ["add caveats", "cite section"]


def test_the_generator_sees_every_criterion(plain: Plain, rubric: Rubric) -> None:
    reg = Registry(autoload=False)
    reg.add("short", lambda text: len(text) < 100)
    mixed = Rubric.from_dict(
        {
            "criteria": [
                {"key": "tone", "description": "The tone is warm."},
                {"key": "brief", "description": "Under 100 characters.", "checker": "short"},
            ]
        },
        registry=reg,
    )
    gen, judge, _ = models([verdict(True, {"tone": True})])
    plain("write it", mixed, generator=gen, judge=judge)
    task_seen = gen.prompts[0]["task"]
    assert task_seen.startswith("write it")
    assert "Under 100 characters." in task_seen  # the code-filled one too
    assert "The tone is warm." in task_seen
    assert judge.seen[0]["task"] == "write it"  # the judge gets the bare task
    assert judge.seen[0]["keys"] == ["tone"]  # and only its own keys
