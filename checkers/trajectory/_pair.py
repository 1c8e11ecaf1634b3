"""Pairing the calls made with the calls expected, order aside: a maximum matching.

A call and an expected call can pair when their names are equal and their arguments
relate under the ``args`` mode (:func:`._args.relates`); an expected call without
``args`` pairs with any call of its tool. The pairing is as large as it can be, so
the outcome never depends on the order calls are listed in (a first-fit pairing
can leave a call unpaired that a different choice would have paired).

Linear time: calls are grouped by tool name; ``exact`` and ``ignore`` pair by hashed
keys; identical arguments pair at once under ``subset`` / ``superset`` too (that
never makes the matching smaller). What remains of a tool under ``subset`` /
``superset`` is matched by augmenting paths, within a budget of ``WORK_LIMIT``
comparisons for the whole check; past it the check fails and says so rather than
run for minutes on a hostile transcript.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gradeloop.grading import ToolCall

from ._args import ArgsMode, canon, relates

__all__ = ["WORK_LIMIT", "Pairing", "TooMuchWork", "Want", "pair"]

#: Argument comparisons (and matching steps) one check may spend pairing calls by
#: ``subset`` / ``superset`` arguments; about a tenth of a second.
WORK_LIMIT = 200_000


@dataclass(frozen=True)
class Want:
    """An expected call: the tool's name and its arguments (None: any arguments).
    ``index`` is its place in the expected list."""

    name: str
    args: dict[str, Any] | None
    index: int


@dataclass(frozen=True)
class Pairing:
    """Which calls and which expected calls found no partner (as index lists)."""

    unpaired_calls: list[int]
    unpaired_wants: list[int]

    @property
    def perfect(self) -> bool:
        return not self.unpaired_calls and not self.unpaired_wants


class TooMuchWork(Exception):
    """The pairing of one tool's calls needed more than :data:`WORK_LIMIT` steps."""

    def __init__(self, name: str, calls: int, wants: int) -> None:
        self.name, self.calls, self.wants = name, calls, wants
        super().__init__(name)


class _OutOfBudget(Exception):
    pass


def pair(calls: Sequence[ToolCall], wants: Sequence[Want], mode: ArgsMode) -> Pairing:
    """A largest pairing of ``calls`` with ``wants``; raises :class:`TooMuchWork`."""
    by_name_calls: dict[str, list[int]] = defaultdict(list)
    by_name_wants: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(calls):
        by_name_calls[c.name].append(i)
    for j, w in enumerate(wants):
        by_name_wants[w.name].append(j)
    job = _Job(calls, wants, mode, WORK_LIMIT)
    free_calls: list[int] = []
    free_wants: list[int] = []
    for name in by_name_calls.keys() | by_name_wants.keys():
        cs, ws = by_name_calls.get(name, []), by_name_wants.get(name, [])
        left_c, left_w = _pair_tool(name, cs, ws, job)
        free_calls += left_c
        free_wants += left_w
    return Pairing(sorted(free_calls), sorted(free_wants))


@dataclass
class _Job:
    """What one pairing works on, and the work it may still spend."""

    calls: Sequence[ToolCall]
    wants: Sequence[Want]
    mode: ArgsMode
    budget: int


def _pair_tool(name: str, cs: list[int], ws: list[int], job: _Job) -> tuple[list[int], list[int]]:
    """One tool's calls and wants: the ones left without a partner."""
    calls, wants, mode = job.calls, job.wants, job.mode
    if not cs or not ws:
        return cs, ws
    wild = [j for j in ws if mode == "ignore" or wants[j].args is None]
    keyed = [j for j in ws if not (mode == "ignore" or wants[j].args is None)]
    # identical arguments pair first: a sound first step for every mode (module doc)
    waiting: dict[str, list[int]] = defaultdict(list)
    for j in reversed(keyed):
        waiting[canon(wants[j].args)].append(j)
    rest_c = []
    for i in cs:
        same = waiting.get(canon(calls[i].args))
        if same:
            same.pop()
        else:
            rest_c.append(i)
    rest_w = sorted(j for js in waiting.values() for j in js)
    if mode in ("subset", "superset") and rest_c and rest_w:
        rest_c, rest_w = _augment(name, rest_c, rest_w, job)
    # what is left takes the wildcards: any call of the tool will do for them
    taken = min(len(rest_c), len(wild))
    return rest_c[taken:], sorted(rest_w + wild[taken:])


def _augment(name: str, cs: list[int], ws: list[int], job: _Job) -> tuple[list[int], list[int]]:
    """Maximum bipartite matching (augmenting paths) of the calls and wants left."""
    if len(cs) * len(ws) > job.budget:
        raise TooMuchWork(name, len(cs), len(ws))
    job.budget -= len(cs) * len(ws)
    calls, wants, mode = job.calls, job.wants, job.mode
    edges = [[i for i in cs if relates(mode, calls[i].args, wants[j].args)] for j in ws]
    owner: dict[int, int] = {}  # call -> position in ws of the want it serves
    unserved = []
    for k, reach in enumerate(edges):  # first each want takes a free call if it can: O(E)
        free = next((i for i in reach if i not in owner), None)
        if free is None:
            unserved.append(k)
        else:
            owner[free] = k
    try:
        for k in unserved:  # then augmenting paths, for the wants still without one
            _path(k, edges, owner, job)
    except _OutOfBudget:
        raise TooMuchWork(name, len(cs), len(ws)) from None
    served = set(owner.values())
    return [i for i in cs if i not in owner], [ws[k] for k in range(len(ws)) if k not in served]


def _path(start: int, edges: list[list[int]], owner: dict[int, int], job: _Job) -> bool:
    """Find an augmenting path from want ``start`` (iteratively) and apply it."""
    seen: set[int] = set()
    stack: list[tuple[int, int]] = [(start, 0)]  # (want, next edge to try)
    via: dict[int, int] = {}  # want -> the call it would take on the path
    while stack:
        k, e = stack[-1]
        if e >= len(edges[k]):
            stack.pop()
            continue
        stack[-1] = (k, e + 1)
        job.budget -= 1
        if job.budget < 0:
            raise _OutOfBudget
        i = edges[k][e]
        if i in seen:
            continue
        seen.add(i)
        via[k] = i
        holder = owner.get(i)
        if holder is None:  # a free call: flip the path
            for want, _ in stack:
                owner[via[want]] = want
            return True
        stack.append((holder, 0))
    return False
