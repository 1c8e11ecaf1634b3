"""propose's time budget per candidate holds within 10 %, and its regex vetting lets
through only patterns one search runs fast on (`\\w{0,9999}x` took 4.6 s on 50 KB)."""

from __future__ import annotations

import time

import pytest

from gradeloop import CheckResult, Criterion
from gradeloop.grading._checks import CheckerInfo
from gradeloop.grading._context import CheckContext
from gradeloop.migration._propose_candidates import regex_risk
from gradeloop.migration._propose_score import predict

KEY = Criterion(key="k", description="d")


def slow(text: str) -> CheckResult:
    time.sleep(0.05)
    return CheckResult(True)


def fast(text: str) -> CheckResult:
    return CheckResult("x" in text)


def test_a_slow_candidate_is_dropped_within_a_tenth_of_its_budget() -> None:
    texts = ["x"] * 200  # 10 s of calls for the slow one
    checks = [(CheckerInfo("slow", slow, "test"), {}), (CheckerInfo("fast", fast, "test"), {})]
    started = time.perf_counter()
    slow_out, fast_out = predict(checks, KEY, texts, [CheckContext()] * len(texts), seconds=1.0)
    elapsed = time.perf_counter() - started
    assert slow_out is None  # over its budget: dropped
    assert fast_out is not None and fast_out[0] == [True] * 200  # the others go on
    assert elapsed <= 1.1


@pytest.mark.parametrize("pattern", [r"\w{0,9999}x", r"\w{0,300}\w{0,300}x", r"[a-z]{1,999}"])
def test_a_pattern_with_a_huge_bound_is_refused(pattern: str) -> None:
    risk = regex_risk(pattern)
    assert risk is not None and "steps at each position" in risk


def test_a_search_of_an_accepted_pattern_is_fast_on_a_long_draft() -> None:
    import re

    pattern = r"(?<!\w)see \d{1,9}\.\d{1,9}(?!\w)"
    assert regex_risk(pattern) is None
    started = time.perf_counter()
    re.search(pattern, "see 1" * 10_000)
    assert time.perf_counter() - started < 0.5
