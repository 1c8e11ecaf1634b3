"""False-positive sweep: code_runs over every ``.py`` file of CPython's standard library.

Run: ``python benchmarks/bench_code_runs_stdlib.py [--lib 3.12=/path/to/Lib ...] [--show N]``

Each file of each interpreter's ``Lib/`` (found under ``pyenv root`` by default;
the test suite, ``idlelib``, ``turtledemo`` and ``site-packages`` are left out) is
checked as one Python block with the target set to that interpreter's own version.
Code that version ships runs on it, so every failure is either by design or a
false positive. By design: relative imports (a file of a package, checked alone),
imports of private modules (``_collections_abc``) and of ``test.*``, and imports
of modules that are not in that standard library at all (``java.lang`` in a
function only Jython runs: exactly what the stdlib-only rule is for). A file the
running parser cannot read (syntax newer than the interpreter running the sweep)
is counted apart. Everything else is listed: the target is none.

Prints, per version: files, files per second, failures by cause.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import gradeloop_checkers.code_runs as code_runs_module
from gradeloop_checkers.code_runs import CHECKERS

SKIP_PARTS = frozenset({"test", "tests", "idlelib", "turtledemo", "site-packages", "__pycache__"})
SKIP_NAMES = re.compile(r"^(bad|badsyntax|test_).*\.py$")
CAUSES = (
    ("relative import", re.compile(r"relative import")),
    ("private module", re.compile(r"a private CPython module")),
    ("test.* import", re.compile(r"imports 'test(\.|')")),
    ("newer than the running parser", re.compile(r"does not parse on Python 3\.\d+, which runs")),
)
_THIRD_PARTY = re.compile(
    r"imports '([A-Za-z0-9_.]+)', which is not in the Python 3\.\d+ standard lib"
)


def _minor_of(path: Path) -> int:
    parts = path.name.split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def default_libs() -> dict[str, Path]:
    """``{"3.X": Lib}`` of the pyenv interpreters 3.8 and newer."""
    try:
        root = subprocess.run(
            ["pyenv", "root"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {}
    libs = {}
    for version in sorted(Path(root, "versions").glob("3.*"), key=_minor_of):
        minor = ".".join(version.name.split(".")[:2])
        lib = version / "lib" / f"python{minor}"
        if int(minor.split(".")[1]) >= 8 and lib.is_dir():
            libs[minor] = lib
    return libs


def files_of(lib: Path) -> list[Path]:
    return sorted(
        p
        for p in lib.rglob("*.py")
        if not SKIP_PARTS.intersection(p.relative_to(lib).parts) and not SKIP_NAMES.match(p.name)
    )


def cause_of(issue: str, lib: Path) -> str:
    for cause, pattern in CAUSES:
        if pattern.search(issue):
            return cause
    third = _THIRD_PARTY.search(issue)
    if third and not shipped(third.group(1).split(".")[0], lib):
        return "third-party import"
    return "other (a false positive)"


def shipped(top: str, lib: Path) -> bool:
    """Whether the interpreter of ``lib`` has a module ``top`` (source, package or extension)."""
    if (lib / f"{top}.py").exists() or (lib / top).is_dir() or top in sys.builtin_module_names:
        return True
    return any((lib / "lib-dynload").glob(f"{top}.*.so"))


def sweep(version: str, lib: Path, show: int) -> Counter[str]:
    code_runs = CHECKERS["code_runs"]
    files = files_of(lib)
    causes: Counter[str] = Counter()
    shown = 0
    start = time.perf_counter()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        # every file read whole: the size limit is a draft's, not this sweep's
        result = code_runs(f"```python\n{text}\n```\n", python=version, max_block_chars=10**7)
        found = {cause_of(issue, lib) for issue in result.issues}
        for cause in found:
            causes[cause] += 1
        if result.issues:
            causes["files failed"] += 1
        if "other (a false positive)" in found and shown < show:
            shown += 1
            other = [i for i in result.issues if cause_of(i, lib).startswith("other")]
            print(f"  {path.relative_to(lib)}: {other[:3]}")
    elapsed = time.perf_counter() - start
    causes["files"] = len(files)
    print(
        f"{version}: {len(files)} files, {len(files) / elapsed:,.0f} files/s; "
        + ", ".join(f"{k}: {v}" for k, v in sorted(causes.items()) if k != "files")
    )
    return causes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", action="append", default=[], help="3.X=PATH of a Lib/ folder")
    parser.add_argument("--show", type=int, default=10, help="false positives listed per version")
    args = parser.parse_args()
    libs = {k: Path(v) for k, v in (a.split("=", 1) for a in args.lib)} or default_libs()
    if not libs:
        sys.exit("no standard library found: pass --lib 3.X=/path/to/Lib")
    code_runs_module.MAX_ISSUES = 10**9  # every issue, not the first twenty
    total: Counter[str] = Counter()
    for version, lib in libs.items():
        total.update(sweep(version, lib, args.show))
    other = total["other (a false positive)"]
    print(
        f"\nall: {total['files']} files, {total['files failed']} failed; by design: "
        + ", ".join(f"{c}: {total[c]}" for c in [*(c for c, _ in CAUSES), "third-party import"])
        + f"; false positives: {other} (target 0)"
    )


if __name__ == "__main__":
    main()
