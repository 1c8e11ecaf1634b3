"""The evidence a checker is proposed from: drafts with a met / unmet verdict for one key.

Two sources give it. People's labels (the JSONL ``calibrate`` reads, through
:func:`~gradeloop.read_labels`) are preferred; the judge's stored verdicts (grading
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

from ..errors import LoopNotFoundError, NotEnoughEvidenceError
from ..grading._rubric import Criterion
from ..history._store import HistoryStore
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
    """One draft and its verdict for the key (``met``), and what a checker may see."""

    output_id: str
    task: str
    draft: str
    met: bool
    reference: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class StoredVerdicts(Protocol):
    """A stored draft with its verdict per key (a grading run's draft, a loop's round)."""

    item_id: str
    task: str
    draft: str

    def met(self, key: str) -> bool | None: ...


@dataclass(frozen=True)
class HistoryDraft:
    """A draft read from the history, with the judge's stored verdict per key."""

    source_id: str
    item_id: str
    task: str
    draft: str
    verdicts: Mapping[str, bool]

    def met(self, key: str) -> bool | None:
        """The judge's verdict on ``key`` (None: the judge gave none)."""
        return self.verdicts.get(key)


def examples_from(evidence: Iterable[Any], criterion: Criterion) -> tuple[list[Example], int]:
    """The rows with a verdict for ``criterion``'s key, and how many had none.

    ``evidence`` holds :class:`~gradeloop.LabelledItem` (a scored label counts as met
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
                Example(item.output_id, item.task, item.draft, met, item.reference, item.metadata)
            )
            continue
        if isinstance(item, StoredVerdicts):
            verdict = item.met(key)
            if verdict is None:
                without += 1
                continue
            reference = getattr(item, "reference", None)
            metadata = getattr(item, "metadata", None) or {}
            out.append(Example(item.item_id, item.task, item.draft, verdict, reference, metadata))
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
    """Every draft of the grading runs and loops ``ids`` name (every stored one when
    ``ids`` is empty) on which the judge answered ``key``, newest run first.

    A grading run is named by its full id, a loop by its id or a unique prefix. A
    draft text seen before (a loop's repeated round, a draft graded twice) counts
    once, with its first verdict. Verdicts of ``key`` filled by a checker are not the
    judge's and are left out.
    """
    out: list[HistoryDraft] = []
    seen: set[str] = set()
    for source_id, task, records in _sources(store, ids):
        for record in records:
            draft = record.get("content")
            if not isinstance(draft, str) or draft in seen:
                continue
            verdicts = _judge_verdicts(record)
            if key not in verdicts:
                continue
            seen.add(draft)
            item_id = str(record.get("item_id") or record.get("output_id") or "")
            out.append(
                HistoryDraft(source_id, item_id, str(record.get("task") or task), draft, verdicts)
            )
    return out


def _sources(
    store: HistoryStore, ids: Sequence[str]
) -> Iterable[tuple[str, str, Sequence[Mapping[str, Any]]]]:
    if not ids:
        runs = [r.run_id for r in store.list_grading_runs(limit=1_000_000)]
        loops = [summary.loop_id for summary in store.list_loops(limit=1_000_000)]
    else:
        runs, loops = [], []
        for ident in ids:
            kind, found = _resolve(store, ident)
            (runs if kind == "run" else loops).append(found)
    for run_id in runs:
        yield run_id, "", list(store.grading_run(run_id)["drafts"])
    for loop_id in loops:
        task = str(store.get(loop_id).get("task") or "")
        yield loop_id, task, store.iterations(loop_id)


def _resolve(store: HistoryStore, ident: str) -> tuple[str, str]:
    try:
        store.grading_run(ident)
    except LoopNotFoundError:
        pass
    else:
        return "run", ident
    try:
        return "loop", store.resolve(ident)
    except LoopNotFoundError:
        raise LoopNotFoundError(
            f"no grading run or loop {ident!r} in {store.path}; `gradeloop history` lists "
            "loops and `gradeloop view` grading runs"
        ) from None


def _judge_verdicts(record: Mapping[str, Any]) -> dict[str, bool]:
    """The keys the judge answered in one stored record, met or not."""
    if record.get("error") or record.get("judge_error"):
        return {}
    detail = record.get("detail")
    if not isinstance(detail, Mapping):
        return {}
    out: dict[str, bool] = {}
    for c in detail.get("criteria") or ():
        if (
            isinstance(c, Mapping)
            and isinstance(c.get("key"), str)
            and c.get("source") == "judge"
            and c.get("checked") is not False
            and isinstance(c.get("met"), bool)
        ):
            out[c["key"]] = c["met"]
    return out
