"""The statements-only walk: what a block's statements decide without its expressions.

Most blocks need no expression rule (:mod:`._prefilter` reads that from the text),
and then a walk over the statements alone finds every import, every scope and
guard, ``return`` outside a function and what only ``compile()`` can judge. Such
a walk records no name bindings but the imports': when the imports show that a
member or keyword rule could fire, :class:`~._scan.Scan` walks the whole tree
again, afresh.

This walk runs on nearly every block a draft holds, so its commonest statements
(assignments, expression statements, ``return``, ``import``, ``def``, ``if``) are
decided inline, without a handler call; the rest go to the scan's handlers, which
do the same in a statements-only walk. The tests require the same findings as the
full walk on every rule's cases and on random code.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from . import _compile
from . import _rules as rules
from ._bindings import parameter_names
from ._state import ASYNC, FUNC, GUARDED, LOCAL, Import, ScanState

Handler = Callable[[Any, Any, int], bool]

_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_BODIES_OF: dict[type, tuple[str, ...]] = {}
_LEAVES = frozenset({ast.Pass, ast.Raise, ast.Assert, ast.Delete})
_RETURN_OUTSIDE = "has 'return' outside a function, so Python cannot compile the block"
_new_import = tuple.__new__


def walk(scan: ScanState, body: list[ast.stmt], handlers: dict[type, Handler]) -> None:
    """Visit the statements of ``body`` and everything they hold, in the scan's order.

    ``handlers`` are the scan's statement handlers for its target; the nodes wait
    in frames (one list per set of flags) exactly as in the full walk.
    """
    frames: list[tuple[int, list[Any]]] = scan._frames  # type: ignore[attr-defined]
    frames.append((0, body.copy()))
    target, imports, bindings = scan.target, scan.imports, scan.bindings
    assign_t, expr_t, return_t, import_t, if_t = (
        ast.Assign,
        ast.Expr,
        ast.Return,
        ast.Import,
        ast.If,
    )
    def_t, async_def_t, name_t, starred_t = (
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Name,
        ast.Starred,
    )
    leaves = _LEAVES
    while frames:
        flags, stack = frames.pop()
        pop, extend = stack.pop, stack.extend
        while stack:
            node = pop()
            kind = type(node)
            if kind is assign_t:
                targets = node.targets
                if (len(targets) != 1 or type(targets[0]) is not name_t) and (
                    _compile.bad_starred_target(targets)
                ):
                    scan.needs_compile = True
                continue
            if kind is expr_t:
                if type(node.value) is starred_t:
                    scan.needs_compile = True  # '*a' alone: "can't use starred expression here"
                continue
            if kind is return_t:
                if not flags & FUNC:
                    scan.add(node.lineno, _RETURN_OUTSIDE)
                continue
            if kind in leaves:
                continue
            if kind is import_t:
                line, guarded = node.lineno, bool(flags & GUARDED)
                for alias in node.names:
                    name, asname = alias.name, alias.asname
                    imports.append(_new_import(Import, (line, name, 0, guarded, ())))
                    if asname:
                        bindings[asname] = name
                    else:
                        top = name.partition(".")[0]
                        bindings[top] = top
                continue
            if kind is def_t or kind is async_def_t:
                if _plain_function(node, target):
                    if _repeats_a_parameter(node.args):
                        scan.needs_compile = True
                    inner = FUNC | LOCAL | (ASYNC if kind is async_def_t else 0)
                    frames.append((inner, node.body.copy()))
                    continue
            elif kind is if_t:
                live = _static_if(node.test, target)
                if live is None:
                    extend(node.body)
                    extend(node.orelse)
                else:
                    chosen = node.body if live else node.orelse
                    if chosen:
                        frames.append((flags, chosen.copy()))
                continue
            handler = handlers.get(kind)
            if handler is not None and handler(scan, node, flags):
                continue
            bodies = _BODIES_OF.get(kind)
            if bodies is None:
                every = getattr(kind, "_fields", ())
                bodies = _BODIES_OF[kind] = tuple(f for f in _BODIES if f in every)
            for name in bodies:
                value = getattr(node, name)
                if type(value) is list:
                    extend(value)


def _plain_function(node: ast.FunctionDef | ast.AsyncFunctionDef, target: int) -> bool:
    """A ``def`` only its parameters can fault: no decorator rule, ``*args: *Ts`` or ``[T]``."""
    if node.decorator_list and target < 9:
        return False
    vararg = node.args.vararg
    if vararg is not None and type(vararg.annotation) is ast.Starred:
        return False
    return not getattr(node, "type_params", None)


def _repeats_a_parameter(args: ast.arguments) -> bool:
    """``def f(a, a)``: only the compiler rejects it."""
    if (
        not (args.posonlyargs or args.kwonlyargs)
        and len(args.args) + (args.vararg is not None) + (args.kwarg is not None) < 2
    ):
        return False
    return _compile.duplicate(parameter_names(args))


def _static_if(test: ast.expr, target: int) -> bool | None:
    """``rules.static_test`` without its call for the commonest test, a plain name."""
    kind = type(test)
    if kind is ast.Name:
        return False if test.id == "TYPE_CHECKING" else None  # type: ignore[attr-defined]
    if kind is ast.Attribute or kind is ast.Compare:
        return rules.static_test(test, target)
    return None
