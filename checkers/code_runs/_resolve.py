"""What an expression of a block refers to, where that is evident from the block alone.

Two questions, answered without running anything:

* :func:`target_of`: the qualified name an expression stands for, such as
  ``"itertools.pairwise"`` for ``it.pairwise`` after ``import itertools as it``,
  ``"builtins.str.removeprefix"`` for ``"x".removeprefix``, or
  ``"concurrent.futures.Executor.shutdown"`` for ``Executor().shutdown``;
* :func:`type_of`: the class of the value an expression evidently has: literals,
  calls of a class (``dict()``, ``MappingProxyType({})``), a lambda called on
  the spot, an item of a literal tuple or list, and names that every binding in
  the block gives the same evident class (``d = {}`` and nothing else binds ``d``).

Anything less evident answers None: a check that cannot resolve its subject stays
silent rather than guess.
"""

from __future__ import annotations

import ast

from ._state import ScanState
from ._stdlib import module_table

_LITERALS: dict[type, str] = {
    ast.Dict: "builtins.dict",
    ast.DictComp: "builtins.dict",
    ast.List: "builtins.list",
    ast.ListComp: "builtins.list",
    ast.Set: "builtins.set",
    ast.SetComp: "builtins.set",
    ast.Tuple: "builtins.tuple",
    ast.JoinedStr: "builtins.str",
}
_CONSTANTS: dict[type, str] = {
    str: "builtins.str",
    bytes: "builtins.bytes",
    bool: "builtins.bool",
    int: "builtins.int",
    float: "builtins.float",
    complex: "builtins.complex",
}
_DEPTH = 12  # how far a chain of names and calls is followed


def target_of(scan: ScanState, expr: ast.AST, depth: int = 0) -> str | None:
    """The qualified name ``expr`` refers to (a module, a member, or a value's class)."""
    if depth > _DEPTH:
        return None
    kind = type(expr)
    if kind is ast.Name:
        name = expr.id  # type: ignore[attr-defined]
        bound = scan.bindings.get(name)
        if bound is not None:
            return None if name in scan.rebound else bound
        if name in scan.assigned or name in scan.rebound or name in scan.defined:
            return type_of(scan, expr, depth + 1)
        return f"builtins.{name}"
    if kind is ast.Attribute:
        base = target_of(scan, expr.value, depth + 1)  # type: ignore[attr-defined]
        return f"{base}.{expr.attr}" if base else None  # type: ignore[attr-defined]
    return type_of(scan, expr, depth + 1)


def type_of(scan: ScanState, expr: ast.AST, depth: int = 0) -> str | None:
    """The qualified class of the value ``expr`` evidently has, else None."""
    if depth > _DEPTH:
        return None
    kind = type(expr)
    if kind is ast.Constant:
        return _CONSTANTS.get(type(expr.value))  # type: ignore[attr-defined]
    literal = _LITERALS.get(kind)
    if literal is not None:
        return literal
    if kind is ast.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is ast.Lambda:
            return type_of(scan, func.body, depth + 1)
        return target_of(scan, func, depth + 1)  # calling a class makes an instance of it
    if kind is ast.Subscript:
        return _item_type(scan, expr, depth)  # type: ignore[arg-type]
    if kind is ast.BinOp and type(expr.op) is ast.BitOr:  # type: ignore[attr-defined]
        return type_of(scan, expr.left, depth + 1)  # type: ignore[attr-defined]
    if kind is ast.Name:
        return _name_type(scan, expr.id, depth)  # type: ignore[attr-defined]
    return None


def _item_type(scan: ScanState, expr: ast.Subscript, depth: int) -> str | None:
    """``(1, {}, 'a')[1]``: the type of a literal sequence's item at a constant index."""
    seq, index = expr.value, expr.slice
    if not isinstance(seq, ast.Tuple | ast.List):
        return None
    if not (isinstance(index, ast.Constant) and type(index.value) is int):
        return None
    if not -len(seq.elts) <= index.value < len(seq.elts):
        return None
    return type_of(scan, seq.elts[index.value], depth + 1)


def _name_type(scan: ScanState, name: str, depth: int) -> str | None:
    """The one evident type every binding of ``name`` in the block gives it.

    Answers are kept per block (``scan.types``): names bound to names bound to
    names cost one look each, and a cycle (``a = b`` and ``b = a``) answers None.
    """
    if name in scan.types:
        return scan.types[name]
    scan.types[name] = None  # while it is being worked out: a cycle reads None
    if name in scan.rebound or name in scan.bindings:
        return None
    values = scan.assigned.get(name)
    if not values:
        return None
    found = {type_of(scan, v, depth + 1) for v in values}
    answer = found.pop() if len(found) == 1 else None
    scan.types[name] = answer
    return answer


def split(qualified: str) -> tuple[str, str] | None:
    """``("collections.abc", "Buffer")`` for ``"collections.abc.Buffer"``: module, then path.

    The module is the longest prefix the module table knows (or ``builtins``);
    the path is what follows it, at least one name.
    """
    if qualified.startswith("builtins."):
        return "builtins", qualified[9:]
    modules = module_table()
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in modules:
            return module, ".".join(parts[cut:])
    return None
