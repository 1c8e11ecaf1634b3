"""Grading the drafts of compare and calibrate, one at a time or many at once.

Both reports need, per draft, its evaluation, the judge calls that produced it and,
when the judge failed, why - with the draft's code keys still graded (its judge
sides then count as skipped). With ``jobs`` above 1 the drafts are graded through
:func:`gradeloop.grade_many` (bounded concurrency, slowed together on 429/529); the
results are the same, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..bulk._many import grade_many
from ..errors import JudgeError
from ..grading._grade import Evaluation, Judge, grade
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..models._usage import metered

__all__ = ["Graded", "graded", "server_down"]


def server_down(exc: JudgeError, *, judged_before: int) -> bool:
    """Whether a judge failure means the model server is not there: its API failed
    (after the client's retries) before any draft was judged. Grading every other
    draft would only fail the same way, slowly."""
    return exc.reason == "api_error" and judged_before == 0


@dataclass(frozen=True)
class Graded:
    """One draft's evaluation (ids set), the judge's call records, and its failure."""

    evaluation: Evaluation
    records: Sequence[Any]
    error: str | None = None


def graded(
    items: Iterable[Any],
    rubric: Rubric,
    *,
    judge: Judge | None,
    registry: Registry | None,
    jobs: int = 1,
    judges: Sequence[Judge] | None = None,
) -> Iterator[tuple[Any, Graded]]:
    """Each item with its :class:`Graded`, in input order.

    ``judges``, when given, holds each item's own judge (in item order), used in place
    of ``judge``; ``jobs`` above 1 then grades that many items at once in threads.
    Raises the :class:`JudgeError` when the judge's API fails before any draft was
    judged (see :func:`server_down`); later failures are the drafts' own.
    """
    if judges is not None:
        yield from _each_own_judge(list(items), judges, rubric, registry, jobs)
        return
    if jobs > 1 and judge is not None:
        items = list(items)
        evaluations = grade_many(
            items, rubric, judge=judge, concurrency=jobs, registry=registry, progress=False
        )
        _raise_if_down(evaluations)
        for item, ev in zip(items, evaluations, strict=True):
            if ev.judge_error is None:
                yield item, Graded(ev, ev.judge_calls)
            else:
                yield (
                    item,
                    Graded(_code_only(item, rubric, registry), ev.judge_calls, ev.judge_error),
                )
        return
    judged = 0
    for item in items:
        done, failure = _one(item, rubric, judge, registry)
        if failure is not None and server_down(failure, judged_before=judged):
            raise failure
        judged += failure is None
        yield item, done


def _each_own_judge(
    items: list[Any],
    judges: Sequence[Judge],
    rubric: Rubric,
    registry: Registry | None,
    jobs: int,
) -> Iterator[tuple[Any, Graded]]:
    """Each item graded by its own judge, ``jobs`` at a time, in input order."""
    if len(judges) != len(items):
        raise ValueError(f"{len(judges)} judges for {len(items)} items")
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [
            pool.submit(_one, item, rubric, j, registry)
            for item, j in zip(items, judges, strict=True)
        ]
        judged = 0
        try:
            for item, future in zip(items, futures, strict=True):
                done, failure = future.result()
                if failure is not None and server_down(failure, judged_before=judged):
                    raise failure
                judged += failure is None
                yield item, done
        finally:
            for future in futures:
                future.cancel()


def _one(
    item: Any, rubric: Rubric, judge: Judge | None, registry: Registry | None
) -> tuple[Graded, JudgeError | None]:
    """One item graded, and the judge's failure if it failed (its code keys still
    graded: the judge sides then count as skipped)."""
    with metered() as meter:
        try:
            ev = grade(
                item.draft,
                rubric,
                task=item.task,
                reference=getattr(item, "reference", None),
                metadata=getattr(item, "metadata", None),
                judge=judge,
                skip_judge=judge is None,
                registry=registry,
            ).with_ids(item.output_id)
        except JudgeError as exc:
            error = f"{exc.reason}: {exc}"
            return Graded(_code_only(item, rubric, registry), meter.records, error), exc
    return Graded(ev, meter.records), None


def _raise_if_down(evaluations: Sequence[Evaluation]) -> None:
    """Many drafts at once: the server is not there when no draft got a verdict and
    the API failed (the drafts ran together, so "before any was judged" is "none was")."""
    if any(e.judge_error is None for e in evaluations):
        return
    down = next((e.judge_error for e in evaluations if (e.judge_error or "").startswith(
        "api_error: ")), None)  # fmt: skip
    if down is not None:
        raise JudgeError(down.removeprefix("api_error: "), reason="api_error")


def _code_only(item: Any, rubric: Rubric, registry: Registry | None) -> Evaluation:
    """The draft's code keys (and code shadows): what still answered when the judge failed."""
    return grade(
        item.draft,
        rubric,
        task=item.task,
        reference=getattr(item, "reference", None),
        metadata=getattr(item, "metadata", None),
        skip_judge=True,
        registry=registry,
    ).with_ids(item.output_id)
