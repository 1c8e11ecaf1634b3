"""The "best" return policy, written once for every loop engine.

Which judged draft a loop stands behind when it returns one: an accepted draft
before any that was not, then the higher weighted overall score, ties to the
latest. A draft that was never judged is never the best (it has no rank). So if
any judged draft was accepted, the one returned is accepted, and a run of all
failures still returns its last draft when the scores tie.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from ._result import Iteration

__all__ = ["Rank", "best_of", "iteration_rank"]

T = TypeVar("T")

#: ``(accepted, overall_score)`` of a judged draft; None for one never judged.
Rank = tuple[bool, float] | None


def best_of(items: Iterable[T], rank: Callable[[T], Rank]) -> T | None:
    """The best of ``items`` by ``rank`` (accepted first, then score, ties to the
    latest), or None when none was judged."""
    best: T | None = None
    best_rank: tuple[bool, float] | None = None
    for item in items:
        r = rank(item)
        if r is not None and (best_rank is None or r >= best_rank):
            best, best_rank = item, r
    return best


def iteration_rank(it: Iteration) -> Rank:
    """The rank of a loop iteration: None when its draft was not judged."""
    ev = it.evaluation
    return None if ev is None else (ev.accepted, ev.overall_score or 0.0)
