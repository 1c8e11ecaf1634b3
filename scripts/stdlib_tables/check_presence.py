"""Check code_runs' tables against what the real interpreters 3.8-3.13 do.

For every entry the tables say a version lacks (a module, a module attribute, a
class attribute: ``-3.X`` marks, and ``+3.X`` ones with ``--additions``), each
interpreter is asked whether it has it: the module imported, the attribute looked
up with ``getattr`` (warnings silenced, so a deprecated name a module's
``__getattr__`` still serves counts as present, as it does for the code a reader
runs). Disagreements are printed by version; ``--record FILE`` writes the
interpreters' answers (``tests/data/stdlib_presence.json``, which
``tests/checkers/test_code_runs_tables.py`` checks the shipped tables against);
the answers are lists of 0/1 for 3.8-3.13. ``--also DIR`` adds the entries of
another copy of the tables (an older one), so entries that a fix removed are still
asked about.

    P=$(pyenv root)/versions
    python check_presence.py --python 3.8=$P/3.8.18/bin/python ... \\
        --python 3.13=$P/3.13.0/bin/python [--record FILE] [--also OLD_DATA_DIR]

Only standard-library modules are imported, each interpreter isolated (``-I -S``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "checkers" / "code_runs" / "data"
INTROSPECTED = range(8, 14)
NEVER_IMPORT = ("antigravity", "this", "idlelib", "turtledemo", "test")

# Run inside each interpreter (valid Python 3.8): reads [[module, path], ...] on
# stdin, prints one answer a line (1 has it, 0 lacks it).
PROBE = r"""
import importlib, io, json, sys, warnings
warnings.simplefilter("ignore")
out = []
for module, path in json.load(sys.stdin):
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    try:
        value = importlib.import_module(module)
        for part in path.split(".") if path else ():
            value = getattr(value, part)
        out.append(1)
    except BaseException:
        out.append(0)
    finally:
        sys.stdout, sys.stderr = saved
print(json.dumps(out))
"""


def read_tables(data: Path, additions: bool) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """Entries worth asking about: ``{module: marks}``, ``{(module, name): marks}``."""
    modules, names = {}, {}
    for raw in (data / "stdlib_modules.txt").read_text().splitlines():
        if raw and not raw.startswith("#"):
            name, _, marks = raw.partition(" ")
            if _wanted(marks, additions) and not name.startswith(NEVER_IMPORT):
                modules[name] = marks
    module = ""
    for raw in (data / "stdlib_names.txt").read_text().splitlines():
        if not raw or raw.startswith("#"):
            continue
        if raw.startswith("["):
            module = raw[1:-1]
            continue
        name, _, marks = raw.partition(" ")
        if module in ("typing_extensions", "builtins") or "(" in name:
            continue  # keyword arguments and builtins are not attribute look-ups
        if _wanted(marks, additions) and not name.startswith("__loader__"):
            names[(module, name)] = marks
    return modules, names


def _wanted(marks: str, additions: bool) -> bool:
    return "-3." in marks or (additions and "+3." in marks)


def ask(exe: str, queries: list[tuple[str, str]]) -> list[bool]:
    done = subprocess.run(
        [exe, "-I", "-S", "-c", PROBE],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        check=True,
    )
    return [bool(x) for x in json.loads(done.stdout.strip().splitlines()[-1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", default=[], help="3.X=PATH (3.8-3.13)")
    parser.add_argument("--record", type=Path, help="write the interpreters' answers here")
    parser.add_argument("--also", type=Path, action="append", default=[], help="other tables")
    parser.add_argument("--additions", action="store_true", help="ask about +3.X entries too")
    args = parser.parse_args()
    pythons = {int(k.split(".")[1]): v for k, v in (p.split("=", 1) for p in args.python)}
    if sorted(pythons) != list(INTROSPECTED):
        parser.error("give --python 3.X=PATH for each of 3.8-3.13")
    modules, names = read_tables(DATA, args.additions)
    for other in args.also:
        more_modules, more_names = read_tables(other, args.additions)
        modules = {**more_modules, **modules}
        names = {**more_names, **names}
    queries = [(m, "") for m in sorted(modules)] + sorted(names)
    answers = {minor: ask(exe, queries) for minor, exe in sorted(pythons.items())}
    versions = {}
    for minor, exe in sorted(pythons.items()):
        versions[f"3.{minor}"] = subprocess.run(
            [exe, "-c", "import sys; print(sys.version.split()[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    from gradeloop_checkers.code_runs._stdlib import module_table, name_table  # as shipped

    mtable, ntable = module_table(), name_table().spans
    wrong = 0
    record: dict[str, dict[str, list[bool]]] = {"modules": {}, "names": {}}
    for i, (module, path) in enumerate(queries):
        truth = [answers[m][i] for m in INTROSPECTED]
        key = module if not path else f"{module}:{path}"
        record["modules" if not path else "names"][key] = truth
        span = mtable.get(module) if not path else ntable.get((module, path))
        said = [True] * len(truth) if span is None else [span.has(m) for m in INTROSPECTED]
        for m, t, s in zip(INTROSPECTED, truth, said, strict=True):
            if t != s:
                wrong += 1
                print(
                    f"3.{m} {key}: interpreter {'has' if t else 'lacks'} it, table says "
                    f"{'present' if s else 'absent'}"
                )
    print(
        f"{len(queries)} entries x {len(pythons)} interpreters, {wrong} disagreements",
        file=sys.stderr,
    )
    if args.record:
        args.record.write_text(_compact({"interpreters": versions, **record}))


def _compact(data: dict[str, dict[str, object]]) -> str:
    """JSON with one entry a line (answers as 0/1), so a diff shows what changed."""
    parts = []
    for section, entries in data.items():
        lines = [
            f"  {json.dumps(k)}: {json.dumps([int(x) for x in v] if isinstance(v, list) else v)}"
            for k, v in sorted(entries.items())
        ]
        parts.append(f"{json.dumps(section)}: {{\n" + ",\n".join(lines) + "\n}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


if __name__ == "__main__":
    main()
