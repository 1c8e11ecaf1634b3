"""Audit the gate: hostile judge replies and random loops, counted rather than asserted.

The property tests (tests/grading/test_hostile_replies.py, tests/loop/test_loop_invariants.py)
stop at the first broken promise. This script runs the same strategies and oracle
(tests/support/hostile.py, tests/support/hostile_loops.py) without stopping and counts:

* replies tried (every reply the judge read, in native, json and auto modes, plus
  each custom judge's answer), false passes (accepted though the reply was not a
  valid all-met verdict) and other disagreements with the oracle;
* loops tried (run_loop, the graph engine, the tool-driven loop) and loops that
  broke an invariant.

Usage (from the repository root, dev environment active)::

    python benchmarks/audit_gate.py --replies 3000 --loops 3000

To audit another checkout with these same tests, put its source first on the path:
``PYTHONPATH=/path/to/other/src:/path/to/other/checkers python benchmarks/audit_gate.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tests.support import hostile, hostile_loops

MODES = ("native", "json", "auto")


def _settings(n: int) -> Any:
    return settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],  # count everything: no shrinking, no replay
        suppress_health_check=list(HealthCheck),
    )


def audit_replies(n: int, tally: Counter[tuple[str, str]], samples: dict[str, str]) -> None:
    @_settings(n)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        criteria = data.draw(hostile.criteria_sets())
        script = [data.draw(hostile.replies(criteria)) for _ in range(3)]
        for mode in MODES:
            out = hostile.through_anthropic_judge(criteria, script, mode)
            tally[mode, "replies"] += out.calls
            for problem in hostile.judge_violations(criteria, script, mode, out):
                kind = "false passes" if problem.startswith("FALSE PASS") else "other"
                tally[mode, kind] += 1
                samples.setdefault(f"{mode}: {kind}", problem)
        kind_, value = data.draw(hostile.custom_answers(criteria))
        out = hostile.through_custom_judge(criteria, kind_, value)
        route = f"custom {kind_}"
        tally[route, "replies"] += 1
        for problem in hostile.custom_violations(criteria, kind_, value, out):
            kind = "false passes" if problem.startswith("FALSE PASS") else "other"
            tally[route, kind] += 1
            samples.setdefault(f"{route}: {kind}", problem)

    run()


def audit_loops(n: int, tally: Counter[tuple[str, str]], samples: dict[str, str]) -> None:
    engines = {
        "run_loop": hostile_loops.run_loop_violations,
        "graph": hostile_loops.graph_violations,
        "tools": hostile_loops.tools_violations,
    }

    @_settings(n)
    @given(script=hostile_loops.scripts())
    def run(script: hostile_loops.Script) -> None:
        for name, check in engines.items():
            problems = check(script)
            tally[name, "loops"] += 1
            if problems:
                tally[name, "violating loops"] += 1
                samples.setdefault(f"{name}: invariant", "; ".join(problems))

    run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replies", type=int, default=1000, help="reply scripts to draw")
    parser.add_argument("--loops", type=int, default=1000, help="loop scripts to draw")
    args = parser.parse_args()
    import gradeloop

    print(f"gradeloop from {Path(gradeloop.__file__).parent}")
    tally: Counter[tuple[str, str]] = Counter()
    samples: dict[str, str] = {}
    started = time.perf_counter()
    if args.replies:
        audit_replies(args.replies, tally, samples)
    if args.loops:
        audit_loops(args.loops, tally, samples)
    print(f"{'route':<16}{'replies':>9}{'false passes':>14}{'other':>8}")
    for route in (*MODES, "custom dict", "custom verdict", "custom other"):
        print(
            f"{route:<16}{tally[route, 'replies']:>9}{tally[route, 'false passes']:>14}"
            f"{tally[route, 'other']:>8}"
        )
    print(f"{'engine':<16}{'loops':>9}{'violating':>14}")
    for engine in ("run_loop", "graph", "tools"):
        print(f"{engine:<16}{tally[engine, 'loops']:>9}{tally[engine, 'violating loops']:>14}")
    for where, problem in sorted(samples.items()):
        print(f"e.g. {where}: {problem[:400]}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
