"""Every pattern a rubric, an MCP client or a proposal brings runs in linear time.

``(a+)+$`` on 28 characters ran 20 s under checker_timeout = 2 (a search holding the
interpreter cannot be timed out), and about 40 hung the MCP server. Now: a pattern
Python would backtrack on runs on RE2 (``gradeloop[re2]``), one neither can run in
linear time is refused when the rubric loads with the reason, and without RE2 the
unbounded ones are refused too, saying how to install it. Cheap patterns keep
Python's exact meaning.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from gradeloop import Rubric, grade
from gradeloop.errors import RubricError
from gradeloop.grading import linear_regex
from gradeloop.grading._regex import _compiled

EVIL = "(a+)+$"


def rubric(pattern: str, **options: Any) -> Rubric:
    criterion = {"key": "k", "description": "d", "checker": "regex"}
    return Rubric.from_dict(
        {"criteria": [{**criterion, "options": {"pattern": pattern, **options}}]}
    )


def timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


@pytest.mark.parametrize(
    ("pattern", "text", "passes"),
    [
        (EVIL, "a" * 40 + "!", False),  # exponential on Python's re
        (EVIL, "a" * 40, True),
        (r"\d+c", "1" * 50_000, False),  # quadratic on Python's re: 12 s
        (r"\d+c", "1" * 50_000 + "c", True),
        (r"(x|xx)+y", "x" * 40, False),
    ],
)
def test_patterns_python_backtracks_on_run_in_linear_time(
    pattern: str, text: str, passes: bool
) -> None:
    evaluation, seconds = timed(lambda: grade(text, rubric(pattern)))
    assert evaluation["k"].passed is passes
    assert seconds < 1.0


def test_forbidden_matches_are_found_in_linear_time_too() -> None:
    evaluation, seconds = timed(
        lambda: grade("b" + "a" * 30_000 + "!", rubric(r"a+$|b", must_match=False))
    )
    assert not evaluation["k"].passed and seconds < 1.0


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (r"(a)\1", "uses a backreference"),
        (r"\w{0,9999}x", "repeat counts above 1000"),
        (r"x+(?=y)", "lookarounds"),
    ],
)
def test_a_pattern_no_engine_runs_in_linear_time_is_refused_at_load(
    pattern: str, says: str
) -> None:
    with pytest.raises(RubricError) as info:
        rubric(pattern)
    assert says in str(info.value) and "'k'" in str(info.value)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        (r"\w{1,5}", "café!", "café"),  # Python's Unicode \w, kept for a cheap pattern
        (r"(?<!\w)TODO(?!\w)", "a TODO here", "TODO"),  # lookarounds: cheap, kept
        (r"\bsk-[A-Za-z0-9]{20,40}\b", "key sk-" + "A" * 24 + " end", "sk-" + "A" * 24),
    ],
)
def test_cheap_patterns_keep_pythons_meaning(pattern: str, text: str, found: str) -> None:
    match = linear_regex(pattern).search(text)
    assert match is not None and match.group(0) == found
    assert grade(text, rubric(pattern))["k"].passed


def test_flags_reach_either_engine() -> None:
    assert linear_regex("A{1,2}B", ignore_case=True).search("xab") is not None  # Python's
    assert linear_regex("A+B", ignore_case=True).search("xaab") is not None  # RE2's
    assert linear_regex("^b+", multiline=True).search("a\nbb") is not None
    assert linear_regex("a.+b", dotall=True).search("a\n\nb") is not None
    assert linear_regex("a.+b").search("a\n\nb") is None


@pytest.fixture
def without_re2(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As on an install without the ``re2`` extra."""
    monkeypatch.setitem(sys.modules, "re2", None)  # import re2 -> ImportError
    _compiled.cache_clear()
    yield
    _compiled.cache_clear()


def test_without_re2_a_pattern_python_backtracks_on_is_refused_saying_how_to_fix_it(
    without_re2: None,
) -> None:
    with pytest.raises(ImportError):
        importlib.import_module("re2")
    with pytest.raises(RubricError) as info:
        rubric(EVIL)
    assert "pip install 'gradeloop[re2]'" in str(info.value)
    assert "unbounded repeat" in str(info.value)
    assert grade("a TODO", rubric(r"(?<!\w)TODO"))["k"].passed  # a cheap one still runs


def test_an_mcp_client_s_pattern_cannot_hang_the_server(tmp_path: Any) -> None:
    from gradeloop.integrations.mcp_server import build_runner, build_server

    runner = build_runner(db=str(tmp_path / "h.db"))
    server = build_server(runner)
    criteria = [{"key": "k", "description": "d", "checker": "regex",
                 "options": {"pattern": EVIL}}]  # fmt: skip

    async def go() -> Any:
        return await server.call_tool(
            "evaluate_output", {"output": "a" * 40 + "!", "criteria": criteria}
        )

    try:
        result, seconds = timed(lambda: asyncio.run(go()))
    finally:
        runner.close()
    data = json.loads(result.content[0].text)
    assert data["passed"] is False and seconds < 5.0
