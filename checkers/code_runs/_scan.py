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

The walk is iterative (no recursion), visits each node at most once, and only
statements when :mod:`._prefilter` finds no sign of an expression rule. It
skips what the target never runs (``if TYPE_CHECKING:`` bodies, decidable
``sys.version_info`` tests); imports in a ``try`` that catches ``ImportError``
are optional, their ``except`` branch is not.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Any

from . import _bindings as bindings
from . import _compile
from . import _full as full
from . import _names as names
from . import _rules as rules
from . import _statements as statements
from ._flow import Walker
from ._prefilter import needs_expressions as needs_expressions
from ._prefilter import needs_resolving
from ._source import BlockText, fstring_problem
from ._state import (
    ANNOTATION,
    ASYNC,
    CLASS,
    COMP,
    FSTRING,
    FUNC,
    GUARDED,
    LAZY,
    LOCAL,
    Import,
    ScanState,
)
from ._stdlib import RUNNING_MINOR, name_table

_GUARDS = frozenset(
    {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
)
_STATIC_TESTS = (ast.Name, ast.Attribute, ast.Compare)
_FEATURE_TESTS = frozenset((ast.Call, ast.UnaryOp, ast.BoolOp))  # hasattr() tests
_KEYWORD = {ast.Return: "return", ast.Yield: "yield", ast.YieldFrom: "yield from"}


class Scan(Walker):
    """Walk one block's tree for a target version ``3.<target>``.

    After :meth:`run`, ``findings`` holds ``(line, text)`` pairs (``text`` reads
    after "line N ") and ``imports`` every import met on the way.
    """

    def __init__(self, text: BlockText, target: int, *, top_level_await: bool = False) -> None:
        ScanState.__init__(self, text, target)  # not super(): one call, no chain
        self.top_flags = ASYNC if top_level_await else 0
        self.lazy = False
        self._names = name_table()
        self._leading_future: set[int] = set()
        self._fstrings = RUNNING_MINOR >= 12 and target < 12

    # -- driving -----------------------------------------------------------------------

    def run(self, tree: ast.Module, *, deep: bool | None = None) -> None:
        """Walk ``tree`` once, then resolve the names it used.

        Every node is visited (:mod:`._full`, with the handlers this target needs:
        :func:`handlers_for`) unless the block's text shows that no expression rule
        can fire; then only statements are (:mod:`._statements`). ``deep`` forces
        either walk (tests check they agree).
        """
        self._prelude(tree)
        if deep is None:
            deep = needs_expressions(self.text.source, self.target)
            if not deep:
                # Statements first: their imports tell whether a member or keyword
                # rule could fire; only then are the expressions walked (afresh).
                self._deep = False
                statements.walk(self, tree.body, statement_handlers_for(self.target))
                if not needs_resolving(self.text.source, self.bindings, self.target):
                    return  # a statements-only walk notes no uses to resolve
                Scan.__init__(self, self.text, self.target, top_level_await=bool(self.top_flags))
                self._prelude(tree)
                deep = True
        self._deep = deep
        if deep:
            full.walk(self, tree.body, handlers_for(self.target, self._fstrings))
        else:
            statements.walk(self, tree.body, statement_handlers_for(self.target))
        names.resolve_uses(self, self.uses)

    def _prelude(self, tree: ast.Module) -> None:
        """Note the leading ``from __future__`` imports; they decide annotation laziness."""
        body = tree.body
        start = 1 if body and rules.is_docstring(body[0]) else 0
        for stmt in body[start:]:
            if not (
                isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__" and not stmt.level
            ):
                break
            self._leading_future.add(id(stmt))
            if any(a.name == "annotations" for a in stmt.names):
                self.lazy = True

    # -- scopes ------------------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, flags: int) -> bool:
        self.defined.add(node.name)
        outer = flags & ~(ANNOTATION | LAZY)
        if node.decorator_list:
            self._decorators(node.decorator_list, outer)
        args = node.args
        vararg = args.vararg
        if vararg is not None and type(vararg.annotation) is ast.Starred:
            rules.needs(self, vararg, 11, "a starred annotation (*args: *Ts)")
        if self._deep:
            self._push_expressions(args.defaults + args.kw_defaults, outer)
            kind = LAZY if self.lazy else ANNOTATION
            self._push_expressions(rules.annotations_of(node), outer | kind)
        self._push(node.body, self._function_flags(node, flags) | LOCAL)
        return True

    def _lambda(self, node: ast.Lambda, flags: int) -> bool:  # only met in a deep walk
        bindings.parameters(self, node.args)
        self._push_expressions(node.args.defaults + node.args.kw_defaults, flags)
        self._push_expressions([node.body], FUNC | LOCAL)
        return True

    def _class(self, node: ast.ClassDef, flags: int) -> bool:
        self.defined.add(node.name)
        if node.decorator_list:
            self._decorators(node.decorator_list, flags)
        self._push_expressions(node.bases + node.keywords, flags)
        # A class body runs now, in its own scope.
        self._push(node.body, flags & GUARDED | self._class_flags(node, flags))
        return True

    def _decorators(self, decorators: list[ast.expr], flags: int) -> None:
        if self.target < 9:
            for d in decorators:
                if not rules.is_plain_decorator(d):
                    rules.needs(self, d, 9, f"an expression as a decorator ('@{rules.show(d)}')")
        self._push_expressions(decorators, flags)

    def _annassign(self, node: ast.AnnAssign, flags: int) -> bool:
        bindings.annotated(self, node)
        self._push_expressions([node.target, node.value], flags)
        evaluated = not (flags & LOCAL) and not self.lazy
        self._push_expressions([node.annotation], flags | (ANNOTATION if evaluated else LAZY))
        return True

    # -- control flow ------------------------------------------------------------------

    def _try(self, node: ast.Try, flags: int) -> bool:
        guarded = any(rules.catches(h.type, _GUARDS) for h in node.handlers)
        if _compile.misplaced_bare_except(node.handlers):
            self.needs_compile = True
        self._push(node.body, flags | GUARDED if guarded else flags)
        self._push(node.handlers + node.orelse + node.finalbody, flags)
        return True

    def _if(self, node: ast.If | ast.IfExp, flags: int) -> bool:
        test = node.test
        if type(test) in _FEATURE_TESTS:
            tests = rules.feature_tests(test)
            if tests:
                body: list[ast.AST] = [node.body] if isinstance(node, ast.IfExp) else [*node.body]
                orelse: list[ast.AST] = (
                    [node.orelse] if isinstance(node, ast.IfExp) else [*node.orelse]
                )
                rules.guard_features(self, tests, [test, *body], orelse)
            return False
        if isinstance(node, ast.IfExp) or type(test) not in _STATIC_TESTS:
            return False
        live = rules.static_test(test, self.target)
        if live is None:
            return False
        self._push(node.body if live else node.orelse, flags)
        return True

    def _outside(self, node: ast.Return | ast.Yield | ast.YieldFrom, flags: int) -> bool:
        if not isinstance(node, ast.Return):
            self._yield_or_await(node, flags)
        if not flags & FUNC:
            word = _KEYWORD[type(node)]
            self.add(
                rules.line(node),
                f"has '{word}' outside a function, so Python cannot compile the block",
            )
        return False

    def _await(self, node: ast.Await, flags: int) -> bool:
        if flags & COMP:  # in a generator expression it is legal anywhere: compile() decides
            self._yield_or_await(node, flags)
        elif not flags & ASYNC:
            self.add(
                rules.line(node),
                "has 'await' outside an async function, so Python "
                "cannot run the block as a script; put it in 'async def main()' and "
                "call asyncio.run(main()), or set top_level_await = true if the block "
                "is a notebook cell or an asyncio REPL session",
            )
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
        taken = tuple(a.name for a in node.names)
        self.imports.append(Import(node.lineno, module, node.level, guarded, taken))
        if "*" in taken and flags & (FUNC | CLASS):
            self.needs_compile = True  # 'import *' only allowed at module level
        if node.level:
            return True
        if module == "__future__":
            rules.check_future(self, node, id(node) in self._leading_future)
        for alias in node.names:
            if alias.name == "*":
                continue
            self.bindings[alias.asname or alias.name] = f"{module}.{alias.name}"
            if not guarded and (module, alias.name) in self._names.spans:
                names.check_name(self, node.lineno, module, alias.name, "imports")
        return True

    # -- expressions -------------------------------------------------------------------

    def _binop(self, node: ast.BinOp, flags: int) -> bool:
        if type(node.op) is ast.BitOr and not flags & LAZY:
            rules.union(self, node, annotation=bool(flags & ANNOTATION))
            if self.target < 9 and not flags & ANNOTATION:
                self.uses.append((node.lineno, "dict_union", node))
        return False

    def _augassign(self, node: ast.AugAssign, flags: int) -> bool:
        if type(node.op) is ast.BitOr:
            self.uses.append((node.lineno, "dict_merge", node))
        return False

    def _subscript(self, node: ast.Subscript, flags: int) -> bool:
        rules.subscript(self, node, runtime=not flags & LAZY)
        return False

    def _set(self, node: ast.Set, flags: int) -> bool:
        for e in node.elts:
            if isinstance(e, ast.NamedExpr) and self.text.char_before(e) != "(":
                rules.needs(self, e, 9, "an unparenthesized assignment expression in a set")
        return False

    def _fstring(self, node: ast.JoinedStr, flags: int) -> bool:
        if not flags & FSTRING:
            problem = fstring_problem(self.text.segment(node))
            if problem:
                rules.needs(self, node, 12, problem)
        self._push(node.values, flags | FSTRING)
        return True


_HANDLERS: dict[type, Callable[[Scan, Any, int], bool]] = {
    ast.FunctionDef: Scan._function,
    ast.AsyncFunctionDef: Scan._function,
    ast.Lambda: Scan._lambda,
    ast.ClassDef: Scan._class,
    ast.AnnAssign: Scan._annassign,
    ast.Assign: Scan._assign,
    ast.AugAssign: Scan._augassign,
    ast.Try: Scan._try,
    ast.TryStar: Scan._try,
    ast.If: Scan._if,
    ast.IfExp: Scan._if,
    ast.For: Scan._for,
    ast.AsyncFor: Scan._for,
    ast.While: Scan._while,
    ast.Break: Scan._jump,
    ast.Continue: Scan._jump,
    ast.With: Scan._with,
    ast.AsyncWith: Scan._with,
    ast.Global: Scan._declare,
    ast.Nonlocal: Scan._declare,
    ast.Delete: Scan._delete,
    ast.ExceptHandler: Scan._handler,
    ast.Match: Scan._match,
    ast.Expr: Scan._expr,
    ast.Return: Scan._outside,
    ast.Yield: Scan._outside,
    ast.YieldFrom: Scan._outside,
    ast.Await: Scan._await,
    ast.Import: Scan._import,
    ast.ImportFrom: Scan._import_from,
    ast.BinOp: Scan._binop,
    ast.Subscript: Scan._subscript,
    ast.Set: Scan._set,
    ast.ListComp: Scan._comprehension,
    ast.SetComp: Scan._comprehension,
    ast.DictComp: Scan._comprehension,
    ast.GeneratorExp: Scan._comprehension,
    ast.NamedExpr: Scan._walrus,
    ast.JoinedStr: Scan._fstring,
}

# Node types whose rules apply only below some target version (or only where the
# running tokenizer can see inside f-strings): left out of the walk above it.
_ONLY_BELOW: dict[type, int] = {
    ast.BinOp: 10,
    ast.AugAssign: 9,
    ast.Subscript: 11,
    ast.Set: 9,
}


@functools.cache
def handlers_for(target: int, fstrings: bool) -> dict[type, Callable[[Scan, Any, int], bool]]:
    """The handlers a walk for target ``3.<target>`` needs; the rest cost nothing."""
    return {
        kind: handler
        for kind, handler in _HANDLERS.items()
        if target < _ONLY_BELOW.get(kind, 99) and (kind is not ast.JoinedStr or fstrings)
    }


@functools.cache
def statement_handlers_for(target: int) -> dict[type, Callable[[Scan, Any, int], bool]]:
    """The statement handlers of :func:`handlers_for`, for a statements-only walk."""
    return {k: h for k, h in handlers_for(target, False).items() if issubclass(k, ast.stmt)}
