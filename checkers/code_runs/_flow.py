"""The walk's frames, and the handlers for loops, comprehensions and name bindings.

:class:`Walker` is the base of :class:`~._scan.Scan`: it holds the stack of frames
(nodes waiting to be visited, one list per set of flags) and the handlers that
decide which flags a node's children get: loop bodies (``LOOP``, for ``break`` and
``continue``), comprehensions (``COMP``: their own scope, where ``await`` and
``yield`` mean something else), and the statements that bind names
(:mod:`._bindings`). Constructs that only ``compile()`` can judge mark the block
for it (:mod:`._compile`).
"""

from __future__ import annotations

import ast
from typing import Any

from . import _bindings as bindings
from . import _compile
from . import _rules as rules
from ._source import parenthesized_with
from ._state import ASYNC, CLASS, COMP, FUNC, LOOP, ScanState


class Walker(ScanState):
    """Frames of nodes to visit, and the handlers that set their children's flags.

    The frames (``_frames``) and the walk's depth (``_deep``) are set up by
    :class:`ScanState`, whose ``__init__`` is the only one a scan runs.
    """

    def _push(self, nodes: list[Any], flags: int) -> None:
        """Walk ``nodes`` (None entries are skipped) under ``flags``.

        The walk pops from the list it is given, so it gets a copy: the tree
        itself stays whole for the messages that quote it.
        """
        if nodes:
            self._frames.append((flags, nodes.copy()))

    def _push_expressions(self, nodes: list[Any], flags: int) -> None:
        """Like :meth:`_push`, for expressions: a statements-only walk skips them."""
        if nodes and self._deep:
            self._frames.append((flags, nodes.copy()))

    # -- loops -------------------------------------------------------------------------

    def _for(self, node: ast.For | ast.AsyncFor, flags: int) -> bool:
        it = node.iter
        if (
            self.target < 9
            and isinstance(it, ast.Tuple)
            and any(isinstance(e, ast.Starred) for e in it.elts)
            and self.text.char_at(it) != "("
        ):
            rules.needs(self, it, 9, "unparenthesized starred items after 'for ... in'")
        if type(node) is ast.AsyncFor and not flags & ASYNC:
            self.needs_compile = True
        if type(node.target) is not ast.Name and _compile.bad_starred_target([node.target]):
            self.needs_compile = True
        if self._deep:
            bindings.loop_target(self, node)
        self._push(node.body, flags | LOOP)
        self._push(node.orelse, flags)
        self._push_expressions([node.target, node.iter], flags)
        return True

    def _while(self, node: ast.While, flags: int) -> bool:
        self._push(node.body, flags | LOOP)
        self._push(node.orelse, flags)
        self._push_expressions([node.test], flags)
        return True

    def _jump(self, node: ast.Break | ast.Continue, flags: int) -> bool:
        if not flags & LOOP:
            self.needs_compile = True
        return True

    # -- statements that bind names ----------------------------------------------------

    def _assign(self, node: ast.Assign, flags: int) -> bool:
        targets = node.targets
        if len(targets) == 1 and type(targets[0]) is ast.Name:  # the common case, fast
            if self._deep:
                self.assigned.setdefault(targets[0].id, []).append(node.value)
            return False
        if _compile.bad_starred_target(targets):
            self.needs_compile = True
        if self._deep:
            bindings.assign(self, node)
        return False

    def _with(self, node: ast.With | ast.AsyncWith, flags: int) -> bool:
        if self.target < 9 and parenthesized_with(node, self.text):
            rules.needs(self, node, 9, "parenthesized context managers")
        if type(node) is ast.AsyncWith and not flags & ASYNC:
            self.needs_compile = True
        if self._deep:
            for item in node.items:
                bindings.rebind(self, item.optional_vars)
        return False

    def _declare(self, node: ast.Global | ast.Nonlocal, flags: int) -> bool:
        self.rebound.update(node.names)
        self.needs_compile = True  # misplaced or conflicting declarations: compile() knows
        return True

    def _delete(self, node: ast.Delete, flags: int) -> bool:
        if self._deep:
            for target in node.targets:
                bindings.rebind(self, target)
        return False

    def _handler(self, node: ast.ExceptHandler, flags: int) -> bool:
        if node.name:
            self.rebound.add(node.name)
        return False

    def _match(self, node: ast.Match, flags: int) -> bool:
        bindings.captures(self, node)
        self.needs_compile = True  # unreachable or conflicting patterns: compile() knows
        return False

    def _expr(self, node: ast.Expr, flags: int) -> bool:
        if type(node.value) is ast.Starred:
            self.needs_compile = True  # '*a' alone: "can't use starred expression here"
        return False

    # -- comprehensions ----------------------------------------------------------------

    def _comprehension(self, node: Any, flags: int) -> bool:
        """Only the first ``in`` is evaluated outside; the rest runs in the comprehension."""
        first, *rest = node.generators
        inner = flags | COMP
        for gen in node.generators:
            bindings.rebind(self, gen.target)
            if gen.is_async and (flags & COMP or not flags & ASYNC):
                self.needs_compile = True  # async comprehension outside async code
        if type(node) is ast.SetComp and self.target < 9:
            e = node.elt
            if isinstance(e, ast.NamedExpr) and self.text.char_before(e) != "(":
                rules.needs(self, e, 9, "an unparenthesized assignment expression in a set")
        self._push_expressions([first.iter], flags)
        parts = [first.target, *first.ifs]
        for gen in rest:
            parts += [gen.target, gen.iter, *gen.ifs]
        parts += [node.key, node.value] if type(node) is ast.DictComp else [node.elt]
        self._push_expressions(parts, inner)
        return True

    def _walrus(self, node: ast.NamedExpr, flags: int) -> bool:
        bindings.rebind(self, node.target)
        if flags & COMP or flags & CLASS:
            self.needs_compile = True  # rebinding a loop variable, or in a class body
        return False

    def _yield_or_await(self, node: ast.Yield | ast.YieldFrom | ast.Await, flags: int) -> None:
        """Inside a comprehension or an async generator: only compile() can tell."""
        if flags & COMP or (flags & ASYNC and type(node) is not ast.Await):
            self.needs_compile = True

    def _parameters(self, args: ast.arguments, flags: int) -> None:
        if (
            not self._deep
            and not (args.posonlyargs or args.kwonlyargs)
            and len(args.args) + (args.vararg is not None) + (args.kwarg is not None) < 2
        ):
            return  # nothing to record, and too few names to repeat one
        names = bindings.parameters(self, args) if self._deep else bindings.parameter_names(args)
        if len(names) > 1 and _compile.duplicate(names):
            self.needs_compile = True

    def _type_params(self, node: Any) -> None:
        """PEP 695 syntax (3.12+): its scoping rules are the compiler's."""
        if getattr(node, "type_params", None):
            self.needs_compile = True

    def _function_flags(self, node: Any, flags: int) -> int:
        """The flags of a function body: a new scope (no loop, no comprehension)."""
        self._parameters(node.args, flags)
        self._type_params(node)
        return FUNC | (ASYNC if type(node) is ast.AsyncFunctionDef else 0)

    def _class_flags(self, node: ast.ClassDef, flags: int) -> int:
        self._type_params(node)
        return CLASS
