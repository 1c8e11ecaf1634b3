"""Checks that need every binding of the block: names, members, keywords, operators.

The walk notes candidate uses (``scan.uses``) as it goes; once it is done and all
imports and assignments are known, each use is resolved (:mod:`._resolve`) and
checked against the version tables (:mod:`._stdlib`):

* a builtin the target lacks (``anext`` before 3.10), unless the block defines it;
* a module member or class attribute (``itertools.pairwise``, ``str.removeprefix``,
  ``Executor().shutdown``) the target's module does not have yet, or no longer;
* a keyword argument the called function does not take yet (``zip(strict=...)``),
  where the callee resolves statically;
* run-time operations that fail before 3.9: subscripting a built-in or
  ``collections.abc`` class (``list[int]``), ``dict | dict`` and ``d |= other``
  with evidently mapping operands; ``array('w')`` before 3.13.
"""

from __future__ import annotations

import ast
from typing import Any

from ._resolve import split, target_of, type_of
from ._rules import TYPING_NAMES, show
from ._state import ScanState
from ._stdlib import Span, name_table

# Mapping types that gained '|' and '|=' in 3.9 (PEP 584), as qualified names.
_MAPPINGS = frozenset(
    {
        "builtins.dict",
        "collections.ChainMap",
        "collections.OrderedDict",
        "collections.UserDict",
        "collections.defaultdict",
        "os.environ",
        "os.environb",
        "types.MappingProxyType",
        "weakref.WeakKeyDictionary",
        "weakref.WeakValueDictionary",
    }
)


def absent(scan: ScanState, lineno: int, span: Span, shown: str, verb: str) -> None:
    """Report ``shown`` as missing from the target: new, removed, or missing in between."""
    target = scan.target
    if span.since > target:
        scan.add(
            lineno, f"{verb} '{shown}', new in Python 3.{span.since} (the target is {scan.version})"
        )
        return
    gone = span.gone_by(target)
    hint = "; import it from collections.abc" if shown.startswith("collections.") else ""
    scan.add(
        lineno,
        f"{verb} '{shown}', which Python 3.{gone} removed (the target is {scan.version}){hint}",
    )


def check_name(scan: ScanState, lineno: int, module: str, name: str, verb: str = "uses") -> None:
    """Report a name the target's ``module`` does not have yet, or no longer has."""
    span = name_table().spans.get((module, name))
    if span is not None and not span.has(scan.target):
        absent(scan, lineno, span, name if module == "builtins" else f"{module}.{name}", verb)


def resolve_uses(scan: ScanState, uses: list[tuple[int, str, Any]]) -> None:
    """Check the uses a walk noted, now that every binding is known.

    A member the block sets itself (``itertools.pairwise = shim``, a back-port) is no
    use and is defined from then on; one a ``hasattr`` test guards is not checked.
    """
    shimmed = {target_of(scan, node) for _, kind, node in uses if kind == "set"}
    for lineno, kind, node in uses:
        if kind == "name":
            if not _bound(scan, node.id):
                check_name(scan, lineno, "builtins", node.id)
        elif kind == "attr":
            if id(node) not in scan.feature_guarded and target_of(scan, node) not in shimmed:
                _member(scan, lineno, node)
        elif kind == "call":
            _keywords(scan, lineno, node)
        elif kind == "generic":
            _generic(scan, lineno, node)
        elif kind in ("dict_union", "dict_merge"):
            _mapping_operator(scan, lineno, node, kind)
        elif kind == "typecode":
            _typecode(scan, lineno, node)


def _bound(scan: ScanState, name: str) -> bool:
    """Whether the block itself binds ``name`` (so it is not the builtin)."""
    return (
        name in scan.defined
        or name in scan.bindings
        or name in scan.assigned
        or name in scan.rebound
    )


def _member(scan: ScanState, lineno: int, node: ast.Attribute) -> None:
    qualified = target_of(scan, node)
    where = split(qualified) if qualified else None
    if where is not None:
        check_name(scan, lineno, *where)


def _keywords(scan: ScanState, lineno: int, node: ast.Call) -> None:
    qualified = target_of(scan, node.func)
    where = split(qualified) if qualified else None
    if where is None:
        return
    module, path = where
    spans = name_table().spans
    for kw in node.keywords:
        span = spans.get((module, f"{path}({kw.arg})")) if kw.arg else None
        if span is None or span.has(scan.target):
            continue
        name = path.rsplit(".", 1)[-1]
        if span.since > scan.target:
            scan.add(
                lineno,
                f"passes {kw.arg}= to {name}(), new in Python 3.{span.since} "
                f"(the target is {scan.version})",
            )
        else:
            scan.add(
                lineno,
                f"passes {kw.arg}= to {name}(), which Python 3.{span.gone_by(scan.target)} "
                f"no longer accepts (the target is {scan.version})",
            )


def _generic(scan: ScanState, lineno: int, node: ast.Subscript) -> None:
    """``list[int]`` or ``collections.abc.Iterable[int]`` evaluated before 3.9.

    A class can be subscripted at run time from the version whose class has a
    ``__class_getitem__`` (the tables know which); a name the block rebinds
    (``def f(list): return list[0]``) is a value being indexed, not the class.
    """
    value = node.value
    qualified: str | None
    if isinstance(value, ast.Name) and (value.id in scan.bindings or not _bound(scan, value.id)):
        qualified = scan.bindings.get(value.id, f"builtins.{value.id}")
    elif isinstance(value, ast.Attribute):
        qualified = target_of(scan, value)
    else:
        return
    where = split(qualified) if qualified else None
    if where is None:
        return
    span = name_table().spans.get((where[0], f"{where[1]}.__class_getitem__"))
    if span is None and where[0] == "builtins" and where[1] in TYPING_NAMES:
        span = Span(~1 & Span().mask)  # subscriptable from 3.9 (PEP 585)
    if span is None or span.has(scan.target) or span.since > 14:
        return
    if where[0] == "builtins" and where[1] in TYPING_NAMES:
        hint = f"use typing.{TYPING_NAMES[where[1]]}[...]"
    else:
        hint = "use the typing module's alias, or quote the annotation"
    shown = f"the built-in '{where[1]}'" if where[0] == "builtins" else f"'{qualified}'"
    scan.add(
        lineno,
        f"subscripts {shown} ('{show(node)}'), which fails with TypeError before "
        f"Python 3.{span.since} (the target is {scan.version}); {hint}",
    )


def _mapping_operator(scan: ScanState, lineno: int, node: Any, kind: str) -> None:
    """``a | b`` / ``a |= b`` on mappings: new in 3.9 (PEP 584)."""
    if scan.target >= 9:
        return
    left = node.left if kind == "dict_union" else node.target
    right = node.right if kind == "dict_union" else node.value
    types = (_mapping_type(scan, left), _mapping_type(scan, right))
    if None in types:
        return
    op = "|" if kind == "dict_union" else "|="
    scan.add(
        lineno,
        f"applies '{op}' to mappings ('{show(node)}'), which fails with TypeError "
        f"before Python 3.9 (the target is {scan.version}); use {{**a, **b}} or a.update(b)",
    )


def _mapping_type(scan: ScanState, expr: ast.AST) -> str | None:
    """The mapping class ``expr`` evidently is an instance of (``os.environ`` itself too)."""
    found = type_of(scan, expr)
    if found is None:
        found = target_of(scan, expr)  # os.environ is an instance, spelled as a member
    return found if found in _MAPPINGS else None


def _typecode(scan: ScanState, lineno: int, node: ast.Call) -> None:
    """``array('w')``: the 'w' type code is new in 3.13."""
    if scan.target >= 13 or not node.args:
        return
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and first.value == "w"):
        return
    if target_of(scan, node.func) == "array.array":
        scan.add(
            lineno,
            f"creates an array with type code 'w', new in Python 3.13 (the target is "
            f"{scan.version}); use 'u' before 3.13",
        )
