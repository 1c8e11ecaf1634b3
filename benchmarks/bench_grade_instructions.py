"""grade()'s cost per draft in instructions: bench_trajectory's and bench_grade_overhead's subjects.

Run: ``python benchmarks/bench_grade_instructions.py [--drafts N] [--python OTHER_PYTHON ...]``

On a machine shared with others even CPU time moves with the load; callgrind counts
the instructions each subject executes, which no neighbour can change (see
``bench_instructions.py``, whose counting this uses). One run under callgrind builds
``--drafts`` inputs of each benchmark (300 unless told), runs every subject once (so
caches and tables are warm), then runs each subject over all the drafts inside its
own ``functools.reduce`` call; an empty one first is subtracted as the loop's cost.

Subjects, as in the two scripts: from ``bench_trajectory.py`` (agent runs of 8 tool
calls, five trajectory keys) ``match``, ``checkers``, ``grade``, ``read + match`` and
``grade(messages)``; from ``bench_grade_overhead.py`` (short drafts, five cheap text
checks) ``checkers``, ``grade`` and ``grade_many``. Printed: instructions a draft
and the ratios those scripts print. An instruction is not a nanosecond (the
overhead's allocations miss the caches more often than the matching does, so its CPU
ratios run higher); this is the figure two runs on a busy machine can compare. To
measure another checkout, give ``--python`` its interpreter (or put its ``src`` and
``checkers`` first on ``PYTHONPATH``, as ``gradeloop`` and ``gradeloop_checkers``).
Needs valgrind.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_instructions import series_counts

SUBJECTS = (
    "trajectory match",
    "trajectory checkers",
    "trajectory grade",
    "trajectory read + match",
    "trajectory grade(messages)",
    "overhead checkers",
    "overhead grade",
    "overhead grade_many",
)
RATIOS = (
    ("trajectory grade", "trajectory match", 2.0),
    ("trajectory grade", "trajectory checkers", None),
    ("trajectory grade(messages)", "trajectory read + match", 2.0),
    ("overhead grade", "overhead checkers", 2.0),
    ("overhead grade_many", "overhead grade", 1.1),
)


def _subjects(drafts: int) -> dict[str, Callable[[], Any]]:
    import bench_grade_overhead as overhead
    import bench_trajectory as trajectory

    runs = trajectory.subjects(8, drafts)
    texts = overhead.subjects_over(drafts)
    return {f"trajectory {name}": fn for name, fn in runs.items()} | {
        f"overhead {name}": texts[name] for name in ("checkers", "grade", "grade_many")
    }


def child(drafts: int) -> None:
    """Warm every subject up, then run each over every draft in its own ``reduce``."""
    subjects = _subjects(drafts)
    for fn in subjects.values():
        fn()
    functools.reduce(lambda acc, _: None, range(1), None)
    for name in SUBJECTS:
        fn = subjects[name]
        functools.reduce(lambda acc, _: fn(), range(1), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=300)
    parser.add_argument("--python", action="append", default=[], help="another interpreter")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    drafts = max(1, args.drafts)
    if args.child:
        child(drafts)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed; apt-get install valgrind")
    argv = [os.path.abspath(__file__), "--child", "--drafts", str(drafts)]
    for python in [sys.executable, *args.python]:
        counts = series_counts(python, argv, len(SUBJECTS))
        per = {name: count / drafts for name, count in zip(SUBJECTS, counts, strict=True)}
        print(f"{python}: instructions a draft, {drafts} drafts")
        for name, value in per.items():
            print(f"{name:>28} {value:12,.0f}")
        for top, bottom, target in RATIOS:
            aim = f" (target <= {target})" if target is not None else ""
            print(f"{top} / {bottom} = {per[top] / per[bottom]:.3f}{aim}")


if __name__ == "__main__":
    main()
