"""The rules behind :mod:`._scan`'s findings, and the words each one uses.

Every message reads after "line N " and says what the line does, which version it
needs, and what to do instead.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from ._state import Import, ScanState
from ._stdlib import missing_names

FUTURE_FEATURES = frozenset(
    {
        "nested_scopes",
        "generators",
        "division",
        "absolute_import",
        "with_statement",
        "print_function",
        "unicode_literals",
        "barry_as_FLUFL",
        "generator_stop",
        "annotations",
    }
)
_VERSION_INFO = ("sys.version_info", "version_info")
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
TYPING_NAMES = {
    "list": "List",
    "dict": "Dict",
    "set": "Set",
    "frozenset": "FrozenSet",
    "tuple": "Tuple",
    "type": "Type",
}
_BUILTIN_TYPES = frozenset(
    {
        *TYPING_NAMES,
        "int",
        "str",
        "float",
        "bool",
        "bytes",
        "bytearray",
        "complex",
        "object",
        "memoryview",
        "range",
        "slice",
    }
)


def line(node: ast.AST) -> int:
    """The block line ``node`` starts on."""
    return int(getattr(node, "lineno", 1))


def show(node: ast.AST, limit: int = 60) -> str:
    """``node`` as source text, shortened for a message."""
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError, AttributeError, TypeError):
        return "this expression"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def needs(scan: ScanState, node: ast.AST, minor: int, what: str) -> None:
    """Report ``what`` when the target is older than ``3.<minor>``."""
    if scan.target < minor:
        scan.add(line(node), f"uses {what}, new in Python 3.{minor} (the target is {scan.version})")


def is_docstring(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is a bare string literal (a docstring)."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def dotted(expr: ast.AST) -> str | None:
    """``"a.b.c"`` for a plain dotted name, else None."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def resolve(scan: ScanState, expr: ast.AST) -> str | None:
    """The module-qualified name a dotted expression refers to, through the imports."""
    name = dotted(expr)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    bound = scan.bindings.get(head)
    if bound is None:
        return None
    return f"{bound}.{rest}" if rest else bound


def int_tuple(expr: ast.AST) -> tuple[int, ...] | None:
    """The value of a literal tuple of integers such as ``(3, 10)``."""
    if not isinstance(expr, ast.Tuple) or not expr.elts:
        return None
    values: list[int] = []
    for e in expr.elts:
        if not (isinstance(e, ast.Constant) and type(e.value) is int):
            return None
        values.append(e.value)
    return tuple(values)


def catches(kind: ast.expr | None, names: frozenset[str]) -> bool:
    """Whether an ``except`` clause of type ``kind`` catches one of ``names``."""
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(catches(e, names) for e in kind.elts)
    name = dotted(kind)
    return name is not None and name.rsplit(".", 1)[-1] in names


def feature_tests(test: ast.expr) -> list[tuple[str, str, bool]]:
    """The ``hasattr(X, "name")`` tests in an ``if`` test: ``(ast.dump(X), name, positive)``
    each, positive unless negated (``not hasattr(...)``); ``and`` joins several."""
    negated = False
    while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test, negated = test.operand, not negated
    if type(test) is ast.BoolOp:
        if negated or type(test.op) is not ast.And:
            return []
        return [t for value in test.values for t in feature_tests(value) if t[2]]
    if (
        type(test) is ast.Call
        and type(test.func) is ast.Name
        and test.func.id == "hasattr"
        and len(test.args) == 2
        and not test.keywords
        and type(test.args[1]) is ast.Constant
        and isinstance(test.args[1].value, str)
    ):
        return [(ast.dump(test.args[0]), test.args[1].value, not negated)]
    return []


def guard_features(
    scan: ScanState, tests: list[tuple[str, str, bool]], live: list[ast.AST], dead: list[ast.AST]
) -> None:
    """Mark the uses a feature test guards: ``X.name`` where ``hasattr(X, "name")`` holds
    (``live``, the ``if`` body and the rest of the test), or where it is known not to
    hold when negated (``dead``: the ``else`` branch)."""
    for value, name, positive in tests:
        for root in live if positive else dead:
            for node in ast.walk(root):
                if (
                    type(node) is ast.Attribute
                    and node.attr == name
                    and ast.dump(node.value) == value
                ):
                    scan.feature_guarded.add(id(node))


def static_test(test: ast.expr, target: int) -> bool | None:
    """The value of ``TYPE_CHECKING`` or a ``sys.version_info`` test on the target."""
    name = dotted(test)
    if name is not None and name.rsplit(".", 1)[-1] == "TYPE_CHECKING":
        return False
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Subscript) and isinstance(left.slice, ast.Slice):
        left = left.value
    compare = _COMPARE.get(type(test.ops[0]))
    want = int_tuple(right)
    if dotted(left) not in _VERSION_INFO or compare is None or want is None:
        return None
    have = (3, target)
    if len(want) > 2 and want[:2] == have:
        return None  # the answer depends on the micro version
    return compare(have, want[:2])


def annotations_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """Every parameter and return annotation of ``node``."""
    args = node.args
    found = [a.annotation for a in args.args if a.annotation is not None]
    for extra in (args.posonlyargs, args.kwonlyargs):
        found.extend(a.annotation for a in extra if a.annotation is not None)
    for star in (args.vararg, args.kwarg):
        if star is not None and star.annotation is not None:
            found.append(star.annotation)
    if node.returns is not None:
        found.append(node.returns)
    return found


def is_plain_decorator(node: ast.expr) -> bool:
    """Python 3.8 takes only ``@dotted.name`` or ``@dotted.name(args)``."""
    if isinstance(node, ast.Call):
        node = node.func
    return dotted(node) is not None


def check_future(scan: ScanState, node: ast.ImportFrom, leading: bool) -> None:
    """``from __future__`` must come first and name a real feature."""
    if not leading:
        scan.add(
            node.lineno,
            "has a 'from __future__' import below other code, so Python "
            "cannot compile the block; move it to the top",
        )
    for alias in node.names:
        if alias.name not in FUTURE_FEATURES:
            scan.add(
                node.lineno,
                f"imports the unknown __future__ feature '{alias.name}', "
                "so Python cannot compile the block",
            )


def _is_type(node: ast.expr) -> bool:
    """An operand that makes ``a | b`` a type union for certain: None or a builtin type."""
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _is_type(node.left) or _is_type(node.right)
    return isinstance(node, ast.Name) and node.id in _BUILTIN_TYPES


def union(scan: ScanState, node: ast.BinOp, *, annotation: bool) -> None:
    """``X | Y`` evaluated below 3.10: in an annotation, or with a builtin type at run time."""
    seen = scan.unions_seen
    if id(node) in seen:
        return
    for side in (node.left, node.right):
        if isinstance(side, ast.BinOp) and isinstance(side.op, ast.BitOr):
            seen.add(id(side))  # one report for 'a | b | c'
    if annotation:
        scan.add(
            node.lineno,
            f"annotates with '{show(node)}', an X | Y union that "
            f"{scan.version} evaluates and rejects (TypeError; new in Python 3.10); add "
            "'from __future__ import annotations' as the block's first line, or use "
            "typing.Optional/Union",
        )
    elif _is_type(node.left) or _is_type(node.right):
        scan.add(
            node.lineno,
            f"builds the type union '{show(node)}' at run time, which fails "
            f"before Python 3.10 (the target is {scan.version}); use typing.Union[...]",
        )


def subscript(scan: ScanState, node: ast.Subscript, *, runtime: bool) -> None:
    """Starred or walrus items in ``[]`` (syntax) and ``list[int]`` below 3.9 (run time)."""
    s = node.slice
    kind = type(s)
    if kind is ast.Tuple:
        for e in s.elts:  # type: ignore[attr-defined]
            if type(e) is ast.Starred:
                if scan.text.char_at(s) != "(":
                    needs(scan, node, 11, "a starred item inside [] (a[*b])")
                break
    elif kind is ast.Starred:
        needs(scan, node, 11, "a starred item inside [] (a[*b])")
    elif kind is ast.NamedExpr and scan.target < 10 and scan.text.char_before(s) == "[":
        needs(scan, node, 10, "an unparenthesized assignment expression inside []")
    if not runtime or scan.target >= 9:
        return
    if isinstance(node.value, ast.Name | ast.Attribute):
        scan.uses.append((node.lineno, "generic", node))


def call(scan: ScanState, node: ast.Call, *, guarded: bool) -> None:
    """Keyword arguments a function gained, and imports spelled as calls."""
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else (func.attr if isinstance(func, ast.Attribute) else None)
    )
    if name is None or guarded:
        return
    if node.keywords and name in missing_names(scan.target).calls:
        scan.uses.append((node.lineno, "call", node))
    if name == "array" and scan.target < 13:
        scan.uses.append((node.lineno, "typecode", node))
    if name in ("__import__", "import_module") and node.args:
        first = node.args[0]
        if (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and first.value
            and not first.value.startswith(".")
        ):
            scan.imports.append(Import(node.lineno, first.value, 0, False))
