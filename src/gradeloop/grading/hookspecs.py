"""The hooks a gradeloop plugin can implement. Signatures and docstrings only.

A plugin is a module (or object) registered through the ``gradeloop`` entry-point
group, or in-process with :func:`gradeloop.checker`. Implementations are marked
with :data:`gradeloop.hookimpl`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("gradeloop")


@hookspec
def register_checkers(register: Callable[..., Any]) -> None:
    """Register the plugin's checkers.

    Called once, when gradeloop first needs a checker (loading is lazy). Call
    ``register(name, fn)`` for each checker, optionally with ``description="..."``.
    ``fn(text, **options)`` must return a :class:`gradeloop.CheckResult` (a bare
    ``bool`` is wrapped). Its keyword parameters are its options: gradeloop checks a
    rubric's ``options`` against their names, defaults and type annotations when
    the rubric loads. The return value of this hook is ignored.

    A checker that also needs the task, a reference answer or per-draft metadata
    declares a keyword parameter named ``context``: it is then called as
    ``fn(text, **options, context=CheckContext(task, reference, metadata))``. The
    ``context`` parameter is never a rubric option. A checker that does not
    declare it (``**kwargs`` alone does not count) is called exactly as before,
    so existing plugins need no change.
    """
