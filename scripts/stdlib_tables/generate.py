"""Generate code_runs' standard-library version tables (run by hand; see README.md).

Sources, merged per version 3.8-3.14:

* typeshed's standard-library stubs as bundled with the installed mypy (its
  ``VERSIONS`` file and its ``sys.version_info`` guards: 3.10 and later);
* an older typeshed checkout that still had the 3.9 and 3.10 guards
  (``--old-typeshed``), for 3.8 and 3.9;
* the real interpreters 3.8-3.13 (``--python``), introspected with
  ``introspect.py``: what modules exist, what names modules and classes have, and
  the keyword parameters ``inspect.signature`` reports.

A name is present on a version when the interpreter has it or typeshed says so
(typeshed covers other platforms; the interpreters cover what typeshed no longer
guards). 3.14 has no interpreter here: typeshed's answer is used where typeshed
agrees with the merged 3.13 answer, else the 3.13 answer carries over.
Only entries whose presence changes within 3.8-3.14 are written.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import typeshed_stubs

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "checkers" / "code_runs" / "data"
MINORS = range(8, 15)  # 3.8-3.14, the targets code_runs supports
INTROSPECTED = range(8, 14)  # versions with an interpreter
Row = tuple[bool, ...]

# Module attributes every module has, and class attributes Python adds by itself.
MODULE_NOISE = frozenset(
    [
        "__builtins__",
        "__cached__",
        "__file__",
        "__loader__",
        "__spec__",
        "__path__",
        "__package__",
        "__name__",
        "__doc__",
        "__all__",
        "__annotations__",
        "__warningregistry__",
        "__version__",
        "__author__",
        "__credits__",
        "__date__",
        # what a module made by a ModuleType subclass (typing.io) shows in dir()
        "__class__",
        "__getstate__",
    ]
)
CLASS_NOISE = frozenset(
    [
        "__firstlineno__",
        "__static_attributes__",
        "__dict__",
        "__weakref__",
        "__module__",
        "__qualname__",
        "__doc__",
        "__annotations__",
        "__parameters__",
        "__orig_bases__",
        "__slots__",
        "__abstractmethods__",
        "__protocol_attrs__",
        "__non_callable_proto_members__",
        "__type_params__",
        "__annotate__",
        "__annotate_func__",
        "__annotations_cache__",
        "__dataclass_fields__",
        "__dataclass_params__",
        "__match_args__",
        "__callable_proto_members_only__",
        "__required_keys__",
        "__optional_keys__",
        "__total__",
        "__readonly_keys__",
        "__mutable_keys__",
        "__orig_class__",
        "__getstate__",
        "__init_subclass__",
    ]
)
# Test-suite packages and CPython's own test helpers are not library modules.
# typeshed keeps these third-party stubs beside the standard library's.
NOT_STDLIB = frozenset({"typing_extensions", "mypy_extensions"})
TESTISH = frozenset({"test", "tests", "xxlimited", "xxlimited_35", "xxsubtype"})
NO_SUBMODULES = ("idlelib.", "turtledemo.", "lib2to3.fixes.", "lib2to3.pgen2.")
# Where typing_extensions' names live in the standard library, in order of preference.
TYPING_HOMES = ("typing", "collections.abc", "warnings", "types", "inspect", "annotationlib")


def public(name: str) -> bool:
    """A module name code_runs tables: no private part, no test package."""
    parts = name.split(".")
    if parts[0] in NOT_STDLIB:
        return False
    if any(p in TESTISH for p in parts) or name.startswith(NO_SUBMODULES):
        return False
    return name == "__future__" or not any(p.startswith("_") for p in parts)


class Sources:
    """typeshed (new and old) and the introspected interpreters, asked per version."""

    def __init__(self, ts: dict[str, Any], old: dict[str, Any], intro: dict[int, Any]) -> None:
        self.ts, self.old, self.intro = ts, old, intro

    def stub(self, module: str, minor: int) -> dict[str, Any] | None:
        source = self.ts if minor >= 10 else self.old
        return source["modules"].get(module, {}).get(str(minor))

    def stub_exists(self, module: str, minor: int) -> bool | None:
        source = self.ts if minor >= 10 else self.old
        if module not in source["modules"] and module not in source["versions"]:
            return None
        probe = module
        while probe and probe not in source["versions"]:
            probe = probe.rpartition(".")[0]
        if not probe:
            return None
        first, last = source["versions"][probe]
        return bool(first <= minor and (last is None or minor <= last))

    def described(self, module: str, minor: int) -> dict[str, Any] | None:
        return self.intro[minor]["described"].get(module) if minor in self.intro else None


def merge(
    intro: list[bool | None], ts: list[bool | None], ts_knows: bool, *, old_guards: bool = False
) -> Row:
    """One presence row for 3.8-3.14 from the interpreters' and typeshed's answers.

    ``intro`` has an answer (or None) per 3.8-3.13, ``ts`` per 3.8-3.14. Where no
    interpreter ever saw the name (another platform's, or set at run time) and
    where an interpreter could not tell, typeshed decides; with no answer at all
    the name counts as present, so that a gap in the sources never fails a draft.
    For a name no interpreter has (another platform's), the old typeshed's 3.8 and
    3.9 guards are not trusted (they were found wrong, e.g. mmap.MADV_FREE_REUSE)
    unless ``old_guards``: keyword parameters, which the guards model well.
    """
    if not ts_knows:
        ts = [None] * len(ts)
    seen = any(x is True for x in intro)
    row: list[bool] = []
    for i, minor in enumerate(INTROSPECTED):
        have, stub = intro[i], ts[minor - 8]
        if not seen and minor < 10 and not old_guards:
            # No interpreter here has it (another platform's name): typeshed's older
            # guards were not always right there, so it counts from 3.10's answer on.
            stub = ts[10 - 8]
        if have is None or not seen:
            row.append(True if stub is None else stub)
        else:
            row.append(have or stub is True)
    t13, t14 = ts[13 - 8], ts[14 - 8]
    row.append(t14 if t14 is not None and t13 == row[-1] else row[-1])
    return tuple(row)


def module_rows(src: Sources) -> dict[str, Row]:
    """Every public module and submodule, with the versions that ship it."""
    names = {m for m in (*src.ts["modules"], *src.ts["versions"]) if public(m)}
    for data in src.intro.values():
        names.update(m for m in data["modules"] if public(m))
    found = {minor: set(src.intro[minor]["modules"]) for minor in src.intro}
    rows = {}
    for module in sorted(names):
        # A module some interpreter here has is judged by the interpreters; typeshed
        # speaks for other platforms' modules (winreg) and for 3.14.
        seen = any(module in found[m] for m in INTROSPECTED)
        row = [
            module in found[m] if seen else bool(src.stub_exists(module, m)) for m in INTROSPECTED
        ]
        t13, t14 = src.stub_exists(module, 13), src.stub_exists(module, 14)
        row.append(t14 if t14 is not None and bool(t13) == row[-1] else row[-1])
        if any(row):
            rows[module] = tuple(row)
    return rows


def within(row: Row, outer: Row) -> Row | None:
    """``row`` limited to ``outer``'s versions, or None when it adds nothing."""
    if all(r or not o for r, o in zip(row, outer, strict=True)):
        return None
    return tuple(r and o for r, o in zip(row, outer, strict=True))


def _wanted(name: str, ts_knows: bool, seen: bool, top_level: set[str]) -> bool:
    """Not a private detail (unless typeshed stubs it) nor a module imported for itself."""
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        return ts_knows and seen
    return not (name in top_level and not ts_knows)


def member_rows(src: Sources, modules: dict[str, Row]) -> dict[tuple[str, str], Row]:
    """(module, name) and (module, "Class.attr") rows that differ from their container."""
    top_level = {m for m in modules if "." not in m}
    out: dict[tuple[str, str], Row] = {}
    for module, mrow in modules.items():
        seen = [src.described(module, m) for m in INTROSPECTED]
        stubs = [src.stub(module, m) for m in MINORS]
        if not any(seen) and not any(stubs):
            continue
        names = {n for d in seen if d for n in d["names"]}
        names |= {n for d in stubs if d for n in d["names"] if not n.startswith("*")}
        full: dict[str, Row] = {}
        for name in sorted(names - MODULE_NOISE):
            have = [None if d is None else name in d["names"] for d in seen]
            stub = [None if d is None else name in d["names"] for d in stubs]
            if not _wanted(name, any(stub), any(have), top_level):
                continue
            full[name] = merge(have, stub, any(stub))
            kept = within(full[name], mrow)
            if kept:
                out[(module, name)] = kept
        classes = {c for d in seen if d for c in d["classes"]}
        classes |= {c for d in stubs if d for c in d["classes"]}
        for cls in sorted(classes - MODULE_NOISE):
            crow = tuple(a and b for a, b in zip(full.get(cls, mrow), mrow, strict=True))
            have_c = [d["classes"].get(cls) if d else None for d in seen]
            stub_c = [d["classes"].get(cls) if d else None for d in stubs]
            attrs = {a for c in have_c if c for a in c["own"]}
            # Subscripting works from the version whose class, or a base, has it.
            attrs |= {a for c in have_c if c for a in c["all"] if a == "__class_getitem__"}
            attrs |= {a for c in stub_c if c for a in c}
            for attr in sorted(attrs - CLASS_NOISE):
                stub = [None if c is None else attr in c for c in stub_c]
                have = [None if c is None else attr in c["all"] for c in have_c]
                if not _wanted(attr, any(stub), any(have), set()):
                    continue
                kept = within(merge(have, stub, any(stub)), crow)
                if kept:
                    out[(module, f"{cls}.{attr}")] = kept
    return out


def _accepts(sig: Any, keyword: str) -> bool | None:
    """Whether a signature takes ``keyword``: typeshed's ``[names, varkw]`` or a name list."""
    if sig is None:
        return None
    if len(sig) == 2 and isinstance(sig[1], bool) and isinstance(sig[0], list):
        return keyword in sig[0] or sig[1]
    return keyword in sig or "**" in sig


def keyword_rows(
    src: Sources, modules: dict[str, Row], members: dict[tuple[str, str], Row]
) -> dict[tuple[str, str], Row]:
    """(module, "func(kw)") rows: keyword arguments a callable gained or lost."""
    out: dict[tuple[str, str], Row] = {}
    for module, mrow in modules.items():
        seen = [src.described(module, m) for m in INTROSPECTED]
        stubs = [src.stub(module, m) for m in MINORS]
        paths = {p for d in seen if d for p in d["sigs"]}
        paths |= {p for d in stubs if d for p in d["sigs"]}
        for path in sorted(p for p in paths if p.split(".")[0] not in MODULE_NOISE):
            have = [d["sigs"].get(path) if d else None for d in seen]
            stub = [d["sigs"].get(path) if d else None for d in stubs]
            crow = members.get((module, path.split(".")[0]), mrow)
            if "." in path:
                inner = members.get((module, path), mrow)
                crow = tuple(a and b for a, b in zip(crow, inner, strict=True))
            keywords = {k for s in have if s for k in s if k != "**"}
            keywords |= {k for s in stub if s for k in s[0]}
            for kw in sorted(keywords):
                if kw in ("self", "cls") or kw.startswith("_"):
                    continue
                ts_knows = any(s and kw in s[0] for s in stub)
                # Where the runtime signature only says **kwargs (forwarded to another
                # call, as subprocess.run does to Popen), typeshed's explicit list decides.
                answers = [None if ts_knows and s and "**" in s else _accepts(s, kw) for s in have]
                row = merge(answers, [_accepts(s, kw) for s in stub], ts_knows, old_guards=True)
                kept = within(row, crow)
                if kept:
                    out[(module, f"{path}({kw})")] = kept
    return out


def typing_extensions_homes(src: Sources) -> dict[str, tuple[str, Row]]:
    """For each typing_extensions name, its standard-library home and the versions having it."""
    exported = src.stub("typing_extensions", 14) or {"names": []}
    out = {}
    for name in exported["names"]:
        if name.startswith("_") or name.startswith("*"):
            continue
        for home in TYPING_HOMES:
            seen = [src.described(home, m) for m in INTROSPECTED]
            stubs = [src.stub(home, m) for m in MINORS]
            have = [None if d is None else name in d["names"] for d in seen]
            stub = [None if d is None else name in d["names"] for d in stubs]
            row = merge(have, stub, any(stub))
            if any(row) and (any(have) or any(stub)):
                out[name] = (home, row)
                break
    return out


def marks(row: Row) -> str:
    """``+3.X`` / ``-3.Y`` marks for a row ("" = every version); see _stdlib.py."""
    tokens = [] if row[0] else [f"+3.{8 + row.index(True)}"]
    start = 1 if row[0] else row.index(True) + 1
    for i in range(start, len(row)):
        if row[i] != row[i - 1]:
            tokens.append(("+" if row[i] else "-") + f"3.{8 + i}")
    return " ".join(tokens)


def introspect(pythons: dict[int, str], candidates: Path, work: Path) -> dict[int, Any]:
    """Run introspect.py in each interpreter (isolated: no site-packages, no user site),
    twice: the second time every name any interpreter listed is a candidate too, so a
    name one version lists and another serves only from a module ``__getattr__`` (a
    deprecated name: ``urllib.parse.Quoter``) or hides from ``dir()`` (an enum alias)
    is found present where it is."""
    first = _introspect_all(pythons, candidates, work, "first")
    union = json.loads(candidates.read_text())
    for data in first.values():
        for module, described in data["described"].items():
            entry = union.setdefault(module, {})
            entry[""] = sorted(set(entry.get("", ())) | set(described["names"]))
            for cls, members in described["classes"].items():
                entry[cls] = sorted(set(entry.get(cls, ())) | set(members["all"]))
    widened = work / "candidates-all.json"
    widened.write_text(json.dumps(union))
    return _introspect_all(pythons, widened, work, "final")


def _introspect_all(
    pythons: dict[int, str], candidates: Path, work: Path, label: str
) -> dict[int, Any]:
    out = {}
    for minor, exe in sorted(pythons.items()):
        target = work / f"introspected-{label}-3.{minor}.json"
        if not target.exists():
            print(f"introspecting 3.{minor} ({label} pass, {exe})", file=sys.stderr)
            with target.open("w") as f:
                subprocess.run(
                    [exe, "-I", "-S", str(HERE / "introspect.py"), str(candidates)],
                    stdout=f,
                    check=True,
                )
        out[minor] = json.loads(target.read_text())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-typeshed", type=Path, required=True, help="typeshed checkout")
    parser.add_argument("--old-typeshed-commit", required=True, help="its commit, recorded")
    parser.add_argument(
        "--python", action="append", default=[], help="3.X=PATH of an interpreter (3.8-3.13)"
    )
    parser.add_argument("--work", type=Path, help="keep intermediate files here")
    args = parser.parse_args()
    pythons = {int(k.split(".")[1]): v for k, v in (p.split("=", 1) for p in args.python)}
    if sorted(pythons) != list(INTROSPECTED):
        parser.error("give --python 3.X=PATH for each of 3.8-3.13")
    import mypy.version

    work = args.work or Path(tempfile.mkdtemp(prefix="stdlib-tables-"))
    work.mkdir(parents=True, exist_ok=True)
    ts = typeshed_stubs.read_all(typeshed_stubs.stub_root())
    old = typeshed_stubs.read_all(args.old_typeshed / "stdlib", range(8, 14))
    candidates = work / "candidates.json"
    names: dict[str, dict[str, set[str]]] = {}
    for source in (ts, old):
        for module, per in source["modules"].items():
            entry = names.setdefault(module, {})
            for data in per.values():
                entry.setdefault("", set()).update(data["names"])
                for cls, members in data["classes"].items():
                    entry.setdefault(cls, set()).update(members)
    candidates.write_text(
        json.dumps({m: {k: sorted(v) for k, v in c.items()} for m, c in names.items()})
    )
    intro = introspect(pythons, candidates, work)
    src = Sources(ts, old, intro)
    modules = module_rows(src)
    members = member_rows(src, modules)
    keywords = keyword_rows(src, modules, members)
    homes = typing_extensions_homes(src)
    provenance = (
        f"# Generated by scripts/stdlib_tables/generate.py from typeshed's stdlib stubs as\n"
        f"# bundled with mypy {mypy.version.__version__} (3.10+), typeshed commit "
        f"{args.old_typeshed_commit}\n"
        f"# (3.8, 3.9; Apache-2.0), and CPython "
        + ", ".join(intro[m]["version"] for m in INTROSPECTED)
        + " introspected.\n"
    )
    write_modules(modules, provenance)
    write_names(members, keywords, homes, provenance)
    print(
        f"{len(modules)} modules, {len(members)} names, {len(keywords)} keyword arguments, "
        f"{len(homes)} typing_extensions names",
        file=sys.stderr,
    )


def write_modules(modules: dict[str, Row], provenance: str) -> None:
    lines = [
        "# Modules and submodules of the CPython standard library, Python 3.8 through 3.14.",
        "# One a line: NAME [marks]. '+3.X' marks the first version that ships it, '-3.Y'",
        "# the first that no longer does (read in order); no mark: every version here.",
        "# Private modules and CPython's test packages are left out; __future__ is public.",
        provenance.rstrip("\n"),
    ]
    for module, row in modules.items():
        lines.append(f"{module} {marks(row)}".rstrip())
    (DATA / "stdlib_modules.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_names(
    members: dict[tuple[str, str], Row],
    keywords: dict[tuple[str, str], Row],
    homes: dict[str, tuple[str, Row]],
    provenance: str,
) -> None:
    lines = [
        "# Names that a standard-library module gained or lost between Python 3.8 and 3.14.",
        "# [MODULE] starts a module's section; then one name a line: NAME [marks] (marks as",
        "# in stdlib_modules.txt). NAME is a module attribute, Class.attr for a class",
        "# attribute, func(kw) / Class(kw) / Class.method(kw) for a keyword argument that",
        "# the callable gained or lost. 'builtins' names are used without an import.",
        "# [typing_extensions] lines are NAME HOME [marks]: where the standard library has",
        "# that name, and from which version.",
        provenance.rstrip("\n"),
    ]
    by_module: dict[str, list[str]] = {}
    for (module, name), row in sorted({**members, **keywords}.items()):
        if not any(row):
            continue  # known only to versions outside 3.8-3.14
        by_module.setdefault(module, []).append(f"{name} {marks(row)}".rstrip())
    for module in sorted(by_module):
        lines.append(f"[{module}]")
        lines.extend(by_module[module])
    lines.append("[typing_extensions]")
    for name, (home, row) in sorted(homes.items()):
        lines.append(f"{name} {home} {marks(row)}".rstrip())
    (DATA / "stdlib_names.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
