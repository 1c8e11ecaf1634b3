"""Reading the history database for the reports, strictly read-only.

The report and the viewer never write: the file is opened with SQLite's
``mode=ro``, so even a bug cannot change it (SQLite refuses the write), and no
migration is ever applied. An older file that lacks a table reads as having none
of those records. Each :class:`ReadOnlyHistory` is one connection; the viewer opens
one per request, so every page shows what is on disk at that moment.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...errors import HistoryError, InputError, LoopNotFoundError
from ...history._closing import Closing
from ...history._paths import default_history_path
from ...history._preferences import preference_row
from ...history._records import read_record, read_settings
from ...history._store import loop_status_word
from ...history._view import judged_score, unpack_usage

__all__ = ["Filters", "LoopRow", "ReadOnlyHistory", "RunRow", "rubric_label"]

# The rubric's name, else its keys: how the list groups and filters loops by rubric.
_LABEL = (
    "coalesce(json_extract({col}, '$.name'), (SELECT group_concat(json_extract(value, '$.key'),"
    " ', ') FROM json_each({col}, '$.criteria')), '')"
)


@dataclass(frozen=True)
class Filters:
    """The loop list's filters; None means "any". Dates are ``YYYY-MM-DD`` (local)."""

    passed: bool | None = None
    stop_reason: str | None = None
    rubric: str | None = None
    since: float | None = None
    until: float | None = None


@dataclass(frozen=True)
class LoopRow:
    """One loop in a list."""

    loop_id: str
    started_at: float
    task: str
    rubric: str
    rounds: int
    stop_reason: str | None
    passed: bool
    final_score: float | None
    status: str = "finished"
    """``"finished"``, ``"running"`` or ``"interrupted"``, as ``gradeloop history`` says."""


@dataclass(frozen=True)
class RunRow:
    """One grading run in a list."""

    run_id: str
    started_at: float
    origin: str
    rubric: str
    drafts: int
    accepted: int


class ReadOnlyHistory(Closing):
    """A read-only view of a history database (default: ``$GRADELOOP_HOME/history.db``)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_history_path()
        if not self.path.is_file():
            raise InputError(
                f"history database file not found: {self.path}; check the path (loops and "
                "grading runs are recorded there once something has run)"
            )
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
            names = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            self._tables = {str(r[0]) for r in names.fetchall()}
        except sqlite3.Error as exc:
            raise HistoryError(f"{self.path} is not a readable history database: {exc}") from exc
        if "loops" not in self._tables and self._tables:
            raise HistoryError(f"{self.path} is a SQLite file but not a gradeloop history")

    @property
    def _rounds(self) -> str:
        # Files written since schema 4 keep each loop's round count on its row;
        # older ones (never migrated here: read-only) are counted.
        if "loop_totals" in self._tables:
            return "l.rounds"
        return "(SELECT count(*) FROM iterations i WHERE i.loop_id = l.loop_id)"

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise HistoryError(f"history database {self.path}: {exc}") from exc

    # -- loops ----------------------------------------------------------------------

    def loops(self, filters: Filters | None = None, limit: int = 200) -> list[LoopRow]:
        """Loops matching ``filters``, newest first."""
        if "loops" not in self._tables:
            return []
        f = filters or Filters()
        where, args = _loop_filters(f)
        sql = (
            f"SELECT l.loop_id, l.started_at, l.task, {_LABEL.format(col='l.rubric_json')}"
            f" AS label, {self._rounds} AS rounds, l.stop_reason, l.passed, l.final_score,"
            " l.finished_at, l.writer_host, l.writer_pid FROM loops l"
            f" WHERE {where} ORDER BY l.started_at DESC, l.rowid DESC LIMIT ?"
        )
        rows = self._rows(sql, (*args, max(1, limit)))
        return [
            LoopRow(
                loop_id=str(r["loop_id"]),
                started_at=float(r["started_at"]),
                task=str(r["task"]),
                rubric=str(r["label"]),
                rounds=int(r["rounds"]),
                stop_reason=r["stop_reason"],
                passed=bool(r["passed"]) if r["finished_at"] is not None else False,
                final_score=r["final_score"],
                status=loop_status_word(r),
            )
            for r in rows
        ]

    def choices(self) -> dict[str, list[str]]:
        """The stop reasons and rubric labels present, for the list's filter menus."""
        if "loops" not in self._tables:
            return {"stop_reason": [], "rubric": []}
        stops = self._rows(
            "SELECT DISTINCT stop_reason FROM loops WHERE stop_reason IS NOT NULL ORDER BY 1"
        )
        labels = self._rows(
            f"SELECT DISTINCT {_LABEL.format(col='rubric_json')} FROM loops ORDER BY 1 LIMIT 200"
        )
        return {"stop_reason": [str(r[0]) for r in stops], "rubric": [str(r[0]) for r in labels]}

    def resolve(self, prefix: str) -> tuple[str, str]:
        """``("loop", id)`` or ``("run", id)`` for a loop or grading-run id or prefix."""
        found: list[tuple[str, str]] = []
        for kind, table, column in (
            ("loop", "loops", "loop_id"),
            ("run", "grading_runs", "run_id"),
        ):
            if table not in self._tables:
                continue
            rows = self._rows(
                f"SELECT {column} FROM {table} WHERE {column} >= ? ORDER BY {column} LIMIT 6",
                (prefix,),
            )
            for r in rows:
                if str(r[0]) == prefix:
                    return kind, prefix
                if str(r[0]).startswith(prefix):
                    found.append((kind, str(r[0])))
        if len(found) == 1:
            return found[0]
        if not found:
            raise LoopNotFoundError(
                f"no loop or grading run id starts with {prefix!r} in {self.path}; "
                "run `gradeloop history` to list the loops"
            )
        shown = ", ".join(i for _, i in found[:5])
        raise LoopNotFoundError(f"id prefix {prefix!r} is ambiguous ({shown}); give more of it")

    def loop(self, loop_id: str) -> dict[str, Any]:
        """Everything the loop page shows: the loop row, settings and iteration records."""
        rows = self._rows("SELECT * FROM loops WHERE loop_id = ?", (loop_id,))
        if not rows:
            raise LoopNotFoundError(f"no loop {loop_id!r} in {self.path}")
        loop = dict(rows[0])
        its = self._rows(
            "SELECT iteration, record_json FROM iterations WHERE loop_id = ? ORDER BY iteration",
            (loop_id,),
        )
        where = f"loop {loop_id}"
        records = [  # a damaged round is left out, named in a HistoryWarning
            unpack_usage(record)
            for r in its
            if (record := read_record(r[1], f"{where}, round {r[0]}")) is not None
        ]
        finished = loop["finished_at"] is not None
        return {
            "status": loop_status_word(rows[0]),
            "loop_id": loop_id,
            "started_at": float(loop["started_at"]),
            "task": loop["task"],
            "rubric": read_settings(loop["rubric_json"], "rubric", where),
            "config": read_settings(loop["config_json"], "settings", where),
            "finished": finished,
            "stop_reason": loop["stop_reason"] if finished else None,
            "passed": bool(loop["passed"]) if finished else False,
            "final_score": loop["final_score"] if finished else None,
            "final_output_id": loop["final_output_id"] if finished else None,
            "total_time_ms": loop["total_time_ms"],
            "iterations": records,
            "trajectory": [judged_score(r) for r in records],
            "preferences": self._preferences(loop_id),
        }

    def _preferences(self, loop_id: str) -> list[dict[str, Any]]:
        """The loop's pairwise comparisons (none in a file older than the table)."""
        if "preferences" not in self._tables:
            return []
        rows = self._rows(
            "SELECT preference_id, created_at, origin, loop_id, a_ref, b_ref, chosen_ref, winner,"
            " reason, error, detail_json FROM preferences WHERE loop_id = ? ORDER BY created_at",
            (loop_id,),
        )
        return [preference_row(tuple(r)) for r in rows]

    # -- grading runs ---------------------------------------------------------------

    def runs(self, limit: int = 200, *, leave_out: str | None = None) -> list[RunRow]:
        """Grading runs, newest first (those of origin ``leave_out`` left out)."""
        if "grading_runs" not in self._tables:
            return []
        rows = self._rows(
            "SELECT run_id, started_at, origin, rubric_name, rubric_json, drafts, accepted"
            " FROM grading_runs WHERE origin != ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
            (leave_out or "", max(1, limit)),
        )
        out = []
        for r in rows:
            label = str(r["rubric_name"]) or _label_of(r["rubric_json"])
            out.append(
                RunRow(
                    str(r["run_id"]),
                    float(r["started_at"]),
                    str(r["origin"]),
                    label,
                    int(r["drafts"]),
                    int(r["accepted"]),
                )
            )
        return out

    def watches(self, origin: str, limit: int = 20) -> dict[str, list[dict[str, Any]]]:
        """The reward watches recorded as grading runs of ``origin``: per watch name (the
        ``limit`` most recent watches), each step's figures, oldest first."""
        if "grading_runs" not in self._tables:
            return {}
        rows = self._rows(
            "SELECT run_id, config_json FROM grading_runs WHERE origin = ?"
            " ORDER BY started_at, rowid",
            (origin,),
        )
        out: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            figures = json.loads(r["config_json"]).get("reward_watch")
            if isinstance(figures, dict):
                name = str(figures.get("watch") or "reward")
                out.setdefault(name, []).append({**figures, "run_id": str(r["run_id"])})
        newest = list(out)[-limit:]
        return {name: out[name] for name in newest}

    def run(self, run_id: str) -> dict[str, Any]:
        """One grading run with its drafts' records, in order."""
        rows = (
            self._rows("SELECT * FROM grading_runs WHERE run_id = ?", (run_id,))
            if "grading_runs" in self._tables
            else []
        )
        if not rows:
            raise LoopNotFoundError(f"no grading run {run_id!r} in {self.path}")
        run = dict(rows[0])
        drafts = self._rows(
            "SELECT position, record_json FROM graded_drafts WHERE run_id = ? ORDER BY position",
            (run_id,),
        )
        where = f"grading run {run_id}"
        rubric = read_settings(run["rubric_json"], "rubric", where)
        return {
            "run_id": run_id,
            "started_at": float(run["started_at"]),
            "origin": run["origin"],
            "rubric_name": run["rubric_name"] or rubric_label(rubric),
            "rubric": rubric,
            "config": read_settings(run["config_json"], "settings", where),
            "regrade_of": run.get("regrade_of"),  # files from before schema 8 have none
            "drafts": [  # a damaged draft is left out, named in a HistoryWarning
                record
                for r in drafts
                if (record := read_record(r[1], f"{where}, draft {r[0] + 1}")) is not None
            ],
        }

    def regrades_of(self, source_id: str) -> list[str]:
        """The grading runs that re-graded ``source_id`` (a run or loop id), oldest first."""
        if "grading_runs" not in self._tables:
            return []
        try:
            rows = self._conn.execute(
                "SELECT run_id FROM grading_runs WHERE regrade_of = ? ORDER BY started_at, rowid",
                (source_id,),
            ).fetchall()
        except sqlite3.OperationalError:  # a file from before schema 8: no regrades
            return []
        return [str(r[0]) for r in rows]


def _label_of(rubric_json: Any) -> str:
    """A listed run's rubric label from its stored rubric ("?" when that is damaged:
    the list still shows the run; opening it says what is wrong)."""
    try:
        rubric = json.loads(rubric_json)
    except (ValueError, TypeError, RecursionError):
        return "?"
    return rubric_label(rubric) if isinstance(rubric, dict) else "?"


def rubric_label(rubric: dict[str, Any]) -> str:
    """The rubric's name, else its keys (as the list's SQL computes it)."""
    if isinstance(rubric.get("name"), str) and rubric["name"]:
        return str(rubric["name"])
    criteria = rubric.get("criteria") or []
    return ", ".join(str(c.get("key")) for c in criteria if isinstance(c, dict))


def _loop_filters(f: Filters) -> tuple[str, tuple[Any, ...]]:
    where: list[str] = ["1"]
    args: list[Any] = []
    if f.passed is True:
        where.append("l.finished_at IS NOT NULL AND l.passed = 1")
    elif f.passed is False:
        where.append("(l.finished_at IS NULL OR l.passed = 0)")
    if f.stop_reason:
        where.append("l.stop_reason = ?")
        args.append(f.stop_reason)
    if f.rubric:
        where.append(f"{_LABEL.format(col='l.rubric_json')} = ?")
        args.append(f.rubric)
    if f.since is not None:
        where.append("l.started_at >= ?")
        args.append(f.since)
    if f.until is not None:
        where.append("l.started_at < ?")
        args.append(f.until)
    return " AND ".join(where), tuple(args)
