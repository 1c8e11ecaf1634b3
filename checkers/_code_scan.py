"""One walk over a parsed code block: what it imports, and what its target cannot run.

``ast.parse(..., feature_version=...)`` rejects most syntax that is too new for the
target, but not all of it, and nothing that parses yet fails when it runs. The walk
adds what it misses (checked against real CPython 3.8-3.13 parsers):

* syntax the old-version parse lets through: relaxed decorators, parenthesized
  ``with`` items, unparenthesized walrus in sets, starred ``for`` targets (3.9);
  unparenthesized walrus in an index (3.10); starred subscripts and ``*args: *Ts``
  (3.11); the f-strings of PEP 701 when the checker runs on 3.12+ (3.12);
* evaluated annotations: ``X | Y`` below 3.10 and ``list[int]`` below 3.9, unless
  ``from __future__ import annotations`` makes every annotation lazy; local
  variable annotations are never evaluated. Outside annotations, ``int | None`` and
  ``list[int]`` built at run time fail the same way;
* what ``compile`` rejects though ``ast.parse`` accepts: ``return``/``yield``
  outside a function, ``await`` outside an async function, misplaced or unknown
  ``__future__`` imports.

The walk is iterative (a stack, no recursion), visits every node once and does
not follow the branches a target never runs: ``if TYPE_CHECKING:`` bodies and
``sys.version_info`` tests it can decide. Imports inside ``try`` blocks that
catch ``ImportError`` (or ``AttributeError``, ``Exception``, a bare ``except``)
are optional and not reported; their ``except`` branch is.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from . import _code_rules as rules
from ._code_rules import Import
from ._code_source import BlockText, fstring_problem, parenthesized_with
from ._stdlib import RUNNING_MINOR, name_table

FUNC, ASYNC, LOCAL, ANNOTATION, LAZY, GUARDED, FSTRING = 1, 2, 4, 8, 16, 32, 64

_SCALAR_FIELDS = frozenset(
    {"ctx", "id", "arg", "attr", "name", "names", "module", "level", "kind", "op", "ops",
     "type_comment", "conversion", "simple", "is_async", "kwd_attrs", "tag"}
)
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}
_GUARDS = frozenset(
    {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
)
_VERSION_INFO = ("sys.version_info", "version_info")
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        every: tuple[str, ...] = getattr(kind, "_fields", ())
        fields = _FIELDS[kind] = tuple(f for f in every if f not in _SCALAR_FIELDS)
    return fields


class Scan:
    """Walk one block's tree for a target version ``3.<target>``.

    After :meth:`run`, ``findings`` holds ``(line, text)`` pairs (``text`` reads
    after "line N ") and ``imports`` every import met on the way.
    """

    def __init__(self, text: BlockText, target: int) -> None:
        self.text = text
        self.target = target
        self.version = f"Python 3.{target}"
        self.findings: dict[tuple[int, str], None] = {}
        self.imports: list[Import] = []
        self.bindings: dict[str, str] = {}
        self.defined: set[str] = set()
        self.lazy = False
        self.uses: list[tuple[int, str, Any]] = []  # names to resolve once bindings are known
        self.unions_seen: set[int] = set()
        self._names = name_table()
        self._leading_future: set[int] = set()
        self._fstrings = RUNNING_MINOR >= 12 and target < 12
        self._stack: list[tuple[ast.AST, int]] = []

    # -- driving -----------------------------------------------------------------------

    def run(self, tree: ast.Module) -> None:
        """Walk ``tree`` once, then resolve the names it used."""
        self._prelude(tree)
        stack = self._stack
        stack.extend((node, 0) for node in reversed(tree.body))
        handlers = _HANDLERS
        while stack:
            node, flags = stack.pop()
            handler = handlers.get(type(node))
            if handler is not None and handler(self, node, flags):
                continue
            for name in _fields(type(node)):
                value = getattr(node, name, None)
                if type(value) is list:
                    stack.extend((item, flags) for item in value if isinstance(item, ast.AST))
                elif isinstance(value, ast.AST):
                    stack.append((value, flags))
        rules.resolve_uses(self, self.uses)

    def add(self, line: int, text: str) -> None:
        """Record a finding on block line ``line``."""
        self.findings[(line, text)] = None

    def _prelude(self, tree: ast.Module) -> None:
        """Note the leading ``from __future__`` imports; they decide annotation laziness."""
        body = tree.body
        start = 1 if body and rules.is_docstring(body[0]) else 0
        for stmt in body[start:]:
            if not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
                    and not stmt.level):
                break
            self._leading_future.add(id(stmt))
            if any(a.name == "annotations" for a in stmt.names):
                self.lazy = True

    def _push(self, nodes: list[Any], flags: int) -> None:
        self._stack.extend((n, flags) for n in nodes if isinstance(n, ast.AST))

    # -- scopes ------------------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, flags: int) -> bool:
        self.defined.add(node.name)
        outer = flags & ~(ANNOTATION | LAZY)
        self._decorators(node.decorator_list, outer)
        args = node.args
        self._push([*args.defaults, *args.kw_defaults], outer)
        if args.vararg is not None and isinstance(args.vararg.annotation, ast.Starred):
            rules.needs(self, args.vararg.annotation, 11, "a starred annotation (*args: *Ts)")
        every = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
        annotations = [a.annotation for a in every if a is not None and a.annotation]
        if node.returns is not None:
            annotations.append(node.returns)
        self._push(annotations, outer | (LAZY if self.lazy else ANNOTATION))
        inner = FUNC | LOCAL | (ASYNC if isinstance(node, ast.AsyncFunctionDef) else 0)
        self._push(node.body, inner)
        return True

    def _lambda(self, node: ast.Lambda, flags: int) -> bool:
        self._push([*node.args.defaults, *node.args.kw_defaults], flags)
        self._stack.append((node.body, FUNC | LOCAL))
        return True

    def _class(self, node: ast.ClassDef, flags: int) -> bool:
        self.defined.add(node.name)
        self._decorators(node.decorator_list, flags)
        self._push([*node.bases, *node.keywords], flags)
        self._push(node.body, flags & GUARDED)  # a class body runs now, in its own scope
        return True

    def _decorators(self, decorators: list[ast.expr], flags: int) -> None:
        for d in decorators:
            if not rules.is_plain_decorator(d):
                rules.needs(self, d, 9, f"an expression as a decorator ('@{rules.show(d)}')")
        self._push(decorators, flags)

    def _annassign(self, node: ast.AnnAssign, flags: int) -> bool:
        self._push([node.target, node.value], flags)
        evaluated = not (flags & LOCAL) and not self.lazy
        self._stack.append((node.annotation, flags | (ANNOTATION if evaluated else LAZY)))
        return True

    # -- control flow ------------------------------------------------------------------

    def _try(self, node: ast.Try, flags: int) -> bool:
        guarded = any(rules.catches(h.type, _GUARDS) for h in node.handlers)
        self._push(node.body, flags | GUARDED if guarded else flags)
        self._push([*node.handlers, *node.orelse, *node.finalbody], flags)
        return True

    def _if(self, node: ast.If, flags: int) -> bool:
        live = self._static(node.test)
        if live is None:
            return False
        self._push(node.body if live else node.orelse, flags)
        return True

    def _static(self, test: ast.expr) -> bool | None:
        """The value of ``TYPE_CHECKING`` or a ``sys.version_info`` test on the target."""
        name = rules.dotted(test)
        if name is not None and name.rsplit(".", 1)[-1] == "TYPE_CHECKING":
            return False
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left, right = test.left, test.comparators[0]
        if isinstance(left, ast.Subscript) and isinstance(left.slice, ast.Slice):
            left = left.value
        compare = _COMPARE.get(type(test.ops[0]))
        want = rules.int_tuple(right)
        if rules.dotted(left) not in _VERSION_INFO or compare is None or want is None:
            return None
        have = (3, self.target)
        if len(want) > 2 and want[:2] == have:
            return None  # the answer depends on the micro version
        return compare(have, want[:2])

    def _outside(self, node: ast.AST, flags: int) -> bool:
        word = {ast.Return: "return", ast.Yield: "yield", ast.YieldFrom: "yield from"}
        if not flags & FUNC:
            self.add(rules.line(node), f"has '{word[type(node)]}' outside a function, "
                                       "so Python cannot compile the block")
        return False

    def _await(self, node: ast.Await, flags: int) -> bool:
        if not flags & ASYNC:
            self.add(rules.line(node), "has 'await' outside an async function, so Python "
                     "cannot run the block as a script; put it in 'async def main()' and "
                     "call asyncio.run(main())")
        return False

    # -- imports -----------------------------------------------------------------------

    def _import(self, node: ast.Import, flags: int) -> bool:
        guarded = bool(flags & GUARDED)
        for alias in node.names:
            self.imports.append(Import(node.lineno, alias.name, 0, guarded))
            top = alias.name.split(".", 1)[0]
            self.bindings[alias.asname or top] = alias.name if alias.asname else top
        return True

    def _import_from(self, node: ast.ImportFrom, flags: int) -> bool:
        module, guarded = node.module or "", bool(flags & GUARDED)
        self.imports.append(Import(node.lineno, module, node.level, guarded))
        if node.level:
            return True
        if module == "__future__":
            rules.check_future(self, node, id(node) in self._leading_future)
        for alias in node.names:
            if alias.name == "*":
                continue
            self.bindings[alias.asname or alias.name] = f"{module}.{alias.name}"
            if not guarded and (module, alias.name) in self._names.spans:
                rules.check_name(self, node.lineno, module, alias.name, "imports")
        return True

    # -- expressions -------------------------------------------------------------------

    def _binop(self, node: ast.BinOp, flags: int) -> bool:
        if self.target < 10 and type(node.op) is ast.BitOr and not flags & LAZY:
            rules.union(self, node, annotation=bool(flags & ANNOTATION))
        return False

    def _subscript(self, node: ast.Subscript, flags: int) -> bool:
        rules.subscript(self, node, runtime=not flags & LAZY)
        return False

    def _set(self, node: ast.Set | ast.SetComp, flags: int) -> bool:
        elts = node.elts if isinstance(node, ast.Set) else [node.elt]
        for e in elts:
            if isinstance(e, ast.NamedExpr) and self.text.char_before(e) != "(":
                rules.needs(self, e, 9, "an unparenthesized assignment expression in a set")
        return False

    def _for(self, node: ast.For | ast.AsyncFor, flags: int) -> bool:
        it = node.iter
        if (isinstance(it, ast.Tuple) and any(isinstance(e, ast.Starred) for e in it.elts)
                and self.text.char_at(it) != "("):
            rules.needs(self, it, 9, "unparenthesized starred items after 'for ... in'")
        return False

    def _with(self, node: ast.With | ast.AsyncWith, flags: int) -> bool:
        if self.target < 9 and parenthesized_with(node, self.text):
            rules.needs(self, node, 9, "parenthesized context managers")
        return False

    def _fstring(self, node: ast.JoinedStr, flags: int) -> bool:
        if self._fstrings and not flags & FSTRING:
            problem = fstring_problem(self.text.segment(node))
            if problem:
                rules.needs(self, node, 12, problem)
        self._push(node.values, flags | FSTRING)
        return True

    def _name(self, node: ast.Name, flags: int) -> bool:
        if node.id in self._names.builtins:
            if not isinstance(node.ctx, ast.Load):
                self.defined.add(node.id)
            elif not flags & (LAZY | GUARDED):
                self.uses.append((node.lineno, "name", node))
        return True

    def _attribute(self, node: ast.Attribute, flags: int) -> bool:
        if node.attr in self._names.attrs and not flags & (LAZY | GUARDED):
            self.uses.append((node.lineno, "attr", node))
        return False

    def _call(self, node: ast.Call, flags: int) -> bool:
        if not flags & LAZY:
            rules.call(self, node, guarded=bool(flags & GUARDED))
        return False


_HANDLERS: dict[type, Callable[[Scan, Any, int], bool]] = {
    ast.FunctionDef: Scan._function,
    ast.AsyncFunctionDef: Scan._function,
    ast.Lambda: Scan._lambda,
    ast.ClassDef: Scan._class,
    ast.AnnAssign: Scan._annassign,
    ast.Try: Scan._try,
    ast.If: Scan._if,
    ast.Return: Scan._outside,
    ast.Yield: Scan._outside,
    ast.YieldFrom: Scan._outside,
    ast.Await: Scan._await,
    ast.Import: Scan._import,
    ast.ImportFrom: Scan._import_from,
    ast.BinOp: Scan._binop,
    ast.Subscript: Scan._subscript,
    ast.Set: Scan._set,
    ast.SetComp: Scan._set,
    ast.For: Scan._for,
    ast.AsyncFor: Scan._for,
    ast.With: Scan._with,
    ast.AsyncWith: Scan._with,
    ast.JoinedStr: Scan._fstring,
    ast.Name: Scan._name,
    ast.Attribute: Scan._attribute,
    ast.Call: Scan._call,
}
if hasattr(ast, "TryStar"):
    _HANDLERS[ast.TryStar] = Scan._try
