"""What a walk over one code block knows: the block, its target, and what it found.

:class:`~._scan.Scan` drives the walk and :mod:`._rules` decides findings; both read
and write this state, so it lives apart from either (the rules need no import of the
walker).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ._source import BlockText

# Flags of a walk frame: where the nodes in it sit.
FUNC, ASYNC, LOCAL, ANNOTATION, LAZY, GUARDED, FSTRING = 1, 2, 4, 8, 16, 32, 64
LOOP, COMP, CLASS = 128, 256, 512  # a loop body; a comprehension's own scope; a class body


class Import(NamedTuple):
    """One module a block imports: ``level`` > 0 for relative imports.

    ``guarded`` imports sit in a ``try`` whose ``except`` catches ``ImportError``:
    the block runs without them.
    """

    line: int
    module: str
    level: int
    guarded: bool
    names: tuple[str, ...] = ()  # what a 'from' import takes from the module


class ScanState:
    """The findings, imports and name bindings of one walk for target ``3.<target>``."""

    def __init__(self, text: BlockText, target: int) -> None:
        self.text = text
        self.target = target
        self.findings: dict[tuple[int, str], None] = {}
        self.imports: list[Import] = []
        self.bindings: dict[str, str] = {}
        self.defined: set[str] = set()
        self.uses: list[tuple[int, str, Any]] = []  # names to resolve once bindings are known
        self.unions_seen: set[int] = set()
        # Plain 'name = value' bindings, and names bound any other way (parameters,
        # loop and 'with' targets, unpacking...): the evidence for :mod:`._resolve`.
        self.assigned: dict[str, list[Any]] = {}
        self.rebound: set[str] = set()
        self.types: dict[str, str | None] = {}  # the evident type of each name, once known
        self.needs_compile = False  # the tree holds something only compile() judges
        # Attribute nodes a feature test guards ('if hasattr(m, "x"): m.x()'), by id.
        self.feature_guarded: set[int] = set()
        # The walk's frames (:class:`~._flow.Walker`): nodes waiting, one list per flags.
        self._frames: list[tuple[int, list[Any]]] = []
        self._deep = True  # False: only statements are walked, expressions never pushed
        # The flags of the block's top level: ASYNC where top-level 'await' is allowed
        # (option top_level_await: a notebook cell, the asyncio REPL).
        self.top_flags = 0

    @property
    def version(self) -> str:
        """The target as messages name it: ``Python 3.9``."""
        return f"Python 3.{self.target}"

    def add(self, line: int, text: str) -> None:
        """Record a finding on block line ``line``."""
        self.findings[(line, text)] = None
