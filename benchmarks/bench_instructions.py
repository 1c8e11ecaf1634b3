"""``code_runs`` over bare ``ast.parse`` in CPU instructions, which no neighbour can change.

Run: ``python benchmarks/bench_instructions.py [--calls N] [--python OTHER_PYTHON ...]``

``bench_checkers.py`` times CPU seconds, and on a shared machine even CPU time moves
with the load (the neighbours evict the caches; the same code measured 1.09x on a
quiet machine and 1.6x under a load of 10 on 2 cores). This script counts
instructions instead, with ``valgrind --tool=callgrind``, which executes the
program on a simulated CPU: the count is the same however busy the machine is.

For each interpreter (this one, and each ``--python``, for example the venv of a
worktree of an older commit: the script is this same file, the checker is whatever
that interpreter imports), one run under callgrind imports everything, calls every
subject once (so tables are loaded and caches warm), then makes ``--calls`` calls
of each subject: bare ``ast.parse`` of the 5 KB draft's three blocks, and
``code_runs`` on the draft. Each series runs inside ``functools.reduce``, and
callgrind is told to write its counts on entering and leaving that C function
(``--dump-before`` / ``--dump-after``), so each series is counted on its own; a
series of empty calls is subtracted as the loop's own cost. Every subject clears
the Markdown scan cache first, as in ``bench_checkers.py``; ``PYTHONHASHSEED`` is
fixed so that runs repeat exactly.

An instruction is not a nanosecond (cache misses and branch mispredictions are
not counted), so the CPU-seconds ratio of ``bench_checkers.py`` on a quiet machine
is what the target is about; this one is the figure that can be compared between
two runs on a busy one. Needs valgrind (``apt-get install valgrind``) and a CPython
built with symbols (pyenv's are).
"""

from __future__ import annotations

import argparse
import ast
import functools
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

SUBJECTS = ("ast.parse", "code_runs")
_TOTAL = re.compile(rb"^totals:((?:\s+\d+)+)", re.MULTILINE)
_EVENTS = re.compile(rb"^events:((?:\s+\w+)+)", re.MULTILINE)
# kcachegrind's cycle estimate: an L1 miss ~10 cycles, a last-level miss ~100, a
# mispredicted branch ~10.
_WEIGHTS = {
    "Ir": 1,
    "I1mr": 10,
    "D1mr": 10,
    "D1mw": 10,
    "ILmr": 100,
    "DLmr": 100,
    "DLmw": 100,
    "Bcm": 10,
    "Bim": 10,
}


def _subjects() -> dict[str, Callable[[], Any]]:
    """The subjects, built from the benchmark draft of ``bench_checkers.py``."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_checkers import DRAFT, _fences, uncached

    from gradeloop import get_checker

    code_runs = get_checker("code_runs")
    blocks = [f.source for f in _fences(DRAFT) if f.language == "python"]

    def parse_blocks() -> None:
        for source in blocks:
            ast.parse(source)

    return {
        "ast.parse": uncached(parse_blocks),
        "code_runs": uncached(lambda: code_runs(DRAFT, python="3.9")),
    }


def child(calls: int) -> None:
    """Warm every subject up, then run the measured series, each in its own ``reduce``."""
    subjects = _subjects()
    for fn in subjects.values():
        fn()

    def empty(acc: None, _: int) -> None:
        return None

    functools.reduce(empty, range(calls), None)
    for name in SUBJECTS:
        fn = subjects[name]
        functools.reduce(lambda acc, _: fn(), range(calls), None)


def _count(dump: bytes) -> int:
    """Instructions in a callgrind dump; with the cache and branch simulation, the
    estimated cycles (instructions plus weighted misses) instead."""
    found, events = _TOTAL.search(dump), _EVENTS.search(dump)
    if not found:
        return 0
    values = [int(v) for v in found.group(1).split()]
    names = events.group(1).decode().split() if events else ["Ir"]
    return sum(_WEIGHTS.get(n, 0) * v for n, v in zip(names, values, strict=False))


def series_counts(python: str, argv: list[str], series: int, cache_sim: bool = False) -> list[int]:
    """Instructions (or estimated cycles) of the last ``series`` runs of
    ``functools.reduce`` in ``python argv...`` under callgrind, the run just before
    them (a series of empty calls) subtracted from each. The script is run once
    plainly first, so that every .pyc is written before anything is counted."""
    subprocess.run([python, *argv], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            "--dump-before=functools_reduce",
            "--dump-after=functools_reduce",
            *(["--cache-sim=yes", "--branch-sim=yes"] if cache_sim else []),
            python,
            *argv,
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(cmd, check=True, env=env, capture_output=True)
        totals = []
        dumps = sorted(glob.glob(out + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        for name in dumps:
            with open(name, "rb") as f:
                totals.append(_count(f.read()))
    # The last dumps are the series, each followed by the gap before the next one
    # (earlier dumps: start-up, and any reduce() the imports made).
    counted = totals[-2 * series - 1 :: 2]
    if len(counted) != series + 1:
        raise SystemExit(f"callgrind wrote {len(totals)} dumps for {python}; expected more")
    return [count - counted[0] for count in counted[1:]]


def per_call(python: str, calls: int, cache_sim: bool = False) -> dict[str, float]:
    """Instructions (or estimated cycles) per call of each subject under ``python``."""
    argv = [os.path.abspath(__file__), "--child", "--calls", str(calls)]
    counts = series_counts(python, argv, len(SUBJECTS), cache_sim)
    return {name: count / calls for name, count in zip(SUBJECTS, counts, strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="measured calls per subject")
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="another interpreter to measure the same way (e.g. a baseline checkout's venv)",
    )
    parser.add_argument(
        "--cache-sim",
        action="store_true",
        help="simulate caches and branch prediction; print estimated cycles, not instructions",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    calls = max(1, args.calls)
    if args.child:
        child(calls)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed; apt-get install valgrind")
    print(f"{'interpreter':<44}{'ast.parse':>12}{'code_runs':>12}{'ratio':>8}")
    for python in [sys.executable, *args.python]:
        counts = per_call(python, calls, args.cache_sim)
        ratio = counts["code_runs"] / counts["ast.parse"]
        print(
            f"{python:<44}{counts['ast.parse']:>12,.0f}{counts['code_runs']:>12,.0f}{ratio:>8.3f}"
        )
    unit = "estimated cycles" if args.cache_sim else "instructions"
    print(f"({unit} per call, {calls} calls each; target: code_runs <= 1.5x ast.parse)")


if __name__ == "__main__":
    main()
