"""Whether each import of a block works on the target: modules, submodules, allow.

A module must be in the target's standard library (modules *and* submodules:
``importlib.resources.abc`` arrived in 3.11, ``distutils`` left in 3.12) or in
option ``allow``. Relative imports fail outside a package, private CPython
modules are not the supported library, and ``typing_extensions`` (a third-party
backport) is answered with the standard-library home of each name it imports.
"""

from __future__ import annotations

import functools

from ._state import Import
from ._stdlib import (
    DOCUMENTED_PRIVATE,
    Span,
    alternative,
    is_private,
    module_table,
    name_table,
    replacement,
)


def import_problem(imp: Import, target: int, allow: tuple[str, ...]) -> str | None:
    """Why ``imp`` fails on Python ``3.<target>`` with ``allow`` installed, or None."""
    _, module, level, guarded, names = imp
    if len(names) > _CACHED_NAMES:
        return _problem(module, level, guarded, names, target, allow)
    return _cached_problem(module, level, guarded, names, target, allow)


# The verdict depends on the import's text alone, and drafts import the same few
# modules again and again: one cached lookup per import. An import of many names is
# not kept (a cache entry holds its names).
_CACHED_NAMES = 16


def _problem(
    module: str,
    level: int,
    guarded: bool,
    names: tuple[str, ...],
    target: int,
    allow: tuple[str, ...],
) -> str | None:
    if (
        module == "typing_extensions"
        and names
        and not (guarded or level)
        and "typing_extensions" not in allow
    ):
        return _typing_extensions(names, target)
    problem = _import_problem(module, level, guarded, target, allow)
    if problem or level or guarded or not names:
        return problem
    return _submodules(module, names, target)


_cached_problem = functools.lru_cache(maxsize=4096)(_problem)


def _absence(span: Span, target: int) -> str:
    if span.since > target:
        return f"new in Python 3.{span.since} and not in the Python 3.{target} standard library"
    return f"which Python 3.{span.gone_by(target)} removed from the standard library"


@functools.lru_cache(maxsize=4096)
def _import_problem(
    module: str, level: int, guarded: bool, target: int, allow: tuple[str, ...]
) -> str | None:
    version = f"Python 3.{target}"
    if level:
        return (
            f"uses a relative import ('from {'.' * level}{module} import ...'), which "
            "fails outside a package; import by absolute name"
        )
    if guarded or not module or any(module == a or module.startswith(a + ".") for a in allow):
        return None
    top = module.split(".", 1)[0]
    if is_private(top):
        if top in DOCUMENTED_PRIVATE:
            return None
        return (
            f"imports '{module}', a private CPython module rather than a supported part "
            f"of the standard library; use its public counterpart or add '{top}' to allow"
        )
    table = module_table()
    span = table.get(top)
    if span is None:
        alt = alternative(top, target)
        if top == "typing_extensions":
            hint = "use typing instead (it has most of the same names), or add it to allow"
        elif alt:
            hint = f"use {alt} instead or add '{top}' to allow"
        else:
            hint = (
                f"use the standard library instead, or add '{top}' to allow if readers install it"
            )
        return f"imports '{module}', which is not in the {version} standard library; {hint}"
    if not span.has(target):
        why = _absence(span, target)
        if span.since > target:
            return f"imports '{module}', {why}; raise the target or use another module"
        return f"imports '{module}', {why} (the target is {version}); {replacement(top)}"
    # Each dotted prefix the tables know must exist too ('os.path' is not a file: unknown).
    parts = module.split(".")
    for cut in range(2, len(parts) + 1):
        name = ".".join(parts[:cut])
        sub = table.get(name)
        if sub is None:
            break
        if not sub.has(target):
            return f"imports '{name}', {_absence(sub, target)}"
    return None


def _submodules(module: str, names: tuple[str, ...], target: int) -> str | None:
    """``from concurrent import interpreters``: a submodule imported by name."""
    table, spans = module_table(), name_table().spans
    for name in names:
        if (module, name) in spans:
            continue  # a member: checked as a name
        sub = table.get(f"{module}.{name}")
        if sub is not None and not sub.has(target):
            return f"imports '{module}.{name}', {_absence(sub, target)}"
    return None


def _typing_extensions(names: tuple[str, ...], target: int) -> str:
    """Name the standard-library home of each typing_extensions name, where there is one."""
    homes = name_table().typing
    use: list[str] = []
    later: list[str] = []
    none: list[str] = []
    for name in names:
        home = homes.get(name)
        if home is None:
            none.append(name)
        elif home[1].has(target):
            use.append(f"'from {home[0]} import {name}'")
        else:
            later.append(f"{home[0]}.{name} (Python 3.{home[1].since})")
    parts = []
    if use:
        parts.append("use " + ", ".join(use) + f" (Python 3.{target} has it)")
    if later:
        parts.append(
            f"Python 3.{target} lacks " + ", ".join(later) + ": raise the target, or add "
            "'typing_extensions' to allow"
        )
    if none:
        parts.append(
            ", ".join(f"'{n}'" for n in none) + " has no standard-library counterpart: "
            "add 'typing_extensions' to allow"
        )
    return (
        "imports from 'typing_extensions', a third-party backport that is not in the "
        "standard library; " + "; ".join(parts)
    )
