"""checker_timeout: a checker that never returns is a failed key, and grading goes on.

The stuck checkers here wait on an event each test sets at its end, so the abandoned
threads finish and leave (as a real stuck checker's thread would whenever it ends).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradeloop import (
    CheckResult,
    Rubric,
    agrade,
    agrade_many,
    assert_graded,
    grade,
    grade_many,
    hookimpl,
    run_loop,
)
from gradeloop.errors import RubricError
from gradeloop.grading import Registry
from gradeloop.grading._watch import TimedOut, run_watched
from tests.support.cli_helpers import cli
from tests.support.fakes import AllMet, FakeGenerator

released = threading.Event()
seen_in: list[str] = []


def stuck(text: str) -> CheckResult:
    """Never returns while the test runs."""
    seen_in.append(threading.current_thread().name)
    released.wait(timeout=60)
    return CheckResult(True)


def quick(text: str) -> CheckResult:
    seen_in.append(threading.current_thread().name)
    return CheckResult("bad" not in text, [] if "bad" not in text else ["says bad"])


class SlowPlugin:
    @hookimpl
    def register_checkers(self, register: Any) -> None:
        register("stuck", stuck)
        register("quick", quick)


@pytest.fixture(autouse=True)
def _release() -> Iterator[None]:
    released.clear()
    seen_in.clear()
    yield
    released.set()


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.register_plugin(SlowPlugin(), name="slowplug")
    r.add("length", __import__("gradeloop_checkers.text", fromlist=["length"]).length)
    return r


def rubric(
    reg: Registry, *checkers: str, timeout: float | None = 0.3, judged: bool = False
) -> Rubric:
    criteria: list[dict[str, Any]] = [
        {"key": f"k{i}_{name}", "description": f"{name} holds.", "checker": name}
        for i, name in enumerate(checkers)
    ]
    if judged:
        criteria.append({"key": "tone", "description": "Polite."})
    data: dict[str, Any] = {"criteria": criteria}
    if timeout is not None:
        data["checker_timeout"] = timeout
    return Rubric.from_dict(data, registry=reg)


def assert_stuck_key(evaluation: Any, key: str) -> None:
    result = evaluation[key]
    assert result.status == "error" and not result.passed
    [issue] = result.issues
    assert "'stuck'" in issue and "'slowplug'" in issue and "0.3 s" in issue
    assert not evaluation.accepted


def test_a_stuck_checker_is_an_error_and_the_checks_around_it_still_run(reg: Registry) -> None:
    r = rubric(reg, "quick", "stuck", "quick")
    started = time.monotonic()
    out = grade("a bad draft", r, registry=reg)
    assert time.monotonic() - started < 10
    assert_stuck_key(out, "k1_stuck")
    # the one before and the one after were graded, by their checker
    assert out["k0_quick"].status == "failed" and out["k0_quick"].issues == ("says bad",)
    assert out["k2_quick"].status == "failed"
    assert out.to_json()["criteria"][1]["status"] == "error"


def test_the_same_rubric_passes_with_checkers_that_return(reg: Registry) -> None:
    out = grade("a fine draft", rubric(reg, "quick", "quick"), registry=reg)
    assert out.accepted and all(c.status == "met" for c in out.criteria)


def test_the_argument_overrides_the_rubric(reg: Registry) -> None:
    r = rubric(reg, "stuck", timeout=600)
    out = grade("d", r, registry=reg, checker_timeout=0.3)
    assert_stuck_key(out, "k0_stuck")


@pytest.mark.parametrize("value", [-1, float("inf"), float("nan"), True, "30"])
def test_a_bad_time_limit_is_refused_by_name(reg: Registry, value: Any) -> None:
    with pytest.raises(RubricError, match="checker_timeout"):
        rubric(reg, "quick", timeout=value)
    with pytest.raises(ValueError, match="checker_timeout"):
        grade("d", rubric(reg, "quick"), registry=reg, checker_timeout=value)


def test_the_rubric_file_field_and_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    path.write_text(
        'checker_timeout = -2\n[[criteria]]\nkey = "short"\ndescription = "Short."\n'
        'checker = "length"\noptions = { max_words = 5 }\n'
    )
    draft = tmp_path / "d.md"
    draft.write_text("Five words or fewer here.\n")
    ran = cli("grade", str(draft), "--rubric", str(path), "--code-only")
    assert ran.code == 2 and "checker_timeout" in ran.err and len(ran.err.splitlines()) == 1
    path.write_text(path.read_text().replace("-2", "2.5"))
    assert Rubric.load(path).checker_timeout == 2.5
    assert cli("grade", str(draft), "--rubric", str(path), "--code-only").code == 0
    assert Rubric.load(path).to_dict()["checker_timeout"] == 2.5


def test_no_limit_runs_in_the_calling_thread(reg: Registry) -> None:
    out = grade("fine", rubric(reg, "quick", timeout=0), registry=reg)
    assert out.accepted and seen_in == [threading.current_thread().name]


def test_a_plugins_checker_runs_watched_and_gradeloops_own_inline() -> None:
    import gradeloop
    from gradeloop.grading._registry import default_registry, unregister_checker

    gradeloop.checker("quick")(quick)  # an in-process checker is not gradeloop's own
    contains = default_registry().info("contains")
    original = contains.fn
    probe: list[str] = []

    def watching(text: str, **options: Any) -> Any:
        probe.append(threading.current_thread().name)
        return original(text, **options)

    r = Rubric.from_dict(
        {
            "criteria": [
                {"key": "q", "description": "Q.", "checker": "quick"},
                {
                    "key": "n",
                    "description": "N.",
                    "checker": "contains",
                    "options": {"values": ["fine"]},
                },
            ]
        }
    )
    object.__setattr__(contains, "fn", watching)  # see where the built-in is called
    try:
        assert grade("fine", r).accepted
    finally:
        object.__setattr__(contains, "fn", original)
        unregister_checker("quick")
    assert contains.bounded and default_registry().info("length").fn is not None
    assert seen_in and all(n.startswith("gradeloop-checks") for n in seen_in)
    assert probe == [threading.current_thread().name]


def test_the_async_and_batch_roads_give_up_too(reg: Registry) -> None:
    r = rubric(reg, "stuck", "quick", judged=True)
    out = asyncio.run(agrade("d", r, judge=AllMet(), registry=reg))
    assert_stuck_key(out, "k0_stuck")
    slow = rubric(reg, "stuck", "quick", judged=True, timeout=600)
    out = asyncio.run(agrade("d", slow, judge=AllMet(), registry=reg, checker_timeout=0.3))
    assert_stuck_key(out, "k0_stuck")
    many = grade_many(["a", "b"], r, judge=AllMet(), registry=reg, concurrency=2)
    assert [m.output_id for m in many] == ["draft-1", "draft-2"]
    for m in many:
        assert_stuck_key(m, "k0_stuck")
        assert m["tone"].passed and m["k1_quick"].passed
    code_only = rubric(reg, "stuck", "quick")
    for m in grade_many(["a", "b", "c"], code_only, registry=reg, concurrency=3):
        assert_stuck_key(m, "k0_stuck")
    for m in asyncio.run(agrade_many(["a"], code_only, registry=reg)):
        assert_stuck_key(m, "k0_stuck")


def test_the_loop_and_assert_graded_give_up_too() -> None:
    from gradeloop.grading._registry import default_registry

    default_registry().register_plugin(SlowPlugin(), name="slowplug")
    r = rubric(default_registry(), "stuck", "quick", judged=True)
    result = run_loop(
        "task", r, generator=FakeGenerator(["d1", "d2"]), judge=AllMet(), max_rounds=2
    )
    assert result.passed is False and result.stop_reason != "passed"
    assert "still running" in " ".join(result.history[-1].evaluation.issues)
    with pytest.raises(AssertionError, match="k0_stuck"):
        assert_graded("d", r, judge=AllMet())


def test_a_stuck_shadow_checker_loses_its_shadow_only(reg: Registry) -> None:
    r = Rubric.from_dict(
        {
            "checker_timeout": 0.3,
            "criteria": [
                {"key": "q", "description": "Q.", "checker": "quick", "shadow": "stuck"},
            ],
        },
        registry=reg,
    )
    out = grade("fine", r, registry=reg)
    assert out.accepted
    [shadow] = out.shadows
    assert shadow.status == "failed" and "still running after 0.3 s" in (shadow.error or "")


def test_a_checker_sees_the_callers_context_variables(reg: Registry) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    got: list[str] = []

    def reads(text: str) -> bool:
        got.append(var.get())
        return True

    reg.add("reads", reads)
    var.set("the caller's")
    assert grade("d", rubric(reg, "reads", timeout=5), registry=reg).accepted
    assert got == ["the caller's"]


def test_an_exception_past_the_checkers_guard_reaches_the_caller() -> None:
    def leaves() -> Any:
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        run_watched([leaves], 5)
    assert run_watched([lambda: 1, lambda: 2], 5) == [1, 2]


def test_runners_are_reused_not_piled_up(reg: Registry) -> None:
    r = rubric(reg, "quick", timeout=5)
    for _ in range(40):
        grade("fine", r, registry=reg)
    runners = [t for t in threading.enumerate() if t.name == "gradeloop-checks"]
    assert 1 <= len(runners) <= 9


def test_an_abandoned_runner_leaves_once_its_call_ends(reg: Registry) -> None:
    [timed_out] = run_watched([lambda: stuck("x")], 0.2)
    assert isinstance(timed_out, TimedOut) and timed_out.seconds == 0.2
    before = sum(t.name == "gradeloop-checks" for t in threading.enumerate())
    released.set()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if sum(t.name == "gradeloop-checks" for t in threading.enumerate()) < before:
            break
        time.sleep(0.01)
    assert sum(t.name == "gradeloop-checks" for t in threading.enumerate()) < before
