"""What ``compile()`` rejects though ``ast.parse`` accepts it, judged by the compiler itself.

The parser accepts ``break`` outside a loop, ``def f(a, a)``, ``nonlocal`` at
module level, ``from m import *`` inside a function, ``yield`` inside a
comprehension, ``*a = [1]``, an async comprehension outside an async function
and more; the compiler's symbol table and code generator reject them. Compiling
the parsed tree executes nothing, but it costs about as much as the parse, so the
walk marks a block (``scan.needs_compile``) only when its tree holds a construct
that can trigger one of these errors, and only such blocks are compiled. The
compiler's own message is reported, on the draft line it names.
"""

from __future__ import annotations

import ast
import warnings

from ._state import ScanState

# Errors the running compiler raises that a newer target no longer does.
_GONE_IN: dict[str, int] = {"too many statically nested blocks": 13}


def duplicate(names: list[str]) -> bool:
    """Whether a parameter list repeats a name (``def f(a, a)``)."""
    return len(set(names)) != len(names)


def bad_starred_target(targets: list[ast.expr]) -> bool:
    """``*a = ...`` or two starred names in one unpacking: the compiler rejects both."""
    for target in targets:
        if isinstance(target, ast.Starred):
            return True
        if (
            isinstance(target, ast.Tuple | ast.List)
            and sum(isinstance(e, ast.Starred) for e in target.elts) > 1
        ):
            return True
    return False


def misplaced_bare_except(handlers: list[ast.ExceptHandler]) -> bool:
    """A bare ``except:`` that is not the last handler."""
    return any(h.type is None for h in handlers[:-1])


def compile_problem(scan: ScanState, tree: ast.Module) -> tuple[int, str] | None:
    """The compiler's complaint about ``tree`` as ``(block line, message)``, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if scan.top_flags else 0
            compile(tree, "<block>", "exec", flags, dont_inherit=True)
    except SyntaxError as exc:
        message = exc.msg or "invalid syntax"
        gone = _GONE_IN.get(message)
        if gone is not None and scan.target >= gone:
            return None
        return (exc.lineno or 1), f"does not compile: {message}"
    except (ValueError, TypeError, RecursionError, MemoryError):
        return None  # not a verdict on the draft: the parse already vouched for it
    return None


def check(scan: ScanState, tree: ast.Module) -> None:
    """Compile ``tree`` when the walk found a reason to; report what the compiler says."""
    if not (scan.needs_compile or "__debug__" in scan.text.source):
        return
    found = compile_problem(scan, tree)
    if found is None:
        return
    line, message = found
    if any(known == line for known, _ in scan.findings):
        return  # the walk already explained this line in its own words
    scan.add(line, message)
