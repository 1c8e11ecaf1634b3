"""How grade() learns which model calls stood behind a verdict.

The grading core sits below the model tier and must not import it, yet an
:class:`~gradeloop.Evaluation` should say what its judge calls cost and whether the
verdict came from the verdict cache. So the model tier installs its call meter
(``gradeloop.models._usage.metered``) here when it is imported; before that no model
call can have been made, and :func:`judge_calls` collects nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

__all__ = ["install_meter", "judge_calls"]

_meter: Callable[[], AbstractContextManager[Any]] | None = None


def install_meter(factory: Callable[[], AbstractContextManager[Any]]) -> None:
    """Set the context manager that collects call records (its value has ``.records``)."""
    global _meter
    _meter = factory


@contextmanager
def judge_calls() -> Iterator[list[Any]]:
    """The records of the model calls made in this thread or task inside the block."""
    if _meter is None:
        yield []
        return
    with _meter() as meter:
        yield meter.records
