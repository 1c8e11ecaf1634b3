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
import sys
from collections.abc import Callable
from typing import Any

from . import _compile
from . import _names as names
from . import _rules as rules
from ._bindings import parameter_names
from ._state import ASYNC, CLASS, FUNC, GUARDED, LOCAL, Import, ScanState
from ._stdlib import name_table

Handler = Callable[[Any, Any, int], bool]

_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_BODIES_OF: dict[type, tuple[str, ...]] = {}
_LEAVES = frozenset({ast.Pass, ast.Raise, ast.Assert, ast.Delete})
_RETURN_OUTSIDE = "has 'return' outside a function, so Python cannot compile the block"
_new_import = tuple.__new__
_TYPE_PARAMS = sys.version_info >= (3, 12)  # 'def f[T]()' has a field for them from 3.12


def walk(scan: ScanState, body: list[ast.stmt], handlers: dict[type, Handler]) -> None:
    """Visit the statements of ``body`` and everything they hold.

    ``handlers`` are the scan's statement handlers for its target; the statement
    lists wait in frames (one list per set of flags) as in the full walk, but each
    is read in order, not popped from a copy: the order of the visits cannot change
    what a statements-only walk finds (findings and imports are sorted by line).
    """
    frames: list[tuple[int, list[Any]]] = scan._frames
    frames.append((scan.top_flags, body))
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
    import_from_t, compare_t, attribute_t = ast.ImportFrom, ast.Compare, ast.Attribute
    spans = name_table().spans
    leaves = _LEAVES
    while frames:
        flags, stack = frames.pop()
        for node in stack:
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
                # A plain def, which only its parameters can fault: no decorator rule
                # (below 3.9), no '*args: *Ts', no '[T]' (inlined: most blocks are defs).
                args = node.args
                vararg = args.vararg
                if (
                    not (target < 9 and node.decorator_list)
                    and (vararg is None or type(vararg.annotation) is not starred_t)
                    and not (_TYPE_PARAMS and node.type_params)
                ):
                    if (
                        args.posonlyargs
                        or args.kwonlyargs
                        or len(args.args) + (vararg is not None) + (args.kwarg is not None) > 1
                    ) and _compile.duplicate(parameter_names(args)):
                        scan.needs_compile = True
                    inner = FUNC | LOCAL | (ASYNC if kind is async_def_t else 0)
                    frames.append((inner, node.body))
                    continue
            elif kind is import_from_t:
                module = node.module
                if not node.level and module != "__future__":
                    # ``Scan._import_from`` for an absolute import, inlined.
                    line, guarded = node.lineno, bool(flags & GUARDED)
                    taken = []
                    for alias in node.names:
                        name = alias.name
                        taken.append(name)
                        if name == "*":
                            if flags & (FUNC | CLASS):
                                scan.needs_compile = True  # 'import *' only at module level
                            continue
                        bindings[alias.asname or name] = f"{module}.{name}"
                        if not guarded and (module, name) in spans:
                            names.check_name(scan, line, module, name, "imports")
                    imports.append(_new_import(Import, (line, module, 0, guarded, tuple(taken))))
                    continue
            elif kind is if_t:
                test = node.test
                test_kind = type(test)
                if test_kind is name_t:
                    live = False if test.id == "TYPE_CHECKING" else None
                elif test_kind is attribute_t or test_kind is compare_t:
                    live = rules.static_test(test, target)
                else:
                    live = None
                if live is None:
                    frames.append((flags, node.body))
                    if node.orelse:
                        frames.append((flags, node.orelse))
                else:
                    chosen = node.body if live else node.orelse
                    if chosen:
                        frames.append((flags, chosen))
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
                if type(value) is list and value:
                    frames.append((flags, value))
