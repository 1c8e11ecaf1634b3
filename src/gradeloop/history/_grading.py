"""The history store's records of grading runs: a set of drafts graded by one rubric.

A mixin of :class:`~gradeloop.HistoryStore` (schema version 3). A grading run is
what one ``gradeloop grade`` or ``gradeloop compare`` invocation graded: per draft
its id, text, overall score, acceptance and the full per-key record
(:func:`gradeloop.grading._detail.detail_json`), or the error that stopped its
grading. Everything is scrubbed on the way in, like loop records.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HistoryError, LoopNotFoundError
from ..grading._detail import detail_json
from ..grading._grade import Evaluation
from ..grading._transcript import Transcript
from ._records import read_record, read_settings
from ._scrub import scrub_rubric, scrub_settings, scrub_text, scrub_values
from ._seal import SEAL_FIELD, seal

__all__ = ["GradedDraft", "GradingRecords", "GradingRunSummary"]


@dataclass(frozen=True)
class GradedDraft:
    """One draft of a grading run: its evaluation, or why it has none.

    ``error`` is set (and ``evaluation`` None) when grading the draft failed, for
    example a judge failure in a batch; such a draft is never accepted. A
    :class:`~gradeloop.Transcript` draft is stored whole: its messages as given
    (``"transcript"`` in the record) and, as ``content``, the rendering the judge saw.
    """

    item_id: str
    draft: str | Transcript
    evaluation: Evaluation | None = None
    task: str = ""
    error: str | None = None
    reference: str | Transcript | None = None  # so a regrade gives checkers the same context
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class GradingRunSummary:
    """One line of :meth:`GradingRecords.list_grading_runs`."""

    run_id: str
    started_at: float
    origin: str
    rubric_name: str
    drafts: int
    accepted: int


class GradingRecords:
    """Store and read grading runs."""

    path: Path

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def add_grading_run(
        self,
        drafts: Sequence[GradedDraft],
        *,
        rubric: Mapping[str, Any],
        rubric_name: str = "",
        origin: str = "grade",
        config: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        regrade_of: str | None = None,
        totals: tuple[int, int] | None = None,
        replace: bool = False,
    ) -> str:
        """Store one grading run in one transaction; returns its id.

        ``rubric`` is ``Rubric.to_dict()``; ``origin`` says what graded the drafts
        (``"grade"``, ``"compare"``...); ``config`` holds settings such as the
        judge model and the run's ``fingerprint`` (credentials are dropped).
        ``regrade_of`` names the grading run or loop whose drafts this run re-graded.
        ``totals`` (drafts, accepted) records a run whose drafts are kept elsewhere (a
        cluster's Parquet output) with no draft rows; ``replace`` overwrites a run
        recorded under the same id (a resumed cluster run).
        """
        run_id = run_id or f"grade_{uuid.uuid4().hex[:12]}"
        rows = [_row(run_id, position, d) for position, d in enumerate(drafts)]
        count, accepted = totals if totals is not None else (len(rows), sum(r[3] for r in rows))
        with self._write() as conn:
            if replace:
                conn.execute("DELETE FROM graded_drafts WHERE run_id = ?", (run_id,))
                conn.execute("DELETE FROM grading_runs WHERE run_id = ?", (run_id,))
            try:
                conn.execute(
                    "INSERT INTO grading_runs (run_id, started_at, origin, rubric_name,"
                    " rubric_json, config_json, drafts, accepted, regrade_of)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        time.time(),
                        origin,
                        scrub_text(rubric_name),
                        _dumps(scrub_rubric(rubric)),
                        _dumps(scrub_settings(dict(config or {}))),
                        count,
                        accepted,
                        regrade_of,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise HistoryError(f"grading run {run_id!r} is already in {self.path}") from exc
            conn.executemany("INSERT INTO graded_drafts VALUES (?, ?, ?, ?, ?, ?)", rows)
        return run_id

    def start_grading_run(
        self,
        *,
        rubric: Mapping[str, Any],
        rubric_name: str = "",
        origin: str = "grade",
        config: Mapping[str, Any] | None = None,
        regrade_of: str | None = None,
    ) -> str:
        """Store a grading run with no drafts yet, to add them one by one as they are
        graded (:meth:`add_graded_draft`): a run stopped half way keeps what it did.
        Arguments as :meth:`add_grading_run`'s; returns the run's id."""
        run_id = f"grade_{uuid.uuid4().hex[:12]}"
        with self._write() as conn:
            conn.execute(
                "INSERT INTO grading_runs (run_id, started_at, origin, rubric_name,"
                " rubric_json, config_json, drafts, accepted, regrade_of)"
                " VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?)",
                (
                    run_id,
                    time.time(),
                    origin,
                    scrub_text(rubric_name),
                    _dumps(scrub_rubric(rubric)),
                    _dumps(scrub_settings(dict(config or {}))),
                    regrade_of,
                ),
            )
        return run_id

    def add_graded_draft(self, run_id: str, position: int, draft: GradedDraft) -> None:
        """Add one draft (at ``position`` in the run's order) to a run begun with
        :meth:`start_grading_run`, committed on return."""
        row = _row(run_id, position, draft)
        with self._write() as conn:
            try:
                conn.execute("INSERT INTO graded_drafts VALUES (?, ?, ?, ?, ?, ?)", row)
            except sqlite3.IntegrityError as exc:
                raise HistoryError(
                    f"grading run {run_id!r} has a draft at position {position} already"
                ) from exc
            conn.execute(
                "UPDATE grading_runs SET drafts = drafts + 1, accepted = accepted + ?"
                " WHERE run_id = ?",
                (row[3], run_id),
            )

    def list_grading_runs(self, limit: int = 20, offset: int = 0) -> list[GradingRunSummary]:
        """Recorded grading runs, newest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT run_id, started_at, origin, rubric_name, drafts, accepted"
                " FROM grading_runs ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?",
                (max(0, int(limit)), max(0, int(offset))),
            ).fetchall()
        return [GradingRunSummary(*tuple(r)) for r in rows]

    def grading_run(self, run_id: str, *, seals: bool = False) -> dict[str, Any]:
        """One run: ``run_id``, ``started_at``, ``origin``, ``rubric_name``,
        ``rubric``, ``config``, ``regrade_of`` (None unless a regrade) and ``drafts``
        (each record as stored, in order; with its ``seal``, :mod:`._seal`, only when
        ``seals``)."""
        with self._read() as conn:
            run = conn.execute("SELECT * FROM grading_runs WHERE run_id = ?", (run_id,)).fetchone()
            if run is None:
                raise LoopNotFoundError(f"no grading run {run_id!r} in {self.path}")
            rows = conn.execute(
                "SELECT position, record_json FROM graded_drafts WHERE run_id = ?"
                " ORDER BY position",
                (run_id,),
            ).fetchall()
        where = f"grading run {run_id}"
        drafts = []
        for position, text in rows:  # a damaged draft is left out, named in a HistoryWarning
            record = read_record(text, f"{where}, draft {position + 1}")
            if record is not None:
                if not seals:
                    record.pop(SEAL_FIELD, None)
                drafts.append(record)
        return {
            "run_id": run["run_id"],
            "started_at": float(run["started_at"]),
            "origin": run["origin"],
            "rubric_name": run["rubric_name"],
            "rubric": read_settings(run["rubric_json"], "rubric", where),
            "config": read_settings(run["config_json"], "settings", where),
            "regrade_of": run["regrade_of"],
            "drafts": drafts,
        }

    def grading_run_ids(self, prefix: str) -> list[str]:
        """The grading run ids that ``prefix`` starts (an exact id alone if it is one;
        at most 6, which is enough to say a prefix is ambiguous)."""
        with self._read() as conn:
            if conn.execute("SELECT 1 FROM grading_runs WHERE run_id = ?", (prefix,)).fetchone():
                return [prefix]
            rows = conn.execute(
                "SELECT run_id FROM grading_runs WHERE run_id >= ? ORDER BY run_id LIMIT 6",
                (prefix,),
            ).fetchall()
        return [str(r[0]) for r in rows if str(r[0]).startswith(prefix)]

    def regrades_of(self, source_id: str) -> list[str]:
        """The grading runs that re-graded ``source_id`` (a run or loop id), oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT run_id FROM grading_runs WHERE regrade_of = ? ORDER BY started_at, rowid",
                (source_id,),
            ).fetchall()
        return [str(r[0]) for r in rows]


def _row(run_id: str, position: int, d: GradedDraft) -> tuple[Any, ...]:
    ev = d.evaluation
    transcript = d.draft if isinstance(d.draft, Transcript) else None
    record: dict[str, Any] = {
        "item_id": d.item_id,
        "task": d.task,
        "content": d.draft if transcript is None else transcript.render(),
        "error": d.error,
        "evaluation": ev.to_json() if ev is not None else None,
        "detail": detail_json(ev) if ev is not None else None,
    }
    if d.reference is not None:  # a transcript as its messages, read back by evidence
        ref = d.reference
        record["reference"] = ref.to_json() if isinstance(ref, Transcript) else ref
    if d.metadata:
        record["metadata"] = dict(d.metadata)
    if transcript is not None:  # the messages as given: Transcript.from_json reads them back
        record["transcript"] = transcript.to_json()
    stored = scrub_values(record)
    sealed = seal(stored)
    if sealed is not None:
        stored[SEAL_FIELD] = sealed
    accepted = ev is not None and d.error is None and ev.accepted
    score = None if ev is None or ev.overall_score is None else round(ev.overall_score, 4)
    return (run_id, position, stored["item_id"], int(accepted), score, _dumps(stored))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
