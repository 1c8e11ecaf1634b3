"""Read typeshed's standard-library stubs: what each module, class and function has per version.

For each version 3.10-3.15 (typeshed's own range), each stub is evaluated: a
``sys.version_info`` test takes its branch, a ``sys.platform`` test (or anything
else) takes both, since a reader may run any platform. Output, per module:
names defined at module level, class attributes, and the keyword-capable
parameters of functions, methods and constructors (``**kwargs`` marked).
"""

from __future__ import annotations

import ast
import operator
from pathlib import Path
from typing import Any

VERSIONS = range(10, 16)
_CMP = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def stub_root() -> Path:
    import mypy  # the stubs ship inside mypy (a dev dependency)

    return Path(mypy.__file__).parent / "typeshed" / "stdlib"


def module_versions(root: Path) -> dict[str, tuple[int, int | None]]:
    """typeshed's VERSIONS: module -> (first minor, last minor or None)."""
    table: dict[str, tuple[int, int | None]] = {}
    for raw in (root / "VERSIONS").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, span = (p.strip() for p in line.split(":"))
        first, _, last = span.partition("-")
        table[name] = (int(first.split(".")[1]), int(last.split(".")[1]) if last else None)
    return table


def _version_test(test: ast.expr, minor: int) -> bool | None:
    """True/False for a decidable version test on 3.<minor>, None for anything else."""
    if isinstance(test, ast.BoolOp):
        values = [_version_test(v, minor) for v in test.values]
        if isinstance(test.op, ast.And):
            if False in values:
                return False
            return True if all(v is True for v in values) else None
        if True in values:
            return True
        return False if all(v is False for v in values) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _version_test(test.operand, minor)
        return None if inner is None else not inner
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left = test.left
    if isinstance(left, ast.Subscript):
        left = left.value
    if ast.unparse(left) != "sys.version_info":
        return None
    right = test.comparators[0]
    if not isinstance(right, ast.Tuple):
        return None
    want = tuple(e.value for e in right.elts if isinstance(e, ast.Constant))
    compare = _CMP.get(type(test.ops[0]))
    if compare is None or len(want) < 2:
        return None
    return bool(compare((3, minor), want[:2]))


def live(body: list[ast.stmt], minor: int) -> list[ast.stmt]:
    """The statements of ``body`` that exist on 3.<minor> (both sides of non-version tests)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            verdict = _version_test(stmt.test, minor)
            if verdict is not False:
                out.extend(live(stmt.body, minor))
            if verdict is not True:
                out.extend(live(stmt.orelse, minor))
        elif isinstance(stmt, ast.Try):
            out.extend(live(stmt.body, minor))
        else:
            out.append(stmt)
    return out


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        names.add(ast.unparse(target).rsplit(".", 1)[-1])
    return names


def params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[str], bool]:
    """The keyword-capable parameters of ``fn`` and whether it takes ``**kwargs``."""
    a = fn.args
    names = [
        p.arg
        for p in a.args
        if not (p.arg.startswith("__") and not p.arg.endswith("__"))  # old positional-only style
    ]
    names += [p.arg for p in a.kwonlyargs]
    return names, a.kwarg is not None


def absolute(stmt: ast.ImportFrom, package: str) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if not stmt.level:
        return stmt.module or ""
    base = package.split(".")
    base = base[: len(base) - (stmt.level - 1)] if stmt.level > 1 else base
    return ".".join([*base, *([stmt.module] if stmt.module else [])])


def names_of(stmts: list[ast.stmt], package: str = "") -> dict[str, ast.AST]:
    """What each statement binds at this level (module or class body)."""
    found: dict[str, ast.AST] = {}
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if "type_check_only" in _decorators(stmt):
                continue
            if isinstance(stmt, ast.ClassDef) or stmt.name not in found:
                found[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    found[t.id] = stmt
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            found[stmt.target.id] = stmt
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name == "*":
                    found.setdefault("*" + absolute(stmt, package), stmt)
                elif alias.asname and alias.asname == alias.name:  # a re-export
                    found[alias.name] = stmt
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname and alias.asname == alias.name:
                    found[alias.name] = stmt
    return found


def signature(stmts: list[ast.stmt], name: str) -> tuple[list[str], bool] | None:
    """Union of the parameters of every definition (overloads) of ``name`` in ``stmts``."""
    params_seen: list[str] = []
    varkw, any_def = False, False
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name:
            if "type_check_only" in _decorators(stmt):
                continue
            any_def = True
            p, k = params(stmt)
            params_seen += [x for x in p if x not in params_seen]
            varkw = varkw or k
    return (params_seen, varkw) if any_def else None


def read_module(tree: ast.Module, minor: int, package: str) -> dict[str, Any]:
    """Names, classes and signatures of one stub on 3.<minor>."""
    body = live(tree.body, minor)
    names = names_of(body, package)
    classes: dict[str, Any] = {}
    sigs: dict[str, Any] = {}
    bases: dict[str, list[str]] = {}
    reexports: dict[str, str] = {}
    for name, node in names.items():
        if isinstance(node, ast.ImportFrom) and not name.startswith("*"):
            reexports[name] = absolute(node, package)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            sigs[name] = signature(body, name)
        elif isinstance(node, ast.ClassDef):
            bases[name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
            inner = live(node.body, minor)
            members = names_of(inner)
            classes[name] = sorted(m for m in members if not m.startswith("*"))
            ctor = [signature(inner, "__init__"), signature(inner, "__new__")]
            got = [c for c in ctor if c is not None]
            if got:
                merged: list[str] = []
                for p, _ in got:
                    merged += [x for x in p[1:] if x not in merged]  # drop self / cls
                sigs[name] = (merged, any(k for _, k in got))
            for member, mnode in members.items():
                if isinstance(mnode, ast.FunctionDef | ast.AsyncFunctionDef):
                    sigs[f"{name}.{member}"] = signature(inner, member)
    return {
        "names": sorted(names),
        "classes": classes,
        "sigs": sigs,
        "all": dunder_all(body),
        "bases": bases,
        "reexports": reexports,
    }


def inherit(data: dict[str, Any]) -> None:
    """Give each class the members and methods of its bases defined in the same stub."""
    classes, sigs, bases = data["classes"], data["sigs"], data["bases"]

    def lineage(cls: str, seen: set[str]) -> list[str]:
        found = []
        for base in bases.get(cls, []):
            if base in classes and base not in seen:
                seen.add(base)
                found += [base, *lineage(base, seen)]
        return found

    for cls in list(classes):
        for base in lineage(cls, {cls}):
            classes[cls] = sorted(set(classes[cls]) | set(classes[base]))
            for key, sig in list(sigs.items()):
                if key.startswith(base + ".") and key.count(".") == 1:
                    sigs.setdefault(cls + key[len(base) :], sig)


def follow_reexports(out: dict[str, Any], data: dict[str, Any], minor: str) -> None:
    """A class or function re-exported from another stub brings its members and signatures."""
    for name, source in data["reexports"].items():
        src = out.get(source, {}).get(minor)
        if src is None:
            continue
        if name in src["classes"]:
            data["classes"].setdefault(name, src["classes"][name])
        for key, sig in src["sigs"].items():
            if key == name or key.startswith(name + "."):
                data["sigs"].setdefault(key, sig)


def dunder_all(body: list[ast.stmt]) -> list[str] | None:
    """The module's ``__all__`` on this version, when the stub spells it out."""
    found: list[str] | None = None
    for stmt in body:
        value = None
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets
        ):
            found, value = [], stmt.value
        elif (
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == "__all__"
            and found is not None
        ):
            value = stmt.value
        if isinstance(value, ast.List | ast.Tuple) and found is not None:
            found += [e.value for e in value.elts if isinstance(e, ast.Constant)]
    return found


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_all(root: Path, minors: range = VERSIONS) -> dict[str, Any]:
    """Every stub, per version: {module: {minor: read_module(...)}} plus VERSIONS."""
    spans = module_versions(root)
    out: dict[str, Any] = {}
    packages = {}
    trees = {}
    for p in sorted(root.rglob("*.pyi")):
        name = module_name(root, p)
        trees[name] = ast.parse(p.read_text())
        packages[name] = name if p.name == "__init__.pyi" else name.rpartition(".")[0]
    for module, tree in trees.items():
        out[module] = {str(minor): read_module(tree, minor, packages[module]) for minor in minors}
    for per in out.values():
        for data in per.values():
            inherit(data)
    # Re-exports ('from ._base import Executor as Executor', 'from M import *'):
    # expand one level per pass.
    for _ in range(3):
        for per in out.values():
            for minor, data in per.items():
                follow_reexports(out, data, minor)
        for per in out.values():
            for minor, data in per.items():
                extra: list[str] = []
                for n in data["names"]:
                    if n.startswith("*") and n[1:] in out:
                        src = out[n[1:]][minor]
                        exported = src["all"]
                        if exported is None:
                            exported = [m for m in src["names"] if not m.startswith("_")]
                        extra += [m for m in exported if not m.startswith("*")]
                        for cls, members in src["classes"].items():
                            data["classes"].setdefault(cls, members)
                        for key, sig in src["sigs"].items():
                            data["sigs"].setdefault(key, sig)
                data["names"] = sorted(set(data["names"]) | set(extra))
    return {"versions": {k: list(v) for k, v in spans.items()}, "modules": out}
