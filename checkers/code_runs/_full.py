"""The full walk: every node of a block, for the blocks whose text calls for it.

When :mod:`._prefilter` sees that an expression rule could fire (an ``await``, a
``|`` below 3.10, a tracked member reached through the block's imports...), the
scan visits every node, not only the statements (:mod:`._statements`). Names,
constants, attributes and calls, most of any tree, are decided inline here; the
other node types go to the scan's handlers for the target. Nodes wait in frames,
one list per set of flags, so that a child under its parent's flags costs one
list append and no tuple.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Any

from . import _rules as rules
from ._flow import Walker
from ._state import GUARDED, LAZY
from ._stdlib import missing_names, name_table

Handler = Callable[[Any, Any, int], bool]

# Fields that never hold a node worth visiting (operators and contexts are nodes,
# but carry nothing). What is left of a node's fields holds nodes, lists or None.
_SCALAR_FIELDS = frozenset(
    {
        "ctx",
        "id",
        "arg",
        "attr",
        "name",
        "names",
        "module",
        "level",
        "kind",
        "op",
        "ops",
        "type_comment",
        "conversion",
        "simple",
        "is_async",
        "kwd_attrs",
        "tag",
        "rest",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.MatchSingleton: (), type(None): ()}


def walk(scan: Walker, body: list[ast.stmt], handlers: dict[type, Handler]) -> None:
    """Visit ``body`` and every node under it; ``handlers`` are the scan's for its target.

    Only the members and keywords the target lacks can be reported, so only those
    names are looked at closer; every builtin name is, since the walk notes where
    the block rebinds one.
    """
    frames = scan._frames
    frames.append((scan.top_flags, body.copy()))
    fields_of, builtins = _FIELDS, name_table().builtins
    attrs, calls = missing_names(scan.target).attrs, _call_names(scan.target)
    uses, defined = scan.uses, scan.defined
    name_t, const_t, attr_t, call_t, load_t = (
        ast.Name,
        ast.Constant,
        ast.Attribute,
        ast.Call,
        ast.Load,
    )
    while frames:
        flags, stack = frames.pop()
        pop, push, extend = stack.pop, stack.append, stack.extend
        quiet = flags & (LAZY | GUARDED)
        while stack:
            node = pop()
            kind = type(node)
            if kind is name_t:
                if node.id in builtins:  # a builtin some versions lack: defined or used
                    if type(node.ctx) is not load_t:
                        defined.add(node.id)
                    elif not quiet:
                        uses.append((node.lineno, "name", node))
                continue
            if kind is const_t:
                continue
            if kind is attr_t:
                if node.attr in attrs and not quiet:  # a store defines it (a shim): no use
                    uses.append((node.lineno, "attr" if type(node.ctx) is load_t else "set", node))
                push(node.value)
                continue
            if kind is call_t:
                func = node.func
                called = func.id if type(func) is name_t else getattr(func, "attr", None)
                if called in calls and not flags & LAZY:
                    rules.call(scan, node, guarded=bool(flags & GUARDED))
            else:
                handler = handlers.get(kind)
                if handler is not None and handler(scan, node, flags):
                    continue
            names = fields_of.get(kind)
            if names is None:
                names = _fields(kind)
            for name in names:
                value = getattr(node, name)
                if type(value) is list:
                    extend(value)  # may hold None (a dict's ** keys): skipped when popped
                elif value is not None:
                    push(value)


def _fields(kind: type) -> tuple[str, ...]:
    """The fields of node type ``kind`` that can hold nodes."""
    fields = _FIELDS.get(kind)
    if fields is None:
        every: tuple[str, ...] = getattr(kind, "_fields", ())
        fields = _FIELDS[kind] = tuple(f for f in every if f not in _SCALAR_FIELDS)
    return fields


@functools.cache
def _call_names(target: int) -> frozenset[str]:
    """Names of callables a call of which :func:`rules.call` must see on ``3.<target>``."""
    return frozenset({*missing_names(target).calls, "__import__", "import_module", "array"})
