"""code_runs against vermin's own test expectations, by kind; and its speed beside vermin's.

Run: ``python benchmarks/bench_code_runs_accuracy.py [--show N] [--files N]``

The cases (``data/vermin_cases.json``, derived from vermin's test suite: see
``data/README.md``) are snippets vermin expects to need Python 3.M, for M in 8-14.
For each:

* **detected** (M >= 9): code_runs fails the snippet at target 3.(M-1);
* **no false positive**: code_runs passes it at target 3.M. A snippet the real
  3.M interpreter itself rejects (compile() fails, or an import does not resolve
  there: another platform's name, or vermin's pseudo-paths) is not counted, nor
  are imports of ``test.*`` (CPython's test helpers, not part of the library code_runs
  tables) and snippets newer than the running parser can read.

Targets: syntax >= 95 %, modules 100 %, members and keyword arguments >= 85 %
detected (3.9+), and no false positive. Then speed, when vermin is installed
(``pip install vermin``; a benchmark-only tool, not a project dependency): all case
snippets, and ``--files`` files of the running interpreter's standard library, timed
through bare ``ast.parse``, code_runs and vermin's ``detect``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import sysconfig
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradeloop_checkers.code_runs import CHECKERS

DATA = Path(__file__).parent / "data" / "vermin_cases.json"
TARGETS = {"syntax": 0.95, "module": 1.0, "member": 0.85, "kwarg": 0.85}
RUNNING = sys.version_info.minor


def fenced(source: str) -> str:
    return f"```python\n{source}\n```\n"


def invalid_at_minimum(case: dict[str, Any], minor: int) -> bool:
    """Whether the real interpreter of the snippet's minimum rejects it itself."""
    if minor <= 13 and case["compiles"][minor - 8] == "0":
        return True
    return bool(case.get("imports_fail_at_minimum"))


def score(cases: list[dict[str, Any]]) -> tuple[dict[str, Counter[str]], dict[str, list[str]]]:
    """Counts per kind, and the sources missed or falsely failed (for --show)."""
    code_runs = CHECKERS["code_runs"]
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    shown: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        kind, minor, source = case["kind"], int(case["minimum"][2:]), case["source"]
        s = stats[kind]
        s["cases"] += 1
        if source.lstrip().startswith(("import test.", "from test.", "import test\n")):
            s["test.* (not counted)"] += 1
            continue
        at_minimum = code_runs(fenced(source), python=f"3.{minor}")
        unreadable = f"does not parse on Python 3.{RUNNING}, which runs"
        if minor > RUNNING and any(unreadable in i for i in at_minimum.issues):
            s["newer than the parser"] += 1
            continue
        if not at_minimum.passed:
            if invalid_at_minimum(case, minor):
                s["invalid at minimum"] += 1
            else:
                s["false positives"] += 1
                shown[f"{kind} false positive"].append(f"{case['minimum']} {source!r}")
        if minor >= 9:
            s["3.9+"] += 1
            if code_runs(fenced(source), python=f"3.{minor - 1}").passed:
                shown[f"{kind} missed"].append(f"{case['minimum']} {source!r}")
            else:
                s["detected"] += 1
    return stats, shown


def speed(cases: list[dict[str, Any]], files: int) -> None:
    try:
        import vermin
    except ImportError:
        print("\nspeed: vermin is not installed (pip install vermin) - skipped")
        return
    config = vermin.Config()
    code_runs = CHECKERS["code_runs"]
    snippets = [c["source"] for c in cases]
    lib = Path(sysconfig.get_paths()["stdlib"])
    sample = sorted(p for p in lib.glob("*.py"))[:files]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sample]
    version = f"3.{RUNNING}"
    for label, sources in (("case snippets", snippets), (f"{len(texts)} stdlib files", texts)):
        fenced_sources = [fenced(s) for s in sources]
        subjects: dict[str, Callable[[], object]] = {
            # Each tree dropped at once, as code_runs drops its own: a list of live
            # trees would make the collector walk them all, again and again.
            "ast.parse": lambda sources=sources: [_parse(s) is None for s in sources],
            "code_runs": lambda f=fenced_sources: [code_runs(t, python=version) for t in f],
            "vermin": lambda sources=sources: [_detect(vermin, s, config) for s in sources],
        }
        times = dict.fromkeys(subjects, float("inf"))
        for _ in range(3):  # rounds alternate, so a burst of load hits every subject alike
            for name, fn in subjects.items():
                start = time.process_time()  # CPU seconds: a busy machine's wall clock
                fn()  # would time the neighbours too
                times[name] = min(times[name], time.process_time() - start)
        print(
            f"\nspeed on {label}: ast.parse {times['ast.parse']:.3f} s, code_runs "
            f"{times['code_runs']:.3f} s ({times['code_runs'] / times['ast.parse']:.2f}x "
            f"ast.parse), vermin {times['vermin']:.3f} s; code_runs is "
            f"{times['vermin'] / times['code_runs']:.1f}x faster than vermin"
        )


def _detect(vermin: Any, source: str, config: Any) -> object:
    try:
        return vermin.detect(source, config)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # vermin gives up on some files (InvalidVersionException)
        return None


def _parse(source: str) -> object:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=5, help="misses listed per kind")
    parser.add_argument("--files", type=int, default=100, help="stdlib files timed")
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    print(
        f"Python {sys.version.split()[0]}; {len(data['cases'])} cases from vermin "
        f"{data['commit'][:12]}"
    )
    stats, shown = score(data["cases"])
    columns = [
        "cases",
        "3.9+",
        "detected",
        "false positives",
        "invalid at minimum",
        "newer than the parser",
        "test.* (not counted)",
    ]
    print(f"\n{'kind':<9}" + "".join(f"{c[:13]:>14}" for c in columns) + f"{'rate':>8}  target")
    for kind in sorted(stats):
        s = stats[kind]
        rate = s["detected"] / s["3.9+"] if s["3.9+"] else 1.0
        target = TARGETS.get(kind)
        verdict = "met" if target is not None and rate >= target else "MISSED"
        mark = "" if target is None else f">= {target:.0%} {verdict}"
        print(f"{kind:<9}" + "".join(f"{s[c]:>14}" for c in columns) + f"{rate:>8.1%}  {mark}")
    false = sum(s["false positives"] for s in stats.values())
    print(f"false positives: {false} (target 0)")
    for title, rows in sorted(shown.items()):
        print(f"\n{title}: {len(rows)}")
        for row in rows[: args.show]:
            print(f"  {row[:140]}")
    speed(data["cases"], args.files)


if __name__ == "__main__":
    main()
