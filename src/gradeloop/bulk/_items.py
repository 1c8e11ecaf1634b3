"""A batch's drafts and settings, checked once for all of them, and how progress is
reported: what grade_many and agrade_many share with the Message Batches path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..errors import JudgeRequiredError
from ..grading._grade import Judge
from ..grading._registry import Registry
from ..grading._rubric import Rubric, checker_timeout_problem
from ..grading._shadow import judge_request
from ..grading._transcript import Draft, Transcript, as_transcript
from ._progress import ProgressBar, ProgressCallback

__all__ = ["Batch", "DraftLike", "Item", "as_item", "reporter"]


class DraftLike(Protocol):
    """A draft with its own task and id (:class:`gradeloop.migration.DraftItem` is one)."""

    @property
    def output_id(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def draft(self) -> str | Transcript: ...


@dataclass(frozen=True)
class Batch:
    """A batch's drafts and settings, checked once for all of them."""

    items: list[Item]
    rubric: Rubric
    judge: Judge | None
    skip_judge: bool
    registry: Registry | None
    checker_timeout: float

    @classmethod
    def of(
        cls,
        drafts: Iterable[Draft | DraftLike],
        rubric: Rubric | Mapping[str, Any],
        task: str,
        judge: Judge | None,
        skip_judge: bool,
        registry: Registry | None,
        checker_timeout: float | None,
    ) -> Batch:
        if not isinstance(rubric, Rubric):
            rubric = Rubric.from_dict(rubric, registry=registry)
        if rubric.judge_criteria and judge is None and not skip_judge:
            raise JudgeRequiredError([c.key for c in rubric.judge_criteria])
        if checker_timeout is None:
            checker_timeout = rubric.checker_timeout
        elif (problem := checker_timeout_problem(checker_timeout)) is not None:
            raise ValueError(problem)
        items = [as_item(d, i, task) for i, d in enumerate(drafts)]
        return cls(items, rubric, judge, skip_judge, registry, float(checker_timeout))

    @property
    def code_only(self) -> bool:
        """Whether no draft's judge is asked anything."""
        return self.judge is None or self.skip_judge or not judge_request(self.rubric)


class Item(NamedTuple):
    """A draft to grade, with its id, task and (optional) context.

    A named tuple: one is made for every draft of a batch, and a frozen dataclass's
    ``__init__`` (a set a field) costs as much as grading a cheap key."""

    output_id: str
    task: str
    draft: str | Transcript
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] | None = None


def as_item(draft: Draft | DraftLike, index: int, task: str) -> Item:
    """A string or a transcript (id ``draft-N``, the shared ``task``) or a DraftItem,
    as an :class:`Item`."""
    if isinstance(draft, (str, Transcript)):  # a tuple: ``A | B`` is a new union per call
        return Item(f"draft-{index + 1}", task, draft)
    if isinstance(draft, (list, tuple)):  # a list of message dicts: read it now, by index
        read = as_transcript(draft, what=f"drafts[{index}]")
        assert read is not None
        return Item(f"draft-{index + 1}", task, read)
    text = getattr(draft, "draft", None)
    if not isinstance(text, str | Transcript):
        raise TypeError(
            f"drafts[{index}] is {type(draft).__name__}: give a string, a Transcript, a "
            "list of message dicts or a DraftItem (with .draft, .task and .output_id)"
        )
    own_task = getattr(draft, "task", None)
    output_id = getattr(draft, "output_id", None) or f"draft-{index + 1}"
    return Item(
        str(output_id),
        own_task if isinstance(own_task, str) else task,
        text,
        getattr(draft, "reference", None),
        getattr(draft, "metadata", None),
    )


def reporter(progress: bool | ProgressCallback, total: int) -> tuple[Any, Any]:
    """The live bar (None without one) and what to call after each draft (or None)."""
    bar = ProgressBar(total) if progress is True else None
    report = bar if bar is not None and bar.enabled else (progress if callable(progress) else None)
    return (bar if bar is not None and bar.enabled else None), report
