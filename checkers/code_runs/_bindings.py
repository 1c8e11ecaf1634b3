"""Record how a block binds its names, for :mod:`._resolve` and the shadowing checks.

``name = value`` is kept with its value (``scan.assigned``); every other way of
binding a name (a parameter, a loop or ``with`` target, unpacking, ``except ...
as``, a walrus, a ``global`` declaration, a pattern capture...) marks the name as
rebound (``scan.rebound``), which makes its type unknown. Scopes are not told
apart: a name bound anywhere in the block counts everywhere, which can only make
a check more cautious.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ._state import ScanState


def names_in(target: ast.AST) -> Iterator[str]:
    """The plain names an assignment target binds (``a, *b`` binds ``a`` and ``b``)."""
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Tuple | ast.List):
            stack.extend(node.elts)
        elif isinstance(node, ast.Starred):
            stack.append(node.value)


def assign(scan: ScanState, node: ast.Assign) -> None:
    """``a = b = value`` keeps the value for each name; unpacking rebinds."""
    for target in node.targets:
        if isinstance(target, ast.Name):
            scan.assigned.setdefault(target.id, []).append(node.value)
        else:
            scan.rebound.update(names_in(target))


def annotated(scan: ScanState, node: ast.AnnAssign) -> None:
    """``name: T = value`` binds like ``name = value``; a bare annotation binds nothing."""
    if isinstance(node.target, ast.Name) and node.value is not None:
        scan.assigned.setdefault(node.target.id, []).append(node.value)


def loop_target(scan: ScanState, node: ast.For | ast.AsyncFor) -> None:
    """``for d in ({}, {}):`` binds ``d`` to each item of a literal sequence, in turn."""
    items = node.iter
    if (
        isinstance(node.target, ast.Name)
        and isinstance(items, ast.Tuple | ast.List | ast.Set)
        and not any(isinstance(e, ast.Starred) for e in items.elts)
    ):
        scan.assigned.setdefault(node.target.id, []).extend(items.elts)
        return
    rebind(scan, node.target)


def rebind(scan: ScanState, target: ast.AST | None) -> None:
    """Every name of ``target`` is bound by something other than a plain assignment."""
    if target is not None:
        scan.rebound.update(names_in(target))


def parameter_names(args: ast.arguments) -> list[str]:
    """The names of every parameter, in order (duplicates kept)."""
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return names


def parameters(scan: ScanState, args: ast.arguments) -> list[str]:
    """Mark every parameter as rebound; the names, in order (duplicates kept)."""
    names = parameter_names(args)
    scan.rebound.update(names)
    return names


def captures(scan: ScanState, node: ast.Match) -> None:
    """The names the patterns of a ``match`` statement capture."""
    for case in node.cases:
        for sub in ast.walk(case.pattern):
            name = getattr(sub, "name", None) or getattr(sub, "rest", None)
            if isinstance(name, str):
                scan.rebound.add(name)
