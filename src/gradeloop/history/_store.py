"""The loop history store: every iteration of every loop, in SQLite.

Each write is its own short transaction, committed before the method returns, so a
process killed in the middle of a loop leaves every iteration it already added on
disk, and the loop reads back as ``"interrupted"``. Several processes may write to
one file at once (WAL mode, a busy timeout, ``BEGIN IMMEDIATE`` for every write).

Threads: a store holds one connection and serialises every call on it with a lock,
so one store may be shared by threads. It must not be carried into a forked child
process; open a new store there (a store used from another process raises
:class:`HistoryError`).
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HistoryError, LoopNotFoundError
from ._agreement import AgreementRecords
from ._batches import BatchRecords
from ._closing import Closing
from ._cost import CostRecords
from ._grading import GradingRecords
from ._paths import default_history_path
from ._preferences import PreferenceRecords
from ._records import read_record, read_settings
from ._scrub import scrub_rubric, scrub_settings, scrub_text, scrub_values
from ._seal import SEAL_FIELD, seal
from ._sql import connect
from ._stats import is_complete, stability_from_rows, stats_from_totals
from ._tool_outputs import ToolOutputs
from ._view import (
    history_json,
    judged_passed,
    judged_score,
    pack_usage,
    pid_alive,
    unpack_usage,
)

__all__ = ["HistoryStore", "LoopSummary", "get_optimization_history"]


_HINT = "run `gradeloop history` to list the recorded loop ids"
_REBUILD = "restore the file from a copy, or move it aside to start a new history"


@dataclass(frozen=True)
class LoopSummary:
    """One line of :meth:`HistoryStore.list_loops`.

    ``stop_reason`` and ``final_score`` are None for a loop that never finished;
    ``passed`` is then False. ``status`` is ``"finished"``, ``"running"`` or
    ``"interrupted"``.
    """

    loop_id: str
    started_at: float
    task: str
    rounds: int
    stop_reason: str | None
    passed: bool
    final_score: float | None
    status: str = "finished"


class HistoryStore(
    AgreementRecords,
    GradingRecords,
    BatchRecords,
    ToolOutputs,
    CostRecords,
    PreferenceRecords,
    Closing,
):
    """The SQLite history of optimisation loops.

    It also keeps shadow outcomes and judge calibration runs (the methods of
    :class:`~gradeloop.history._agreement.AgreementRecords`), grading runs
    (:class:`~gradeloop.history._grading.GradingRecords`), Message Batches jobs
    (:class:`~gradeloop.history._batches.BatchRecords`) and the outputs of
    tool-driven loops (:class:`~gradeloop.history._tool_outputs.ToolOutputs`); what
    loops cost is read through :class:`~gradeloop.history._cost.CostRecords`; pairwise
    comparisons are :class:`~gradeloop.history._preferences.PreferenceRecords`.

    ``path`` defaults to :func:`default_history_path` (under ``$GRADELOOP_HOME``);
    ``":memory:"`` gives a private in-memory store. ``timeout`` is how long, in
    seconds, a write waits for another process holding the database lock.
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 30.0):
        self.path: Path = Path(path) if path is not None else default_history_path()
        self._lock = threading.RLock()
        self._pid = os.getpid()
        conn = connect(":memory:" if str(path) == ":memory:" else self.path, timeout)
        conn.row_factory = sqlite3.Row
        self._conn: sqlite3.Connection | None = conn

    # -- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection. Closing twice is harmless; any other use then fails."""
        with self._lock:
            if self._conn is not None and os.getpid() == self._pid:
                self._conn.close()
            self._conn = None

    def __repr__(self) -> str:
        return f"HistoryStore({str(self.path)!r})"

    # -- writing --------------------------------------------------------------------

    def start_loop(
        self,
        loop_id: str,
        *,
        task: str,
        rubric: Mapping[str, Any],
        config: Mapping[str, Any],
        started_at: float | None = None,
    ) -> None:
        """Record that a loop began. ``started_at`` is epoch seconds (default: now).

        The rubric (``Rubric.to_dict()``) and config are scrubbed of credentials
        before they are stored. A loop id can be started once.
        """
        _require_id(loop_id)
        row = (
            loop_id,
            time.time() if started_at is None else float(started_at),
            scrub_text(task),
            _dumps(scrub_rubric(rubric)),
            _dumps(scrub_settings(config)),
            socket.gethostname(),
            os.getpid(),
        )
        with self._write() as conn:
            try:
                conn.execute(
                    "INSERT INTO loops (loop_id, started_at, task, rubric_json, config_json,"
                    " writer_host, writer_pid) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except sqlite3.IntegrityError as exc:
                raise HistoryError(f"loop {loop_id!r} is already in {self.path}") from exc

    def add_iteration(self, loop_id: str, record: Mapping[str, Any]) -> None:
        """Append one iteration's record to a started loop (committed on return).

        ``record["iteration"]`` (an int from 1) must be new for this loop and
        ``record["output_id"]`` a non-empty string; every other key is stored as
        given (strings scrubbed), unknown keys included.
        """
        number = record.get("iteration")
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise HistoryError(f"iteration must be an int from 1, got {number!r}")
        _require_id(record.get("output_id"), what="output_id")
        stored: dict[str, Any] = scrub_values(record)
        stored.pop(SEAL_FIELD, None)  # a seal is this store's to give
        with self._write() as conn:
            loop = self._require_loop(conn, loop_id)
            sealed = seal(stored, str(loop["task"]))  # the loop's task is what was asked
            if sealed is not None:
                stored[SEAL_FIELD] = sealed
            row = (
                loop_id,
                number,
                stored["output_id"],
                judged_score(stored),
                int(judged_passed(stored)),
                int(stored.get("judge_error") is not None),
                int(is_complete(stored)),
                time.time(),
                _dumps(pack_usage(stored)),
            )
            try:
                conn.execute("INSERT INTO iterations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            except sqlite3.IntegrityError as exc:
                raise HistoryError(
                    f"loop {loop_id!r} already has iteration {number} in {self.path}"
                ) from exc

    def finish_loop(
        self,
        loop_id: str,
        *,
        final_output_id: str,
        passed: bool,
        stop_reason: str,
        total_time_ms: float,
        final_score: float | None,
    ) -> None:
        """Record how a loop ended. Finishing again overwrites the earlier ending."""
        with self._write() as conn:
            self._require_loop(conn, loop_id)
            conn.execute(
                "UPDATE loops SET finished_at = ?, final_output_id = ?, passed = ?,"
                " stop_reason = ?, total_time_ms = ?, final_score = ? WHERE loop_id = ?",
                (
                    time.time(),
                    final_output_id,
                    int(bool(passed)),
                    stop_reason,
                    float(total_time_ms),
                    None if final_score is None else float(final_score),
                    loop_id,
                ),
            )

    # -- reading --------------------------------------------------------------------

    def get(self, loop_id: str) -> dict[str, Any]:
        """The loop's history JSON, plus ``task``, ``stop_reason``,
        ``passed``, ``status``, ``started_at`` and ``final_score``.

        An iteration whose judge failed has ``evaluation: {"overall_score": None,
        "passed": False, "error": "..."}``. For a loop that never finished,
        ``status`` is ``"running"`` (its writer is alive) or ``"interrupted"``,
        ``final_output_id`` is the best judged draft so far (else the last), and
        ``total_time_ms`` runs up to the last recorded iteration.
        """
        with self._read() as conn:
            loop = self._require_loop(conn, loop_id)
            rows = conn.execute(
                "SELECT iteration, record_json, recorded_at FROM iterations WHERE loop_id = ?"
                " ORDER BY iteration",
                (loop_id,),
            ).fetchall()
        records = [
            (record, float(r["recorded_at"]))
            for r in rows
            if (record := _load(r["record_json"], f"loop {loop_id}, round {r['iteration']}"))
            is not None
        ]
        return history_json(dict(loop), records, _status(loop))

    def iterations(self, loop_id: str, *, seals: bool = False) -> list[dict[str, Any]]:
        """Every stored iteration record of the loop, in iteration order (with each
        record's ``seal``, :mod:`._seal`, only when ``seals``)."""
        with self._read() as conn:
            self._require_loop(conn, loop_id)
            rows = conn.execute(
                "SELECT iteration, record_json FROM iterations WHERE loop_id = ?"
                " ORDER BY iteration",
                (loop_id,),
            ).fetchall()
        out = []
        for r in rows:  # a damaged round is left out, named in a HistoryWarning
            record = _load(r["record_json"], f"loop {loop_id}, round {r['iteration']}", seals)
            if record is not None:
                out.append(record)
        return out

    def loop_settings(self, loop_id: str) -> dict[str, Any]:
        """The scrubbed ``rubric`` and ``config`` the loop was started with."""
        with self._read() as conn:
            loop = self._require_loop(conn, loop_id)
        where = f"loop {loop_id}"
        return {
            "rubric": read_settings(loop["rubric_json"], "rubric", where),
            "config": read_settings(loop["config_json"], "settings", where),
        }

    def list_loops(self, limit: int = 20, offset: int = 0) -> list[LoopSummary]:
        """Recorded loops, newest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM loops ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?",
                (max(0, int(limit)), max(0, int(offset))),
            ).fetchall()
        return [_summary(row) for row in rows]

    def latest_loop_id(self) -> str | None:
        """The id of the most recently started loop, or None for an empty store."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT loop_id FROM loops ORDER BY started_at DESC, rowid DESC LIMIT 1"
            ).fetchone()
        return None if row is None else str(row["loop_id"])

    def resolve(self, prefix: str) -> str:
        """The full loop id that ``prefix`` uniquely starts (an exact id always wins)."""
        if not prefix:
            raise LoopNotFoundError(f"an empty loop id matches nothing; {_HINT}")
        with self._read() as conn:
            if conn.execute("SELECT 1 FROM loops WHERE loop_id = ?", (prefix,)).fetchone():
                return prefix  # a full id: one primary-key lookup
            # The ids a prefix starts sort right after it: an index range, read up to
            # the first id that no longer starts with the prefix (6 at most).
            rows = conn.execute(
                "SELECT loop_id FROM loops WHERE loop_id >= ? ORDER BY loop_id LIMIT 6",
                (prefix,),
            ).fetchall()
        ids = list(itertools.takewhile(lambda i: i.startswith(prefix), (str(r[0]) for r in rows)))
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise LoopNotFoundError(f"no loop id starts with {prefix!r} in {self.path}; {_HINT}")
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise LoopNotFoundError(
            f"loop id prefix {prefix!r} is ambiguous ({shown}); give more characters"
        )

    def stats(self) -> dict[str, Any]:
        """Four evaluation figures over every stored loop.

        See :func:`gradeloop.history._stats.compute_stats` for the definitions; each
        figure comes with the counts it was computed from and is None when there is
        nothing to compute it from. They are read from totals the database keeps as
        rounds are written, so this costs the same at 100 rounds or 100,000.
        """
        with self._read() as conn:
            totals = conn.execute("SELECT * FROM loop_totals WHERE id = 1").fetchone()
            agreement = conn.execute("SELECT * FROM key_agreement").fetchall()
        if totals is None:
            raise HistoryError(f"{self.path} has lost its loop_totals row; {_REBUILD}")
        out = stats_from_totals(totals)
        out["key_stability"] = stability_from_rows(agreement)
        out["cost"] = self.cost_summary()
        return out

    # -- plumbing -------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise HistoryError(f"the history store {self.path} is closed")
        if os.getpid() != self._pid:
            raise HistoryError(
                "a HistoryStore cannot be used in a child process; open a new one there"
            )
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front, so the busy timeout applies here
        # rather than failing at once on a read-to-write upgrade under WAL.
        with self._transaction("BEGIN IMMEDIATE") as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        # One read transaction: several SELECTs see one snapshot.
        with self._transaction("BEGIN") as conn:
            yield conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                conn.execute(begin)
                yield conn
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(conn)
                raise HistoryError(f"history database {self.path}: {exc}") from exc
            except BaseException:
                _rollback(conn)
                raise

    def _require_loop(self, conn: sqlite3.Connection, loop_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = conn.execute(
            "SELECT * FROM loops WHERE loop_id = ?", (loop_id,)
        ).fetchone()
        if row is None:
            raise LoopNotFoundError(f"no loop {loop_id!r} in {self.path}; {_HINT}")
        return row


def get_optimization_history(
    loop_id: str | None = None, *, store: HistoryStore | None = None
) -> dict[str, Any]:
    """``get_optimization_history(loop_id?)``: a loop's history JSON.

    ``loop_id`` may be a unique prefix; None means the most recent loop. Without
    ``store`` the default store is opened (and closed again).
    """
    if store is None:
        with HistoryStore() as own:
            return get_optimization_history(loop_id, store=own)
    if loop_id is None:
        latest = store.latest_loop_id()
        if latest is None:
            raise LoopNotFoundError(f"no loops are recorded in {store.path} yet")
        return store.get(latest)
    return store.get(store.resolve(loop_id))


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def loop_status_word(loop: sqlite3.Row) -> str:
    """``"finished"``, ``"running"`` (its writer is alive) or ``"interrupted"``: the one
    word every view of the history uses for a loop's state."""
    return _status(loop)


def _status(loop: sqlite3.Row) -> str:
    if loop["finished_at"] is not None:
        return "finished"
    # Only the writer's own machine can tell whether the writer is still running.
    alive = loop["writer_host"] == socket.gethostname() and pid_alive(int(loop["writer_pid"]))
    return "running" if alive else "interrupted"


def _summary(row: sqlite3.Row) -> LoopSummary:
    finished = row["finished_at"] is not None
    return LoopSummary(
        loop_id=str(row["loop_id"]),
        started_at=float(row["started_at"]),
        task=str(row["task"]),
        rounds=int(row["rounds"]),
        stop_reason=row["stop_reason"] if finished else None,
        passed=bool(row["passed"]) if finished else False,
        final_score=row["final_score"] if finished else None,
        status=_status(row),
    )


def _require_id(value: Any, what: str = "loop_id") -> None:
    if not isinstance(value, str) or not value:
        raise HistoryError(f"{what} must be a non-empty string, got {value!r}")


def _dumps(value: Any) -> str:
    # compact separators: the JSON is read by programs, and a round is ~8% smaller
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _load(record_json: str, where: str, seals: bool = False) -> dict[str, Any] | None:
    record = read_record(record_json, where)
    if record is None:
        return None
    if not seals:
        record.pop(SEAL_FIELD, None)
    return unpack_usage(record)
