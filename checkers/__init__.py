"""gradeloop's built-in checkers, packaged exactly as a third-party plugin would be.

The project's ``pyproject.toml`` registers this module in the ``gradeloop``
entry-point group under the name ``builtin``; gradeloop finds it the same way it
finds any other plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradeloop import hookimpl

from . import code_runs, json_checks, sentence_len, similarity, text, trajectory


@hookimpl
def register_checkers(register: Callable[..., Any]) -> None:
    for module in (code_runs, sentence_len, text, json_checks, trajectory, similarity):
        for name, fn in module.CHECKERS.items():
            register(name, fn)
