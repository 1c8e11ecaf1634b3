"""The evidence a checker is proposed from: drafts with a met / unmet verdict for one key.

Two sources give it. People's labels (the JSONL ``calibrate`` reads, through
:func:`~gradeloop.migration.read_labels`) are preferred; the judge's stored verdicts (grading
runs and loops in the history) are the fallback. :func:`examples_from` turns either
into :class:`Example` rows, :func:`require_enough` refuses evidence too thin to learn
from (saying how many more drafts are needed), and :func:`split` makes the seeded,
stratified train / held-out pair the candidates are chosen and judged on.

The history reader here (:func:`history_evidence`) reads what grading runs and loops
store per key (``detail.criteria``). It returns objects shaped like the shared
stored-draft record (``item_id``, ``task``, ``draft``, ``met(key)``), so a reader of
stored verdicts kept elsewhere can replace it without touching :func:`examples_from`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import NotEnoughEvidenceError
from ..grading._rubric import Criterion
from ..grading._transcript import Transcript, draft_parts, judge_text
from ..history._store import HistoryStore
from ._evidence import stored_drafts
from ._jsonl import LabelledItem

__all__ = [
    "HELDOUT_SHARE",
    "MIN_DRAFTS",
    "MIN_EACH",
    "Example",
    "HistoryDraft",
    "Split",
    "StoredVerdicts",
    "examples_from",
    "history_evidence",
    "require_enough",
    "split",
]

#: Fewer drafts with a verdict than this and nothing is proposed.
MIN_DRAFTS = 20
#: Fewer met (or unmet) drafts than this and nothing is proposed.
MIN_EACH = 5
#: The share of each verdict held out to judge the winner on.
HELDOUT_SHARE = 1 / 3


@dataclass(frozen=True)
class Example:
    """One draft and its verdict for the key (``met``), and what a checker may see.

    ``draft`` is the text text checkers read (an agent run's final answer); the run
    itself is ``transcript`` (None for a text draft), which trajectory checkers read.
    """

    output_id: str
    task: str
    draft: str
    met: bool
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    transcript: Transcript | None = None

    @classmethod
    def of(
        cls,
        output_id: str,
        task: str,
        draft: str | Transcript,
        met: bool,
        reference: str | Transcript | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Example:
        """An example of a text draft or of an agent run (its transcript kept)."""
        text, transcript = draft_parts(draft)
        return cls(output_id, task, text, met, reference, metadata or {}, transcript)

    @property
    def shown(self) -> str:
        """The draft as a judge (or the proposing model) is shown it."""
        return self.draft if self.transcript is None else self.transcript.render()


@runtime_checkable
class StoredVerdicts(Protocol):
    """A stored draft with its verdict per key (a grading run's draft, a loop's round)."""

    item_id: str
    task: str
    draft: str | Transcript

    def met(self, key: str) -> bool | None: ...


@dataclass(frozen=True)
class HistoryDraft:
    """A draft read from the history, with the judge's stored verdict per key."""

    source_id: str
    item_id: str
    task: str
    draft: str | Transcript
    verdicts: Mapping[str, bool]

    def met(self, key: str) -> bool | None:
        """The judge's verdict on ``key`` (None: the judge gave none)."""
        return self.verdicts.get(key)


def examples_from(evidence: Iterable[Any], criterion: Criterion) -> tuple[list[Example], int]:
    """The rows with a verdict for ``criterion``'s key, and how many had none.

    ``evidence`` holds :class:`~gradeloop.migration.LabelledItem` (a scored label counts as met
    at the criterion's threshold), stored drafts (:class:`StoredVerdicts`) or
    :class:`Example` rows.
    """
    key = criterion.key
    out: list[Example] = []
    without = 0
    for item in evidence:
        if isinstance(item, Example):
            out.append(item)
            continue
        if isinstance(item, LabelledItem):
            label = item.labels.get(key)
            if label is None:
                without += 1
                continue
            met = label if isinstance(label, bool) else label >= criterion.pass_threshold
            out.append(
                Example.of(
                    item.output_id, item.task, item.draft, met, item.reference, item.metadata
                )
            )
            continue
        if isinstance(item, StoredVerdicts):
            verdict = item.met(key)
            if verdict is None:
                without += 1
                continue
            reference = getattr(item, "reference", None)
            metadata = getattr(item, "metadata", None) or {}
            out.append(
                Example.of(item.item_id, item.task, item.draft, verdict, reference, metadata)
            )
            continue
        raise TypeError(
            "evidence holds labelled drafts (read_labels), stored drafts or Examples, "
            f"not {type(item).__name__}"
        )
    return out, without


def require_enough(examples: Sequence[Example], key: str, where: str = "evidence") -> None:
    """Raise :class:`NotEnoughEvidenceError` below :data:`MIN_DRAFTS` drafts or
    :data:`MIN_EACH` of either verdict, saying how many more are needed."""
    met = sum(1 for e in examples if e.met)
    unmet = len(examples) - met
    more_met, more_unmet = max(0, MIN_EACH - met), max(0, MIN_EACH - unmet)
    more = max(MIN_DRAFTS - len(examples), more_met + more_unmet, 0)
    if not more:
        return
    which = [f"{n} {v}" for n, v in ((more_met, "met"), (more_unmet, "unmet")) if n]
    detail = f", of which at least {' and '.join(which)}" if which else ""
    raise NotEnoughEvidenceError(
        f"{where}: {len(examples)} drafts with a verdict for {key!r} ({met} met, "
        f"{unmet} unmet); proposing a checker needs at least {MIN_DRAFTS}, with at least "
        f"{MIN_EACH} of each verdict: add {more} more{detail}",
        key=key,
        have={"drafts": len(examples), "met": met, "unmet": unmet},
        more=more,
        more_met=more_met,
        more_unmet=more_unmet,
    )


@dataclass(frozen=True)
class Split:
    """The seeded train / held-out pair, each stratified by verdict."""

    train: tuple[Example, ...]
    heldout: tuple[Example, ...]


def split(examples: Sequence[Example], seed: int = 0) -> Split:
    """About :data:`HELDOUT_SHARE` of each verdict held out (at least 2 of each, and at
    least 3 of each left to train on), chosen by ``random.Random(seed)``; the same
    examples and seed always give the same split."""
    rng = random.Random(seed)
    train: list[Example] = []
    heldout: list[Example] = []
    for verdict in (True, False):
        group = [e for e in examples if e.met is verdict]
        rng.shuffle(group)
        held = min(max(2, round(len(group) * HELDOUT_SHARE)), max(0, len(group) - 3))
        heldout.extend(group[:held])
        train.extend(group[held:])
    return Split(tuple(train), tuple(heldout))


# -- the judge's stored verdicts ------------------------------------------------------


def history_evidence(store: HistoryStore, key: str, ids: Sequence[str] = ()) -> list[HistoryDraft]:
    """Every draft of the grading runs and loops ``ids`` name (ids or unique prefixes;
    every stored one when ``ids`` is empty) on which the judge answered ``key``.

    Read with :func:`~gradeloop.migration.stored_drafts`, so a transcript draft comes back as
    one. A draft seen before (a loop's repeated round, a draft graded twice) counts
    once, with its first verdict. Verdicts of ``key`` filled by a checker are not the
    judge's and are left out, as are drafts whose judge failed.
    """
    if not ids:
        ids = [
            *(r.run_id for r in store.list_grading_runs(limit=1_000_000)),
            *(summary.loop_id for summary in store.list_loops(limit=1_000_000)),
        ]
    out: list[HistoryDraft] = []
    seen: set[str] = set()
    for d in stored_drafts(store, list(ids)):
        v = d.verdicts.get(key)
        if d.error or v is None or v.source != "judge" or not v.checked:
            continue
        shown = judge_text(d.draft)  # a transcript as the judge saw it
        if shown in seen:
            continue
        seen.add(shown)
        out.append(HistoryDraft(d.source_id, d.item_id, d.task, d.draft, {key: v.met}))
    return out
