"""The ``code_runs`` checker: every Python sample in a draft is code its target can run.

For each fenced block labelled ``python``, ``py``, ``python3`` or ``py3`` (also
``{.python}`` and ``python title="..."``; ``~~~`` fences, longer fences, fences
indented in list items or inside block quotes), the checker

1. parses it once with ``ast.parse(feature_version=...)`` for the target version
   (option ``python``, default ``"3.9"``);
2. walks the tree once (:mod:`._scan`) for what that parse lets through
   but the target cannot run, and for every import, including those inside
   functions and dynamic ``importlib.import_module("x")`` / ``__import__("x")``;
3. checks each import against the standard library **of the target version**
   (``data/stdlib_modules.txt``) or option ``allow``. A submodule import counts as
   its top-level package; relative imports fail; ``__future__`` is fine; a name
   that a module gained or lost (``from typing import Self``) is checked against a
   table of the common ones (``data/stdlib_names.txt``).

It never imports or runs the draft's code, and never raises: whatever the text
(NUL bytes, deep nesting, megabytes, unclosed fences), the answer is a
``CheckResult``.

Decisions worth knowing:

* **No Python block.** With ``require_code = false`` (the default) a draft without
  a Python block passes: there is no sample that could fail to run. Set
  ``require_code = true`` when the task asks for code; then no block fails.
  Unlabelled fences are not Python unless ``unlabeled = true``.
* **A target newer than the interpreter running the check.** The running parser
  cannot read syntax newer than itself. A block it parses is checked as usual
  (newer Pythons accept what older ones do; the tables cover imports). A block it
  cannot parse **fails**, with an issue that says the check was incomplete and to
  run gradeloop on the target version: a parse that could not be done is never
  turned into a pass.
* **Version guards.** Imports inside ``try``/``except ImportError`` are optional,
  ``if TYPE_CHECKING:`` bodies never run, and ``if sys.version_info >= (3, 11):``
  branches are followed only where the target takes them.
* **Issues** name the block (its number among the Python blocks and the draft line
  of its fence), the draft line of the problem, and what to do, for example
  ``Python block 2 (line 14): line 17 imports 'requests', which is not in the
  Python 3.9 standard library; use urllib.request instead or add 'requests' to
  allow``. At most 20 are listed.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from gradeloop import CheckResult

from ..markdown import Fence, fences
from . import _compile, _repl, _source
from ._imports import import_problem
from ._scan import Scan
from ._source import BlockText
from ._stdlib import RUNNING_MINOR, SUPPORTED, parse_version

PythonVersion = Literal["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]
"""A target version the standard-library tables describe."""

PYTHON_LANGUAGES = frozenset({"python", "py", "python3", "py3"})
#: Interactive sessions (Pygments' names for them): their typed lines are checked.
SESSION_LANGUAGES = frozenset({"pycon", "python-console"})
MAX_ISSUES = 20
#: The longest block checked by default (characters). Python's own parser needs
#: about 400 MB and more than a second per megabyte of short lines, and a tree is
#: held one block at a time: past this a block fails unread (never a pass).
MAX_BLOCK_CHARS = 100_000
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def _module_names(names: tuple[str, ...]) -> tuple[str, ...]:
    bad = [n for n in names if not _MODULE.fullmatch(n)]
    if bad:
        raise ValueError(
            f"{bad[0]!r} is not a module name; list the names used in import statements "
            "(for example 'yaml', not 'PyYAML'; 'sklearn', not 'scikit-learn')"
        )
    return names


ModuleNames = Annotated[tuple[str, ...], AfterValidator(_module_names)]
"""Importable module names such as ``"requests"`` or ``"google.protobuf"``."""


def code_runs(
    text: str,
    *,
    python: PythonVersion = "3.9",
    allow: ModuleNames = (),
    require_code: bool = False,
    unlabeled: bool = False,
    max_block_chars: Annotated[int, Field(ge=1)] = MAX_BLOCK_CHARS,
    top_level_await: bool = False,
) -> CheckResult:
    """Every Python code block parses for ``python`` and imports only its standard library.

    ``allow`` lists third-party modules the reader may import (matched on the
    module name and everything under it: ``"requests"`` allows
    ``requests.adapters``). ``require_code`` fails a draft with no Python block;
    ``unlabeled`` also checks fences that name no language. A block longer than
    ``max_block_chars`` characters fails without being parsed.
    ``top_level_await`` accepts ``await`` (and ``async for`` / ``async with``)
    outside a function, as a notebook cell or the asyncio REPL
    (``python -m asyncio``) runs it.
    """
    try:
        return _check(
            text, python, allow, require_code, unlabeled, max_block_chars, top_level_await
        )
    except Exception as exc:  # the last line of defence: a checker never raises
        return CheckResult(
            passed=False,
            issues=[
                f"code_runs could not check this draft ({type(exc).__name__}: {exc}); "
                "this is a bug in the checker"
            ],
        )


def _check(
    text: object,
    python: object,
    allow: object,
    require_code: bool,
    unlabeled: bool,
    max_block_chars: int = MAX_BLOCK_CHARS,
    top_level_await: bool = False,
) -> CheckResult:
    minor = parse_version(python) if isinstance(python, str) else None
    if minor is None:
        return CheckResult(
            False,
            [f"option python={python!r} is not supported; use one of " + ", ".join(SUPPORTED)],
        )
    if not isinstance(text, str):
        return CheckResult(False, [f"expected the draft as text, got {type(text).__name__}"])
    allowed = _allowed(allow)
    blocks = [
        f
        for f in fences(text)
        if f.language in PYTHON_LANGUAGES
        or f.language in SESSION_LANGUAGES
        or (unlabeled and not f.language)
    ]
    if not blocks:
        if require_code:
            return CheckResult(
                False,
                [
                    "the draft has no Python code block; add the code in "
                    "a fence that starts with ```python"
                ],
            )
        return CheckResult(True)
    issues: list[str] = []
    with warnings.catch_warnings():
        # Invalid escapes and the like warn but still run; under -W error the parser
        # would turn them into a SyntaxError. One filter for the whole draft: setting
        # it up costs more than parsing a short block.
        warnings.simplefilter("ignore")
        for number, block in enumerate(blocks, start=1):
            if len(block.source) > max_block_chars:
                issues.append(_too_long(number, block, max_block_chars))
                continue
            issues.extend(
                check_block(number, block, minor, allowed, top_level_await=top_level_await)
            )
    if len(issues) > MAX_ISSUES:
        rest = len(issues) - (MAX_ISSUES - 1)
        issues = [*issues[: MAX_ISSUES - 1], f"... and {rest} more problems like these"]
    return CheckResult(not issues, issues)


def _too_long(number: int, block: Fence, limit: int) -> str:
    return (
        f"Python block {number} (line {block.line}): is {len(block.source):,} characters "
        f"long, more than code_runs reads (max_block_chars = {limit:,}); it was not "
        "checked: split it into smaller blocks, or raise max_block_chars"
    )


def _allowed(allow: object) -> tuple[str, ...]:
    """The usable entries of ``allow``, also when a caller bypassed validation."""
    if isinstance(allow, str):
        allow = (allow,)
    if not isinstance(allow, list | tuple | set | frozenset):
        return ()
    return tuple(a.strip() for a in allow if isinstance(a, str) and a.strip())


def check_block(
    number: int,
    block: Fence,
    minor: int,
    allow: tuple[str, ...],
    *,
    deep: bool | None = None,
    top_level_await: bool = False,
) -> list[str]:
    """The issues of one Python block, each naming the block and the draft line.

    ``deep`` is passed to :meth:`Scan.run`: None lets the block's text decide. The
    caller silences warnings (:func:`_check` does, for all blocks at once).
    """
    source = block.source
    if not source or source.isspace():
        return []
    where = f"Python block {number} (line {block.line})"
    session = block.language in SESSION_LANGUAGES or _repl.is_transcript(source)
    found: dict[tuple[int, str], None] = {}
    if session:
        try:
            source = _repl.typed_code(source)
        except ValueError as exc:
            return [_malformed_prompt(where, exc)]
    else:
        cookie = _source.cookie_problem(source)
        if cookie is not None:
            found[cookie] = None
    tree = _parse(source, minor)
    if not isinstance(tree, ast.Module) and not session and _repl.has_prompt(source):
        # Not a script, but a session after some other first line (a comment, a
        # banner, a shell command): the lines typed at '>>>' are the code.
        try:
            source = _repl.typed_code(block.source)
        except ValueError as exc:
            return [_malformed_prompt(where, exc)]
        tree = _parse(source, minor)
    if not isinstance(tree, ast.Module):
        return [f"{where}: {_parse_message(tree, block, minor)}"]
    scan = Scan(BlockText(source), minor, top_level_await=top_level_await)
    scan.run(tree, deep=deep)
    _compile.check(scan, tree)
    found.update(scan.findings)
    for imp in scan.imports:
        problem = import_problem(imp, minor, allow)
        if problem:
            found[(imp.line, problem)] = None
    return [f"{where}: line {block.line + n} {msg}" for n, msg in sorted(found)]


def _malformed_prompt(where: str, exc: ValueError) -> str:
    return (
        f"{where}: reads as an interactive session (>>> prompts), but a prompt is "
        f"malformed ({exc}); put a space after each >>> and ... prompt"
    )


def _parse(source: str, minor: int, *, retry: bool = True) -> ast.Module | BaseException:
    """The block's tree, or the exception that stopped the parse."""
    try:
        # ast.parse(feature_version=...) without its Python wrapper's cost.
        tree = compile(
            source,
            "<unknown>",
            "exec",
            ast.PyCF_ONLY_AST,
            dont_inherit=True,
            _feature_version=min(minor, RUNNING_MINOR),
        )
    except SyntaxError as exc:
        if minor >= 9 or not retry or not (exc.msg or "").startswith(_WITH_REFUSED):
            return exc
        return _parse_with(source, minor, exc)
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:
        return exc
    return tree if isinstance(tree, ast.Module) else TypeError("not a module")


_WITH_REFUSED = "Parenthesized context managers are only supported"


def _parse_with(source: str, minor: int, refused: SyntaxError) -> ast.Module | BaseException:
    """The tree of a block whose 3.8 parse refused a ``with`` in parentheses.

    The feature-version parse refuses ``with (cm):`` too, which Python 3.8 runs: its
    parser reads ``(cm)`` as a parenthesized expression. Such a ``with`` (one item, no
    ``as``) is written as an ``if`` with the same expression, and the block parsed
    again for 3.8: a refusal now is one 3.8 makes too; otherwise the running
    version's tree is the block's, and the walk (``Scan._with``) judges the other
    forms as 3.8's parser does.
    """
    tree = _parse(source, RUNNING_MINOR)
    if not isinstance(tree, ast.Module):
        return refused
    text = BlockText(source)
    lines = text.lines.copy()
    for node in ast.walk(tree):
        if isinstance(node, ast.With | ast.AsyncWith) and _one_expression(node):
            line = lines[node.lineno - 1]
            at = text.col(node.lineno, node.col_offset)
            keyword = "async with" if type(node) is ast.AsyncWith else "with"
            if line.startswith(keyword, at):
                lines[node.lineno - 1] = (
                    line[:at] + "if".ljust(len(keyword)) + line[at + len(keyword) :]
                )
    again = _parse("\n".join(lines), minor, retry=False)
    return tree if isinstance(again, ast.Module) else again


def _one_expression(node: ast.With | ast.AsyncWith) -> bool:
    return len(node.items) == 1 and node.items[0].optional_vars is None


def _parse_message(exc: BaseException, block: Fence, minor: int) -> str:
    unclosed = (
        ""
        if block.closed
        else f"; the fence on line {block.line} is never closed, so the block runs on to "
        f"line {block.end} (the end of its list item, quote or draft)"
    )
    if isinstance(exc, RecursionError | MemoryError):
        return f"is nested too deeply for Python to parse{unclosed}"
    lineno = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    at = f"line {block.line + lineno} " if isinstance(lineno, int) and lineno > 0 else ""
    reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    invalid_text = "null" in reason or isinstance(exc, UnicodeError)  # invalid in any version
    if "null" in reason:
        reason = "it contains a NUL character"
    elif isinstance(exc, UnicodeError):
        reason = "it contains a lone surrogate, which is not valid Unicode text"
    if minor > RUNNING_MINOR and not invalid_text:
        return (
            f"{at}does not parse on Python 3.{RUNNING_MINOR}, which runs this check, and "
            f"may use syntax new in the target Python 3.{minor} ({reason}); the block "
            f"could not be checked: run the check on Python 3.{minor} or newer, or "
            f'target python = "3.{RUNNING_MINOR}"{unclosed}'
        )
    return f"{at}does not parse as Python 3.{minor}: {reason}{unclosed}"


CHECKERS: dict[str, Callable[..., Any]] = {"code_runs": code_runs}
