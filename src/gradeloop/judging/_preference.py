"""compare_drafts(): which of two drafts is better, key by key, asked in both orders.

A judge shown two drafts tends to prefer one *position* (MT-Bench measured 12.9 % of
verdicts flipping when the order was swapped; docs/judging.md has the sources). So
every judge key is asked twice, ``a`` shown first and then ``b`` shown first, and a
key counts for a draft only when both orders chose it; where the two orders disagree
the key is a tie and marked inconsistent. Code keys are compared by their checkers
(a met key beats an unmet one; then the higher score), never by the judge.

The winner is the draft whose won keys weigh more (the rubric's weights); equal
weights, or no key won, is a tie.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigError, GradeloopError, JudgeError, JudgeRequiredError
from ..errors._redact import scrub_chain
from ..grading._calls import judge_calls
from ..grading._drivers import adrive, drive
from ..grading._grade import CriterionResult, run_checks, start_plan
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._strict import WireError
from ._choices import Choice, Choices, read_choices

__all__ = [
    "Preference",
    "Side",
    "acompare_drafts",
    "aperform",
    "aprefer_both",
    "build_preference",
    "code_results",
    "compare_drafts",
    "comparison",
    "perform",
    "prefer_both",
]

Side = Literal["a", "b", "tie"]
_AS_A: dict[Choice, Side] = {"first": "a", "second": "b", "tie": "tie"}  # a shown first
_AS_B: dict[Choice, Side] = {"first": "b", "second": "a", "tie": "tie"}  # b shown first


@dataclass(frozen=True)
class Preference:
    """Which of two drafts is better, per key and overall.

    ``by_key`` maps every rubric key to ``"a"``, ``"b"`` or ``"tie"``; ``winner`` is
    the draft whose won keys weigh more. ``consistent`` maps each key to whether both
    orders gave the same answer (False makes that key a tie; a code key is always
    consistent; a failed preference leaves its judge keys out). ``orders`` holds
    each judge key's two answers in a/b terms, ``(a shown first, b shown first)``;
    ``sources`` says who compared each key (``"code"`` or ``"judge"``) and
    ``details`` how a code key came out. ``reasoning`` is the judge's, per order.
    ``calls`` holds the judge's call records; ``error`` is set (and every judge key a
    tie) on the failed preference :func:`~gradeloop.judging.compare_many` gives for a pair
    whose judge failed.
    """

    by_key: dict[str, Side]
    winner: Side
    consistent: dict[str, bool]
    orders: dict[str, tuple[Side, Side]] = field(default_factory=dict)
    sources: dict[str, Literal["code", "judge"]] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    reasoning: tuple[str, str] = ("", "")
    calls: tuple[Any, ...] = ()
    error: str | None = None

    @property
    def inconsistent(self) -> tuple[str, ...]:
        """The judge keys whose two orders disagreed (each counted as a tie)."""
        return tuple(k for k, ok in self.consistent.items() if not ok)

    @property
    def requests(self) -> int:
        """How many requests the judge sent (answers from the verdict cache not counted)."""
        return sum(1 for c in self.calls if not getattr(c, "cached", False))

    @property
    def usage(self) -> Any:
        """The judge's token usage behind this preference; None when no call was seen."""
        usages = [c.usage for c in self.calls if getattr(c, "usage", None) is not None]
        if not usages:
            return None
        total = usages[0]
        for u in usages[1:]:
            total = total + u
        return total

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: winner, per key (choice, source, consistent, orders), error."""
        keys = []
        for key, choice in self.by_key.items():
            entry: dict[str, Any] = {"key": key, "choice": choice, "source": self.sources.get(key)}
            if key in self.consistent:
                entry["consistent"] = self.consistent[key]
            if key in self.orders:
                entry["a_first"], entry["b_first"] = self.orders[key]
            if key in self.details:
                entry["detail"] = self.details[key]
            keys.append(entry)
        usage = self.usage
        out: dict[str, Any] = {
            "winner": self.winner,
            "keys": keys,
            "inconsistent": list(self.inconsistent),
            "judge": {
                "requests": self.requests,
                "cost_usd": None if usage is None else usage.to_dict()["cost_usd"],
            },
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def _rubric(rubric: Rubric | Mapping[str, Any], registry: Registry | None) -> Rubric:
    return rubric if isinstance(rubric, Rubric) else Rubric.from_dict(rubric, registry=registry)


def code_results(
    draft: str,
    rubric: Rubric,
    *,
    task: str,
    registry: Registry | None,
    reference: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, CriterionResult]:
    """The code-filled keys' results on ``draft`` (the checkers only; no judge)."""
    plan = start_plan(
        draft,
        rubric,
        task=task,
        judge=None,
        skip_judge=True,
        registry=registry,
        reference=reference,
        metadata=metadata,
    )
    return dict(run_checks(plan).results)


def _code_side(ra: CriterionResult, rb: CriterionResult) -> tuple[Side, str]:
    """A met key beats an unmet one; between two of a kind, the higher score wins."""
    detail = f"a {_state(ra)}, b {_state(rb)}"
    if ra.passed != rb.passed:
        return ("a" if ra.passed else "b"), detail
    if ra.score != rb.score:
        return ("a" if ra.score > rb.score else "b"), detail
    return "tie", detail


def _state(r: CriterionResult) -> str:
    return f"{'met' if r.passed else 'not met'} ({r.score:g})"


def _check_judge(judge: Any, judged: Sequence[Criterion], *, method: str = "prefer") -> None:
    if judge is None:
        raise JudgeRequiredError(
            [c.key for c in judged],
            "pass judge= a judge with prefer() (AnthropicJudge, OpenAICompatibleJudge or "
            "a Jury of them), or give these criteria a checker",
        )
    if not callable(getattr(judge, method, None)):
        raise ConfigError(
            f"{type(judge).__name__} cannot compare drafts: it has no "
            f"{method}(task, first, second, criteria) method; AnthropicJudge, "
            "OpenAICompatibleJudge and Jury have it"
        )


def _read(raw: Any, judged: Sequence[Criterion]) -> Choices:
    try:
        return read_choices(raw, [c.key for c in judged])
    except WireError as exc:
        raise JudgeError(f"the judge's preference is invalid: {exc}", reason="invalid") from None


@contextmanager
def _judge_failures() -> Iterator[None]:
    """Any failure of the judge's ``prefer`` inside is a :class:`JudgeError` (api_error)."""
    try:
        yield
    except JudgeError:
        raise
    except GradeloopError as exc:
        scrub_chain(exc)  # chained below: it may quote a key
        raise JudgeError(f"the judge failed: {exc}", reason="api_error") from exc
    except Exception as exc:
        scrub_chain(exc)
        raise JudgeError(
            f"the judge raised {type(exc).__name__}: {exc}", reason="api_error"
        ) from exc


def _ask(judge: Any, task: str, first: str, second: str, judged: Sequence[Criterion]) -> Choices:
    """One order's answer, read strictly; any failure is a :class:`JudgeError`."""
    with _judge_failures():
        raw = judge.prefer(task, first, second, judged)
    return _read(raw, judged)


async def _aask(
    judge: Any, task: str, first: str, second: str, judged: Sequence[Criterion]
) -> Choices:
    """:func:`_ask`, awaiting ``aprefer`` (else ``prefer`` in a worker thread)."""
    method = getattr(judge, "aprefer", None)
    if method is None or not inspect.iscoroutinefunction(method):
        return await asyncio.to_thread(_ask, judge, task, first, second, judged)
    with _judge_failures():
        raw = await method(task, first, second, judged)
    return _read(raw, judged)


def prefer_both(
    judge: Any, task: str, a: str, b: str, judged: Sequence[Criterion]
) -> tuple[Choices, Choices]:
    """The judge's answers with ``a`` shown first, then with ``b`` shown first."""
    _check_judge(judge, judged)
    return _ask(judge, task, a, b, judged), _ask(judge, task, b, a, judged)


async def aprefer_both(
    judge: Any, task: str, a: str, b: str, judged: Sequence[Criterion]
) -> tuple[Choices, Choices]:
    """:func:`prefer_both`, both orders asked at once."""
    _check_judge(judge, judged)
    ab, ba = await asyncio.gather(
        _aask(judge, task, a, b, judged), _aask(judge, task, b, a, judged)
    )
    return ab, ba


def build_preference(
    rubric: Rubric,
    code_a: Mapping[str, CriterionResult],
    code_b: Mapping[str, CriterionResult],
    answers: tuple[Choices, Choices] | None,
    calls: Sequence[Any] = (),
    error: str | None = None,
) -> Preference:
    """The :class:`Preference` from the code keys' results on each draft and the judge's
    two answers (``(a shown first, b shown first)``; None when the judge was not asked
    or failed: its keys are then ties)."""
    by_key: dict[str, Side] = {}
    consistent: dict[str, bool] = {}
    orders: dict[str, tuple[Side, Side]] = {}
    sources: dict[str, Literal["code", "judge"]] = {}
    details: dict[str, str] = {}
    for c in rubric:
        sources[c.key] = c.source
        if c.source == "code":  # a checker gives one answer, whatever the order
            by_key[c.key], details[c.key] = _code_side(code_a[c.key], code_b[c.key])
            consistent[c.key] = True
            continue
        if answers is None:
            by_key[c.key] = "tie"
            continue
        first, second = _AS_A[answers[0][c.key]], _AS_B[answers[1][c.key]]
        orders[c.key] = (first, second)
        consistent[c.key] = first == second
        by_key[c.key] = first if first == second else "tie"
    return Preference(
        by_key=by_key,
        winner=_winner(rubric, by_key),
        consistent=consistent,
        orders=orders,
        sources=sources,
        details=details,
        reasoning=(answers[0].reasoning, answers[1].reasoning) if answers else ("", ""),
        calls=tuple(calls),
        error=error,
    )


def _winner(rubric: Rubric, by_key: Mapping[str, Side]) -> Side:
    weight = {"a": 0.0, "b": 0.0, "tie": 0.0}
    for c in rubric:
        weight[by_key[c.key]] += c.weight
    if abs(weight["a"] - weight["b"]) <= 1e-9 * max(1.0, weight["a"] + weight["b"]):
        return "tie"
    return "a" if weight["a"] > weight["b"] else "b"


def compare_drafts(
    a: str,
    b: str,
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Any = None,
    registry: Registry | None = None,
    reference: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Preference:
    """Which of ``a`` and ``b`` better meets ``rubric``, key by key.

    Every judge key is asked in both orders (two requests: ``judge.prefer(task, a, b,
    criteria)`` then ``judge.prefer(task, b, a, criteria)``); a key whose answers
    disagree is a tie, marked in ``Preference.consistent``. Code keys are compared by
    running their checkers on both drafts (met beats unmet, then the higher score).
    Two identical drafts tie on every key without asking the judge (none is needed).

    >>> pref = compare_drafts("short", "a longer draft", {"criteria": [
    ...     {"key": "brief", "description": "At most 1 word.", "checker": "length",
    ...      "options": {"max_words": 1}}]})
    >>> pref.by_key, pref.winner
    ({'brief': 'a'}, 'a')

    Raises :class:`~gradeloop.errors.JudgeRequiredError` when the rubric has judge keys
    and no judge was given, :class:`~gradeloop.errors.ConfigError` when the judge has
    no ``prefer``, and :class:`~gradeloop.errors.JudgeError` when it fails or answers
    invalidly (a missing key, or any value but ``"first"``, ``"second"``, ``"tie"``).
    """
    rub, kw = _prepared(rubric, judge, task, registry, reference, metadata, needed=a != b)
    with judge_calls() as calls:
        return drive(comparison(rub, a, b, calls), functools.partial(perform, rub, judge, kw))


async def acompare_drafts(
    a: str,
    b: str,
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Any = None,
    registry: Registry | None = None,
    reference: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Preference:
    """Async :func:`compare_drafts`: the two orders are asked at once (``aprefer`` when
    the judge has it, else ``prefer`` in worker threads), the checkers off the loop."""
    rub, kw = _prepared(rubric, judge, task, registry, reference, metadata, needed=a != b)
    with judge_calls() as calls:
        return await adrive(
            comparison(rub, a, b, calls), functools.partial(aperform, rub, judge, kw)
        )


# A step of a comparison: ("checks", a, b), answered with the code keys' results on
# each draft; ("prefer", a, b), answered with the judge's two answers (a shown first,
# then b shown first), or its JudgeError thrown in.
Need = tuple[Literal["checks", "prefer"], str, str]


def comparison(
    rubric: Rubric, a: str, b: str, calls: Sequence[Any], *, keep_failure: bool = False
) -> Generator[Need, Any, Preference]:
    """Which of ``a`` and ``b`` is better, decided once for every driver (see ``Need``).

    Two identical drafts tie on every judge key without asking the judge. A judge
    failure raises, or with ``keep_failure`` gives a failed :class:`Preference` (its
    judge keys ties, ``error`` set). ``calls`` is where the judge's call records
    collect (a :func:`judge_calls` list); the preference carries them.
    """
    code_a, code_b = yield ("checks", a, b)
    judged = rubric.judge_criteria
    answers: tuple[Choices, Choices] | None = None
    if judged and a == b:
        answers = _all_ties(judged)
    elif judged:
        try:
            answers = yield ("prefer", a, b)
        except JudgeError as exc:
            if not keep_failure:
                raise
            error = f"{exc.reason}: {exc}"
            return build_preference(rubric, code_a, code_b, None, tuple(calls), error)
    return build_preference(rubric, code_a, code_b, answers, tuple(calls))


def perform(rubric: Rubric, judge: Any, kw: dict[str, Any], need: Need) -> Any:
    """Do a comparison's step blocking: the checkers on each draft, or both orders
    asked one after the other. ``kw``: the checkers' keyword arguments (``task``...)."""
    kind, a, b = need
    if kind == "checks":
        return code_results(a, rubric, **kw), code_results(b, rubric, **kw)
    return prefer_both(judge, kw["task"], a, b, rubric.judge_criteria)


async def aperform(rubric: Rubric, judge: Any, kw: dict[str, Any], need: Need) -> Any:
    """:func:`perform`, awaited: the checkers in worker threads and both orders asked
    at once."""
    kind, a, b = need
    if kind == "checks":
        return await asyncio.gather(
            asyncio.to_thread(code_results, a, rubric, **kw),
            asyncio.to_thread(code_results, b, rubric, **kw),
        )
    return await aprefer_both(judge, kw["task"], a, b, rubric.judge_criteria)


def _prepared(
    rubric: Rubric | Mapping[str, Any],
    judge: Any,
    task: str,
    registry: Registry | None,
    reference: str | None,
    metadata: Mapping[str, Any] | None,
    *,
    needed: bool = True,
) -> tuple[Rubric, dict[str, Any]]:
    """The rubric, checked against the judge (when one is ``needed``: two identical
    drafts tie without one), and the checkers' keyword arguments."""
    rub = _rubric(rubric, registry)
    if rub.judge_criteria and needed:
        _check_judge(judge, rub.judge_criteria)
    return rub, {"task": task, "registry": registry, "reference": reference, "metadata": metadata}


def _all_ties(judged: Sequence[Criterion]) -> tuple[Choices, Choices]:
    same = Choices(dict.fromkeys((c.key for c in judged), "tie"), reasoning="identical drafts")
    return same, same
