"""Many pairs compared at once, and how much the judge's answers follow the position.

Each judge key of each pair is asked in both orders, so every comparison says
something about the judge itself: a consistent judge picks the same *draft* both
times; a position-biased one picks the same *position* (the draft shown first, say)
both times, which means two different drafts. :class:`PositionBias` counts those
over a batch (MT-Bench's consistency measure; docs/judging.md).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from ..errors import InputError
from ..grading._calls import judge_calls
from ..grading._drivers import adrive, blocking
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ._preference import Preference, _check_judge, _rubric, aperform, comparison

__all__ = [
    "PairItem",
    "PositionBias",
    "PreferenceBatch",
    "acompare_many",
    "compare_many",
    "position_bias",
]


@dataclass(frozen=True)
class PairItem:
    """Two drafts to compare, with their own task (else the batch's) and an id."""

    a: str
    b: str
    task: str | None = None
    id: str | None = None


PairLike = PairItem | tuple[str, str] | Sequence[str] | Mapping[str, Any]


def as_pair(item: PairLike, index: int) -> PairItem:
    """A :class:`PairItem` from a pair, a 2-sequence of strings or a mapping with
    ``a``, ``b`` (and optional ``task``, ``id``); anything else is an InputError."""
    if isinstance(item, PairItem):
        pair = item
    elif isinstance(item, Mapping):
        task, id_ = item.get("task"), item.get("id")
        pair = PairItem(item.get("a"), item.get("b"), task, None if id_ is None else str(id_))  # type: ignore[arg-type]
    elif isinstance(item, Sequence) and not isinstance(item, str | bytes) and len(item) == 2:
        pair = PairItem(item[0], item[1])
    else:
        raise InputError(f"pair {index}: give two drafts, (a, b) or {{'a': ..., 'b': ...}}")
    for name in ("a", "b"):
        if not isinstance(getattr(pair, name), str):
            raise InputError(f"pair {index}: {name!r} must be the draft's text (a string)")
    if pair.task is not None and not isinstance(pair.task, str):
        raise InputError(f"pair {index}: 'task' must be a string")
    return pair


@dataclass(frozen=True)
class PositionBias:
    """How the judge's answers over a batch depend on the drafts' positions.

    Counted per judge key of each pair that both orders answered: ``consistent``
    comparisons chose the same draft (or a tie) both times; ``first_both`` chose the
    draft shown **first** both times (so a different draft each time), ``second_both``
    the one shown second both times; the rest answered tie in one order only.
    """

    comparisons: int = 0
    consistent: int = 0
    first_both: int = 0
    second_both: int = 0

    @property
    def consistency(self) -> float | None:
        """The share of comparisons both orders agreed on (None with none)."""
        return self.consistent / self.comparisons if self.comparisons else None

    @property
    def rate(self) -> float | None:
        """The share of comparisons decided by position: the same position chosen in
        both orders (0 for an unbiased judge; None with no comparisons)."""
        if not self.comparisons:
            return None
        return (self.first_both + self.second_both) / self.comparisons

    @property
    def favours(self) -> Literal["first", "second"] | None:
        """The position the judge leans to, when it leans."""
        if self.first_both == self.second_both:
            return None
        return "first" if self.first_both > self.second_both else "second"

    def to_json(self) -> dict[str, Any]:
        """The counts and the two shares (rounded), JSON-ready."""
        return {
            "comparisons": self.comparisons,
            "consistent": self.consistent,
            "first_both": self.first_both,
            "second_both": self.second_both,
            "consistency": None if self.consistency is None else round(self.consistency, 4),
            "rate": None if self.rate is None else round(self.rate, 4),
            "favours": self.favours,
        }


def position_bias(preferences: Iterable[Preference]) -> PositionBias:
    """The :class:`PositionBias` of the judge over ``preferences`` (failed ones skipped)."""
    n = same = first = second = 0
    for p in preferences:
        if p.error is not None:
            continue
        for ab, ba in p.orders.values():
            n += 1
            same += ab == ba
            # a shown first said "a" and b shown first said "b": the first draft both times
            first += ab == "a" and ba == "b"
            second += ab == "b" and ba == "a"
    return PositionBias(n, same, first, second)


@dataclass(frozen=True)
class PreferenceBatch(Sequence[Preference]):
    """The preferences of :func:`compare_many`, in input order, with the judge's
    :attr:`position_bias` over the whole batch."""

    preferences: tuple[Preference, ...]
    ids: tuple[str, ...]

    @overload
    def __getitem__(self, index: int) -> Preference: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Preference]: ...

    def __getitem__(self, index: int | slice) -> Preference | Sequence[Preference]:
        return self.preferences[index]

    def __len__(self) -> int:
        return len(self.preferences)

    def __iter__(self) -> Iterator[Preference]:
        return iter(self.preferences)

    @property
    def position_bias(self) -> PositionBias:
        """The judge's position bias over every pair that was answered."""
        return position_bias(self.preferences)

    @property
    def requests(self) -> int:
        """Judge requests sent for the whole batch."""
        return sum(p.requests for p in self.preferences)

    def to_json(self) -> dict[str, Any]:
        """``{"pairs": [{"id", ...preference}], "position_bias": {...}, "requests": n}``."""
        return {
            "pairs": [
                {"id": i, **p.to_json()} for i, p in zip(self.ids, self.preferences, strict=True)
            ],
            "position_bias": self.position_bias.to_json(),
            "requests": self.requests,
        }


async def acompare_many(
    pairs: Iterable[PairLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Any = None,
    concurrency: int = 8,
    registry: Registry | None = None,
) -> PreferenceBatch:
    """:func:`~gradeloop.judging.compare_drafts` for many pairs, ``concurrency`` pairs at once
    (each asks its two orders at once). A pair whose judge fails gets a failed
    :class:`Preference` (``error`` set, its judge keys ties) instead of raising; it is
    left out of the position-bias figure."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InputError(f"concurrency must be an integer >= 1, not {concurrency!r}")
    rub = _rubric(rubric, registry)
    items = [as_pair(p, i) for i, p in enumerate(pairs)]
    if rub.judge_criteria:
        _check_judge(judge, rub.judge_criteria)
    gate = asyncio.Semaphore(concurrency)

    async def one(item: PairItem) -> Preference:
        async with gate:
            return await _one(item, rub, task, judge, registry)

    found = await asyncio.gather(*(one(item) for item in items))
    ids = tuple(item.id if item.id is not None else str(i) for i, item in enumerate(items))
    return PreferenceBatch(tuple(found), ids)


async def _one(
    item: PairItem, rub: Rubric, task: str, judge: Any, registry: Registry | None
) -> Preference:
    kw = {"task": item.task if item.task is not None else task, "registry": registry}
    with judge_calls() as calls:
        flow = comparison(rub, item.a, item.b, calls, keep_failure=True)
        return await adrive(flow, functools.partial(aperform, rub, judge, kw))


def compare_many(
    pairs: Iterable[PairLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Any = None,
    concurrency: int = 8,
    registry: Registry | None = None,
) -> PreferenceBatch:
    """:func:`acompare_many`, blocking, on an event loop of its own; the judge's async
    client is closed at the end. Called inside a running event loop (asyncio code,
    Jupyter), that loop runs in a worker thread while the caller waits (the rule of
    every sync function that runs an event loop; ``await acompare_many(...)`` there
    to keep the caller's loop free)."""

    async def run() -> PreferenceBatch:
        try:
            return await acompare_many(
                pairs, rubric, task=task, judge=judge, concurrency=concurrency, registry=registry
            )
        finally:
            closer = getattr(judge, "aclose", None)
            if closer is not None:  # the async client this event loop used
                await closer()

    return blocking(run)
