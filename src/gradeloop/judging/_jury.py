"""Jury: several judges, ideally of different model families, deciding each key together.

One judge's verdict carries its noise and its family's biases (self-preference above
all; docs/judging.md). A jury asks each member, lets the members that answered vote
per key (:mod:`._votes`), and fails closed on a tie or too few answers, saying why.
A member that raises (an API error, a refusal, an invalid reply) abstains and is
named; a jury below its quorum is a :class:`~gradeloop.errors.JudgeError` with every
member's failure.

It is itself a judge (``evaluate`` / ``aevaluate`` / ``prefer`` / ``aprefer``), so it
goes wherever a judge goes: :func:`~gradeloop.grade`, :func:`~gradeloop.grade_many`,
the loop, :func:`~gradeloop.judging.compare_drafts`.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import functools
import inspect
from collections import Counter
from collections.abc import Awaitable, Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

from ..errors import JudgeError
from ..grading._agrade import evaluate_async
from ..grading._drivers import adrive, drive
from ..grading._grade import call_judge, judge_answer
from ..grading._rubric import Criterion
from ..grading._samples import doubtful_keys
from ..grading._verdict import Verdict
from ._choices import CHOICES, Choice, Choices
from ._preference import _aask, _ask
from ._votes import JuryVerdict, Policy, jury_verdict

__all__ = ["Jury", "On"]

On = Literal["all", "doubtful"]
T = TypeVar("T")
# A question the jury asks: these members, about these keys (answered with each
# member's outcome, in order).
_Ask = tuple[Sequence[Any], Sequence[Criterion]]


class Jury:
    """A judge made of judges: each key is decided by the members' votes.

    ``policy="majority"`` (default): a key is met when more than half of the members
    that answered say met (a scored key: its score reaches the threshold); a tie is
    not met. ``policy="median"``: scored keys take the median score, rounded down.
    ``quorum`` (default: a majority of all members) is how many must answer: fewer,
    and the key fails closed with the reason (or, when fewer members answered at all,
    the evaluation raises :class:`~gradeloop.errors.JudgeError` naming each one's
    failure). A member that raises abstains.

    ``on="all"`` asks every member about every key (one request per member, sent at
    once). ``on="doubtful"`` asks the first member, then the others only about the
    keys it failed or scored within ``margin`` of the threshold (so a clear pass costs
    one request); if the first member fails, every member is asked.

    The verdict is a :class:`~gradeloop.judging._votes.JuryVerdict`: per key the votes
    by member, the inter-judge agreement (``CriterionResult.agreement``), members'
    self-agreement when they sample, and who abstained. ``names`` labels the members
    (default: each one's ``name``, else its ``model``, else its class).

    >>> jury = Jury([AnthropicJudge(model="claude-sonnet-4-5"),            # doctest: +SKIP
    ...              OpenAICompatibleJudge(base_url=URL, model="qwen3-32b")])
    """

    def __init__(
        self,
        judges: Sequence[Any],
        *,
        policy: Policy = "majority",
        on: On = "all",
        quorum: int | None = None,
        margin: float = 1.0,
        names: Sequence[str] | None = None,
    ) -> None:
        members = list(judges)
        if not members:
            raise ValueError("a Jury needs at least one judge")
        for j in members:
            if not any(callable(getattr(j, m, None)) for m in ("evaluate", "prefer")):
                raise TypeError(
                    f"{type(j).__name__} is not a judge: it has neither evaluate() nor prefer()"
                )
        if policy not in ("majority", "median"):
            raise ValueError(f"policy must be 'majority' or 'median', not {policy!r}")
        if on not in ("all", "doubtful"):
            raise ValueError(f"on must be 'all' or 'doubtful', not {on!r}")
        n = len(members)
        if quorum is None:
            quorum = n // 2 + 1
        if isinstance(quorum, bool) or not isinstance(quorum, int) or not 1 <= quorum <= n:
            raise ValueError(
                f"quorum must be an integer from 1 to {n} (the judges), not {quorum!r}"
            )
        if not margin >= 0:
            raise ValueError(f"margin must be a number >= 0, not {margin!r}")
        self.judges = tuple(members)
        self.policy: Policy = policy
        self.on: On = on
        self.quorum = quorum
        self.margin = float(margin)
        self.names = _names(members, names)

    def __repr__(self) -> str:
        return (
            f"Jury({list(self.names)!r}, policy={self.policy!r}, on={self.on!r}, "
            f"quorum={self.quorum})"
        )

    @property
    def model(self) -> str:
        """The members' names, for the records that name a judge's model."""
        return "jury(" + ", ".join(self.names) + ")"

    @property
    def models(self) -> tuple[str | None, ...]:
        """Each member's ``model`` (None for a member without one)."""
        return tuple(getattr(j, "model", None) for j in self.judges)

    @property
    def cache(self) -> Any:
        """The verdict cache the members share (None when none was given)."""
        return getattr(self, "_cache", None)

    @cache.setter
    def cache(self, cache: Any) -> None:
        # each member that takes a cache gets a copy of itself with this one, so a jury
        # copied to hold a run's cache (grade_many's cache=) leaves the caller's alone
        members = []
        for j in self.judges:
            if hasattr(j, "cache"):
                j = copy.copy(j)
                j.cache = cache
            members.append(j)
        self.judges = tuple(members)
        self._cache = cache

    @property
    def calls(self) -> list[Any]:
        """Every member's call records, member after member."""
        return [c for j in self.judges for c in getattr(j, "calls", ())]

    # -- evaluate -----------------------------------------------------------------------

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """Each member's verdict on the judge-filled keys of ``criteria``, decided per key."""
        flow = self._evaluation(_judged(criteria))
        return drive(flow, functools.partial(_answers, task=task, draft=draft))

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """:meth:`evaluate`, the members asked at once (``aevaluate`` where they have it)."""
        flow = self._evaluation(_judged(criteria))
        return await adrive(flow, functools.partial(_aanswers, task=task, draft=draft))

    def _evaluation(self, judged: list[Criterion]) -> Generator[_Ask, list[Any], JuryVerdict]:
        """The verdict, decided once for both drivers: yields which members to ask about
        which keys, and is sent each one's outcome (its Verdict, or the JudgeError it
        raised), in member order.

        ``on="all"``: every member about every key. ``on="doubtful"``: the first member;
        if it fails, every other member about every key; else the others only about
        the keys it failed or scored within ``margin`` of the threshold (none: no
        other request), the rest decided by the first member alone.
        """
        if self.on == "all":
            return self._decide(judged, (yield (self.judges, judged)))
        first, *_ = yield (self.judges[:1], judged)
        if not isinstance(first, Verdict):
            return self._decide(judged, [first, *(yield (self.judges[1:], judged))])
        keys = set(doubtful_keys(judged, first, self.margin))
        subset = [c for c in judged if c.key in keys]
        rest = (yield (self.judges[1:], subset)) if subset else []
        return self._decide(judged, [first, *rest], exempt=frozenset(c.key for c in judged) - keys)

    def decide(self, criteria: Sequence[Criterion], outcomes: Sequence[Any]) -> JuryVerdict:
        """The verdict from each member's answer about every judge-filled key of
        ``criteria``, in member order: its :class:`~gradeloop.Verdict` (read as strictly
        as :meth:`evaluate` reads a member's answer: an invalid one abstains), or the
        :class:`~gradeloop.errors.JudgeError` it failed with (it abstains, named).

        Decided as :meth:`evaluate` decides with ``on="all"`` (same votes, ties, quorum);
        raises ``JudgeError(reason="no_quorum")`` as it does. Message Batches collect a
        jury's answers this way: every member was asked every key, so a jury built with
        ``on="doubtful"`` gets a verdict whose ``requested_on`` records it.
        """
        judged = _judged(criteria)
        if len(outcomes) != len(self.judges):
            raise ValueError(
                f"one outcome per judge: {len(self.judges)} judges, {len(outcomes)} outcomes"
            )
        read = [_strict(o, judged) if isinstance(o, Verdict) else o for o in outcomes]
        verdict = self._decide(judged, read, on="all")
        if self.on != "all":
            verdict.requested_on = self.on
        return verdict

    def _decide(
        self,
        judged: Sequence[Criterion],
        outcomes: Sequence[Any],
        exempt: frozenset[str] = frozenset(),
        on: On | None = None,
    ) -> JuryVerdict:
        """The verdict from each member's outcome (a Verdict, or the JudgeError it raised)."""
        answers: dict[str, Verdict] = {}
        abstained: dict[str, str] = {}
        for name, outcome in zip(self.names, outcomes, strict=False):
            if isinstance(outcome, Verdict):
                answers[name] = outcome
            else:
                abstained[name] = f"{getattr(outcome, 'reason', 'error')}: {outcome}"
        if not answers or (not exempt and len(answers) < self.quorum):
            raise _no_quorum(len(answers), len(self.judges), self.quorum, abstained)
        return jury_verdict(
            judged,
            answers,
            abstained,
            policy=self.policy,
            on=on or self.on,
            quorum=self.quorum,
            quorum_exempt=exempt,
        )

    # -- prefer -------------------------------------------------------------------------

    def prefer(self, task: str, first: str, second: str, criteria: Sequence[Criterion]) -> Choices:
        """Each member's pairwise answer, decided per key by majority (anything short
        of a majority of the members that answered is a tie)."""
        judged = _judged(criteria)
        found = _parallel(
            [functools.partial(_ask, j, task, first, second, judged) for j in self.judges]
        )
        return self._vote(judged, found)

    async def aprefer(
        self, task: str, first: str, second: str, criteria: Sequence[Criterion]
    ) -> Choices:
        """:meth:`prefer`, the members asked at once."""
        judged = _judged(criteria)
        found = await _gather([_aask(j, task, first, second, judged) for j in self.judges])
        return self._vote(judged, found)

    def _vote(self, judged: Sequence[Criterion], outcomes: Sequence[Any]) -> Choices:
        answers = {
            n: o for n, o in zip(self.names, outcomes, strict=True) if isinstance(o, Choices)
        }
        abstained = {
            n: f"{getattr(o, 'reason', 'error')}: {o}"
            for n, o in zip(self.names, outcomes, strict=True)
            if not isinstance(o, Choices)
        }
        if len(answers) < self.quorum:
            raise _no_quorum(len(answers), len(self.judges), self.quorum, abstained)
        out: dict[str, Choice] = {}
        for c in judged:
            counts = Counter(a[c.key] for a in answers.values())
            top: Choice = next((x for x in CHOICES if counts[x] * 2 > len(answers)), "tie")
            out[c.key] = top
        reasoning = "\n\n".join(f"[{n}] {a.reasoning}" for n, a in answers.items())
        return Choices(out, reasoning=reasoning)

    async def aclose(self) -> None:
        """Close each member's async client (those that have one)."""
        for j in self.judges:
            closer = getattr(j, "aclose", None)
            if closer is not None and inspect.iscoroutinefunction(closer):
                await closer()


def _answers(ask: _Ask, task: str, draft: str) -> list[Any]:
    """The outcome of each member asked (blocking: more than one, each in a thread)."""
    members, criteria = ask
    return _parallel([functools.partial(call_judge, j, task, draft, criteria) for j in members])


async def _aanswers(ask: _Ask, task: str, draft: str) -> list[Any]:
    """:func:`_answers`, awaited: every member at once."""
    members, criteria = ask
    return await _gather([evaluate_async(j, task, draft, criteria) for j in members])


def _judged(criteria: Sequence[Criterion]) -> list[Criterion]:
    judged = [c for c in criteria if c.source == "judge"]
    if not judged:
        raise ValueError("no judge-filled criteria to evaluate; every key given has a checker")
    return judged


def _strict(verdict: Verdict, judged: Sequence[Criterion]) -> Verdict | JudgeError:
    """A member's verdict read as call_judge reads it, or the JudgeError it makes."""
    try:
        return judge_answer(verdict, judged)
    except JudgeError as exc:
        return exc


def _names(members: Sequence[Any], given: Sequence[str] | None) -> tuple[str, ...]:
    if given is not None:
        names = [str(n) for n in given]
        if len(names) != len(members) or len(set(names)) != len(names):
            raise ValueError("names must give each judge its own name, one per judge")
        return tuple(names)
    out: list[str] = []
    for j in members:
        base = str(getattr(j, "name", None) or getattr(j, "model", None) or type(j).__name__)
        name, n = base, 1
        while name in out:
            n += 1
            name = f"{base}#{n}"
        out.append(name)
    return tuple(out)


def _outcome(ask: Callable[[], T]) -> T | JudgeError:
    """What ``ask()`` returned, or the JudgeError it raised (a member that abstains)."""
    try:
        return ask()
    except JudgeError as exc:
        return exc


async def _aoutcome(ask: Awaitable[T]) -> T | JudgeError:
    """:func:`_outcome`, awaited."""
    try:
        return await ask
    except JudgeError as exc:
        return exc


def _parallel(asks: Sequence[Callable[[], T]]) -> list[T | JudgeError]:
    """Each ask's outcome, in order: one ask in this thread, more each in its own (with
    a copy of this context, so call meters see its calls)."""
    if len(asks) < 2:
        return [_outcome(ask) for ask in asks]
    with ThreadPoolExecutor(max_workers=len(asks)) as pool:
        futures = [pool.submit(contextvars.copy_context().run, _outcome, ask) for ask in asks]
        return [f.result() for f in futures]


async def _gather(asks: Sequence[Awaitable[T]]) -> list[T | JudgeError]:
    """Each ask's outcome, awaited at once, in order."""
    return list(await asyncio.gather(*(_aoutcome(ask) for ask in asks)))


def _no_quorum(answered: int, total: int, quorum: int, abstained: dict[str, str]) -> JudgeError:
    who = "; ".join(f"{name} abstained ({why})" for name, why in abstained.items())
    return JudgeError(
        f"the jury has too few answers: {answered} of {total} judges answered, the quorum "
        f"is {quorum}" + (f": {who}" if who else ""),
        reason="no_quorum",
    )
