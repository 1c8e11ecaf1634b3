"""code_runs against vermin's own test expectations (benchmarks/data/vermin_cases.json).

The thresholds are the issue's targets: syntax >= 95 %, modules and submodules
100 %, members and keyword arguments >= 85 % of the cases needing 3.9 or newer
detected one version below their minimum, and no false positive at the minimum
itself. ``benchmarks/bench_code_runs_accuracy.py`` prints the full table.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from gradeloop_checkers.code_runs import code_runs

CASES = Path(__file__).parents[2] / "benchmarks" / "data" / "vermin_cases.json"
TARGETS = {"syntax": 0.95, "module": 1.0, "member": 0.85, "kwarg": 0.85}
RUNNING = sys.version_info.minor


def _fenced(source: str) -> str:
    return f"```python\n{source}\n```\n"


def _counted(case: dict[str, Any]) -> bool:
    """Not CPython's test helpers, and readable by the running parser."""
    return not case["source"].lstrip().startswith(("import test.", "from test."))


@pytest.fixture(scope="module")
def results() -> dict[str, Counter[str]]:
    data = json.loads(CASES.read_text(encoding="utf-8"))
    assert data["commit"] and data["licence"].startswith("MIT")
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    for case in data["cases"]:
        if not _counted(case):
            continue
        kind, minor = case["kind"], int(case["minimum"][2:])
        text = _fenced(case["source"])
        at_minimum = code_runs(text, python=f"3.{minor}")  # type: ignore[arg-type]
        newer = f"does not parse on Python 3.{RUNNING}, which runs"
        if any(newer in issue for issue in at_minimum.issues):
            continue
        rejected_by_its_own_interpreter = (
            minor <= 13 and case["compiles"][minor - 8] == "0"
        ) or case.get("imports_fail_at_minimum")
        if not at_minimum.passed and not rejected_by_its_own_interpreter:
            stats[kind]["false positives"] += 1
        if minor >= 9:
            stats[kind]["cases"] += 1
            below = code_runs(text, python=f"3.{minor - 1}")  # type: ignore[arg-type]
            stats[kind]["detected"] += not below.passed
    return stats


@pytest.mark.parametrize(("kind", "target"), sorted(TARGETS.items()))
def test_detects_what_vermin_expects(
    results: dict[str, Counter[str]], kind: str, target: float
) -> None:
    counted = results[kind]
    assert counted["cases"] > 10
    rate = counted["detected"] / counted["cases"]
    assert rate >= target, f"{kind}: {counted['detected']}/{counted['cases']} = {rate:.1%}"


def test_no_false_positive_on_vermins_cases(results: dict[str, Counter[str]]) -> None:
    assert {kind: c["false positives"] for kind, c in results.items() if c["false positives"]} == {}


def test_the_cases_are_checked_where_they_run_and_fail_a_version_earlier() -> None:
    # The scoring's own twin: a case needing 3.11 passes there and fails on 3.10.
    text = _fenced("from typing import Self")
    assert code_runs(text, python="3.11").passed
    assert not code_runs(text, python="3.10").passed
