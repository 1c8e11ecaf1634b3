"""Stored evidence: the drafts of recorded grading runs and loops, each with the
verdict its run stored per key.

``regrade`` re-grades these drafts; ``propose`` (and anything else that learns
from history) reads the same records through :func:`stored_drafts`, so there is one
reading of the history's shapes: a grading run's drafts (each with its task, text,
reference and metadata) and a loop's rounds (each with the loop's task), with per
key who filled it, whether it was met, and the score of a scored key.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import HistoryError, HistoryWarning, LoopNotFoundError, TranscriptError
from ..grading._transcript import Transcript
from ..history._seal import SealState, seal_state
from ..history._store import HistoryStore
from ..models._fingerprint import stored_fingerprint

__all__ = [
    "KeyVerdict",
    "StoredDraft",
    "StoredRun",
    "resolve_source",
    "stored_drafts",
    "stored_run",
]

SourceKind = Literal["run", "loop"]


@dataclass(frozen=True)
class KeyVerdict:
    """One key's stored answer on one draft.

    ``score`` is the 1-10 score of a scored key (None for a pass/fail key);
    ``source`` is ``"code"`` or ``"judge"`` and ``filled_by`` the checker's name or
    ``"judge"``. ``checked`` is False for a key that was not graded (code-only).
    """

    met: bool
    score: float | None
    source: str
    filled_by: str
    checked: bool = True


@dataclass(frozen=True)
class StoredDraft:
    """A recorded draft and its stored per-key verdicts.

    ``item_id`` is the draft's id in a grading run, or a round's output id in a loop.
    ``verdicts`` is empty when the draft has no verdict (its judge failed: ``error``).
    ``sealed`` says whether the record still holds what was sealed when it was written
    (``"ok"``), changed since (``"mismatch"``) or has no seal (``"missing"``): only an
    ``"ok"`` record's answers are reused by ``regrade``.
    """

    source_id: str
    kind: SourceKind
    item_id: str
    task: str
    draft: str | Transcript  # a transcript draft comes back as one (its messages)
    verdicts: Mapping[str, KeyVerdict]
    reasoning: str | None = None
    error: str | None = None
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    sealed: SealState = "missing"

    def met(self, key: str) -> bool | None:
        """Whether ``key`` was met (None: no stored answer, or not graded)."""
        v = self.verdicts.get(key)
        return None if v is None or not v.checked else v.met


@dataclass(frozen=True)
class StoredRun:
    """A grading run or a loop as evidence: its rubric, settings, fingerprint, drafts."""

    source_id: str
    kind: SourceKind
    rubric: Mapping[str, Any]
    config: Mapping[str, Any]
    drafts: tuple[StoredDraft, ...]

    @property
    def fingerprint(self) -> dict[str, Any]:
        """The run's recorded fingerprint (partial for runs recorded before them)."""
        return stored_fingerprint(self.config, self.rubric)


def resolve_source(store: HistoryStore, ident: str) -> tuple[SourceKind, str]:
    """``("run", id)`` or ``("loop", id)`` for a grading-run or loop id (or a unique
    prefix of one); :class:`LoopNotFoundError` naming the fix otherwise."""
    if not ident:
        raise LoopNotFoundError("give a grading run id or a loop id (see `gradeloop history`)")
    runs = store.grading_run_ids(ident)
    if ident in runs:
        return "run", ident
    loop_error: LoopNotFoundError | None = None
    try:
        loop: str | None = store.resolve(ident)
    except LoopNotFoundError as exc:
        loop, loop_error = None, exc
    if loop == ident:
        return "loop", ident
    found: list[tuple[SourceKind, str]] = [("run", r) for r in runs]
    if loop is not None:
        found.append(("loop", loop))
    if len(found) == 1:
        return found[0]
    if not found:
        if loop_error is not None and "ambiguous" in str(loop_error):
            raise loop_error
        raise LoopNotFoundError(
            f"no grading run or loop id starts with {ident!r} in {store.path}; "
            "`gradeloop history` lists both"
        )
    shown = ", ".join(i for _, i in found[:5])
    raise LoopNotFoundError(f"id prefix {ident!r} is ambiguous ({shown}); give more of it")


def stored_run(store: HistoryStore, ident: str) -> StoredRun:
    """The grading run or loop ``ident`` names, read as evidence."""
    kind, source_id = resolve_source(store, ident)
    if kind == "run":
        data = store.grading_run(source_id, seals=True)
        rubric, config = data["rubric"], data["config"]
        drafts = tuple(_readable(source_id, rubric, data["drafts"]))
    else:
        settings = store.loop_settings(source_id)
        rubric, config = settings["rubric"], settings["config"]
        task = str(store.get(source_id).get("task") or "")
        drafts = tuple(
            _loop_draft(source_id, rubric, task, r)
            for r in store.iterations(source_id, seals=True)
            if isinstance(r.get("content"), str) and not r.get("reused_from")
        )
    return StoredRun(source_id, kind, rubric, config, drafts)


def stored_drafts(
    store: HistoryStore, ids: Sequence[str], *, judged_only: bool = True
) -> list[StoredDraft]:
    """Every draft of the grading runs and loops ``ids`` name (ids or unique prefixes),
    each with its stored verdict per key, in run order then draft order.

    ``judged_only`` leaves out drafts without a stored verdict (a judge failure).
    A loop's rounds that reused an identical earlier draft's verdict are left out:
    that draft is there already. Raises :class:`LoopNotFoundError` for an unknown id.
    """
    out: list[StoredDraft] = []
    for ident in ids:
        run = stored_run(store, ident)
        out.extend(d for d in run.drafts if d.verdicts or not judged_only)
    return out


# -- reading the stored records ---------------------------------------------------


def _scales(rubric: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(c.get("key")): str(c.get("scale") or "pass_fail")
        for c in rubric.get("criteria") or []
        if isinstance(c, Mapping)
    }


def _checkers(rubric: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(c.get("key")): str(c.get("checker") or "judge")
        for c in rubric.get("criteria") or []
        if isinstance(c, Mapping)
    }


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def verdicts_of(record: Mapping[str, Any], rubric: Mapping[str, Any]) -> dict[str, KeyVerdict]:
    """The per-key verdicts of one stored record (a run's draft or a loop's round):
    from its ``detail`` block when it has one, else from the seed's evaluation JSON."""
    evaluation = record.get("evaluation")
    if record.get("error") or record.get("judge_error") or not isinstance(evaluation, Mapping):
        return {}
    scales, checkers = _scales(rubric), _checkers(rubric)
    out: dict[str, KeyVerdict] = {}
    detail = record.get("detail")
    if isinstance(detail, Mapping):
        for c in detail.get("criteria") or []:
            if not isinstance(c, Mapping) or not isinstance(c.get("key"), str):
                continue
            key = c["key"]
            score = _number(c.get("score")) if scales.get(key) == "score" else None
            out[key] = KeyVerdict(
                met=c.get("met") is True,
                score=score,
                source=str(
                    c.get("source") or ("judge" if checkers.get(key) == "judge" else "code")
                ),
                filled_by=str(c.get("filled_by") or checkers.get(key, "judge")),
                checked=c.get("checked") is not False,
            )
        return out
    for c in evaluation.get("criteria") or []:
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            continue
        key = c["name"]
        filled_by = str(c.get("filled_by") or checkers.get(key, "judge"))
        out[key] = KeyVerdict(
            met=c.get("passed") is True,
            score=_number(c.get("score")) if scales.get(key) == "score" else None,
            source="judge" if filled_by == "judge" else "code",
            filled_by=filled_by,
            checked=c.get("status") != "not_checked",
        )
    return out


def _reasoning(record: Mapping[str, Any]) -> str | None:
    detail = record.get("detail")
    if isinstance(detail, Mapping) and isinstance(detail.get("reasoning"), str):
        return str(detail["reasoning"])
    return None


def _readable(
    source_id: str, rubric: Mapping[str, Any], records: Sequence[Any]
) -> Iterator[StoredDraft]:
    """The run's drafts; one whose record cannot be read as a draft (no text, a
    damaged transcript) is left out, named in a HistoryWarning: the rest go on."""
    for d in records:
        if not isinstance(d, Mapping):
            continue
        try:
            yield _run_draft(source_id, rubric, d)
        except HistoryError as exc:
            warnings.warn(f"{exc}; it is left out", HistoryWarning, stacklevel=2)


def _run_draft(source_id: str, rubric: Mapping[str, Any], d: Mapping[str, Any]) -> StoredDraft:
    content = d.get("content")
    if not isinstance(content, str):
        name = d.get("item_id") or "?"
        raise HistoryError(f"grading run {source_id}, draft {name}: its record has no text")
    metadata = d.get("metadata")
    reference = _stored_draft(d.get("reference"), source_id)
    error = d.get("error")
    transcript = d.get("transcript")
    return StoredDraft(
        source_id=source_id,
        kind="run",
        item_id=str(d.get("item_id") or ""),
        task=str(d.get("task") or ""),
        draft=content if transcript is None else _stored_draft(transcript, source_id) or content,
        verdicts=verdicts_of(d, rubric),
        reasoning=_reasoning(d),
        error=str(error) if error else None,
        reference=reference,
        metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
        sealed=seal_state(d),
    )


def _stored_draft(value: Any, source_id: str) -> str | Transcript | None:
    """A stored draft or reference: text as it is, a transcript's messages read back."""
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, Mapping) and "messages" in value:
        try:
            return Transcript.from_json(value, source=f"grading run {source_id}")
        except TranscriptError as exc:
            raise HistoryError(f"grading run {source_id}: a stored transcript: {exc}") from None
    return None


def _loop_draft(
    source_id: str, rubric: Mapping[str, Any], task: str, r: Mapping[str, Any]
) -> StoredDraft:
    error = r.get("judge_error")
    return StoredDraft(
        source_id=source_id,
        kind="loop",
        item_id=str(r.get("output_id") or f"round {r.get('iteration')}"),
        task=task,
        draft=str(r["content"]),
        verdicts=verdicts_of(r, rubric),
        reasoning=_reasoning(r),
        error=str(error) if error else None,
        sealed=seal_state(r, task),
    )
