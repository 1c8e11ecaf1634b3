"""The history database's schema, its migrations, and opening a connection to it.

The schema version lives in ``PRAGMA user_version``. ``MIGRATIONS[i]`` takes a
database from version ``i`` to ``i + 1``; each is applied in its own ``BEGIN
IMMEDIATE`` transaction together with the version bump, so a migration is either
wholly applied or not at all, and two processes opening a fresh file at once do not
both apply it (the second re-reads the version under the write lock and finds
nothing to do). Migrations only ever move forward; never edit a released one, append
a new one.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import HistoryError
from ._cost import cost_migration, unrounded_migration
from ._preferences import preferences_migration
from ._rollup import rollup_migration
from ._tool_outputs import tool_outputs_migration

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "connect",
    "migrate",
    "retry_locked",
    "schema_version",
]

T = TypeVar("T")

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: loops and their iterations.
    (
        """
        CREATE TABLE loops (
            loop_id         TEXT PRIMARY KEY,
            started_at      REAL NOT NULL,
            task            TEXT NOT NULL,
            rubric_json     TEXT NOT NULL,
            config_json     TEXT NOT NULL,
            writer_host     TEXT NOT NULL,
            writer_pid      INTEGER NOT NULL,
            finished_at     REAL,
            final_output_id TEXT,
            passed          INTEGER,
            stop_reason     TEXT,
            total_time_ms   REAL,
            final_score     REAL
        )
        """,
        "CREATE INDEX loops_by_start ON loops (started_at DESC)",
        """
        CREATE TABLE iterations (
            loop_id       TEXT NOT NULL REFERENCES loops (loop_id) ON DELETE CASCADE,
            iteration     INTEGER NOT NULL,
            output_id     TEXT NOT NULL,
            overall_score REAL,
            passed        INTEGER NOT NULL,
            judge_failed  INTEGER NOT NULL,
            complete      INTEGER NOT NULL,
            recorded_at   REAL NOT NULL,
            record_json   TEXT NOT NULL,
            PRIMARY KEY (loop_id, iteration)
        )
        """,
        "CREATE INDEX iterations_by_output ON iterations (output_id)",
    ),
    # 2: shadow outcomes (a key's primary and shadow answers on one draft) and judge
    # calibration runs against human labels, with their per-key figures.
    (
        """
        CREATE TABLE shadow_results (
            id          INTEGER PRIMARY KEY,
            recorded_at REAL NOT NULL,
            origin      TEXT NOT NULL,
            loop_id     TEXT REFERENCES loops (loop_id) ON DELETE CASCADE,
            output_id   TEXT NOT NULL,
            key         TEXT NOT NULL,
            primary_by  TEXT NOT NULL,
            shadow_by   TEXT NOT NULL,
            status      TEXT NOT NULL,
            agree       INTEGER,
            record_json TEXT NOT NULL
        )
        """,
        "CREATE INDEX shadow_results_by_key ON shadow_results (key, agree)",
        "CREATE INDEX shadow_results_by_output ON shadow_results (output_id)",
        """
        CREATE TABLE calibration_runs (
            run_id        TEXT PRIMARY KEY,
            started_at    REAL NOT NULL,
            rubric_name   TEXT NOT NULL,
            rubric_json   TEXT NOT NULL,
            labels_digest TEXT NOT NULL,
            labels_path   TEXT,
            judge_model   TEXT,
            items         INTEGER NOT NULL,
            report_json   TEXT NOT NULL
        )
        """,
        "CREATE INDEX calibration_runs_by_rubric ON calibration_runs (rubric_name, started_at)",
        """
        CREATE TABLE calibration_keys (
            run_id      TEXT NOT NULL REFERENCES calibration_runs (run_id) ON DELETE CASCADE,
            key         TEXT NOT NULL,
            role        TEXT NOT NULL,
            rated_by    TEXT NOT NULL,
            scale       TEXT NOT NULL,
            labels      INTEGER NOT NULL,
            agreement   REAL,
            kappa       REAL,
            mae         REAL,
            correlation REAL,
            PRIMARY KEY (run_id, key, role)
        )
        """,
    ),
    # 3: grading runs (drafts graded together by one rubric, outside any loop) and
    # their drafts, each with its full per-key record.
    (
        """
        CREATE TABLE grading_runs (
            run_id      TEXT PRIMARY KEY,
            started_at  REAL NOT NULL,
            origin      TEXT NOT NULL,
            rubric_name TEXT NOT NULL,
            rubric_json TEXT NOT NULL,
            config_json TEXT NOT NULL,
            drafts      INTEGER NOT NULL,
            accepted    INTEGER NOT NULL
        )
        """,
        "CREATE INDEX grading_runs_by_start ON grading_runs (started_at DESC)",
        """
        CREATE TABLE graded_drafts (
            run_id        TEXT NOT NULL REFERENCES grading_runs (run_id) ON DELETE CASCADE,
            position      INTEGER NOT NULL,
            item_id       TEXT NOT NULL,
            accepted      INTEGER NOT NULL,
            overall_score REAL,
            record_json   TEXT NOT NULL,
            PRIMARY KEY (run_id, position)
        )
        """,
    ),
    # 4: Message Batches jobs, written before anything is submitted: the job (rubric
    # and judge settings), its parts (one provider batch each, the id filled in once
    # the create call returns) and every request (custom id -> draft).
    (
        """
        CREATE TABLE batch_jobs (
            job_id        TEXT PRIMARY KEY,
            created_at    REAL NOT NULL,
            status        TEXT NOT NULL,
            rubric_json   TEXT NOT NULL,
            judge_json    TEXT NOT NULL,
            requests      INTEGER NOT NULL,
            collected_at  REAL,
            run_id        TEXT
        )
        """,
        "CREATE INDEX batch_jobs_by_start ON batch_jobs (created_at DESC)",
        """
        CREATE TABLE batch_parts (
            job_id    TEXT NOT NULL REFERENCES batch_jobs (job_id) ON DELETE CASCADE,
            part      INTEGER NOT NULL,
            batch_id  TEXT UNIQUE,
            requests  INTEGER NOT NULL,
            error     TEXT,
            PRIMARY KEY (job_id, part)
        )
        """,
        """
        CREATE TABLE batch_requests (
            job_id    TEXT NOT NULL REFERENCES batch_jobs (job_id) ON DELETE CASCADE,
            custom_id TEXT NOT NULL,
            part      INTEGER NOT NULL,
            position  INTEGER NOT NULL,
            item_id   TEXT NOT NULL,
            task      TEXT NOT NULL,
            draft     TEXT NOT NULL,
            cache_key TEXT NOT NULL,
            PRIMARY KEY (job_id, custom_id)
        )
        """,
    ),
    # 5: each loop's roll-up (rounds, first and last judged score) and the totals
    # behind `gradeloop stats`, kept by triggers; shadow outcomes indexed by loop.
    rollup_migration(),
    # 6: the outputs the function-calling tools hand out, so a tool-driven loop can be
    # read back (a long-lived server keeps only recent loops in memory; a restarted
    # one continues where the last left off).
    tool_outputs_migration(),
    # 7: what each loop cost in dollars, and the totals behind `gradeloop stats`' cost,
    # kept by triggers as rounds are written.
    cost_migration(),
    # 8: a grading run that re-grades the drafts of an earlier run or loop names it
    # (`gradeloop regrade`), so the viewer can set a regrade beside its source.
    (
        "ALTER TABLE grading_runs ADD COLUMN regrade_of TEXT",
        "CREATE INDEX grading_runs_by_source ON grading_runs (regrade_of)",
    ),
    # 9: pairwise comparisons: the loop's select="pairwise" choices, `gradeloop prefer`.
    preferences_migration(),
    # 10: the tokens and dollars of a loop's calls that belong to no round (a generate
    # that raised), so every call a loop made is in its history.
    unrounded_migration(),
    # 11: a jury's Message Batches jobs: each part names the API client it went through
    # (0 for every part of an older job), and the requests of the jury's other members
    # (the first member's request is the draft's own row in batch_requests).
    (
        "ALTER TABLE batch_parts ADD COLUMN client INTEGER NOT NULL DEFAULT 0",
        """
        CREATE TABLE batch_member_requests (
            job_id    TEXT NOT NULL REFERENCES batch_jobs (job_id) ON DELETE CASCADE,
            custom_id TEXT NOT NULL,
            part      INTEGER NOT NULL,
            position  INTEGER NOT NULL,
            member    INTEGER NOT NULL,
            cache_key TEXT NOT NULL,
            PRIMARY KEY (job_id, custom_id)
        )
        """,
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


def connect(path: Path | str, timeout: float) -> sqlite3.Connection:
    """Open ``path``, switch it to WAL, and bring its schema up to date.

    Raises :class:`HistoryError` naming the path when the file is not a SQLite
    database, cannot be opened, or was written by a newer gradeloop.
    """
    memory = str(path) == ":memory:"
    if not memory:
        _create_private(Path(path))
    try:
        # isolation_level=None: no implicit transactions, every one is explicit below.
        # check_same_thread=False: the store serialises access with its own lock.
        # timeout is SQLite's busy_timeout: how long to wait for another writer's lock.
        conn = sqlite3.connect(
            str(path), timeout=timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise HistoryError(f"cannot open the history database {path}: {exc}") from exc
    try:
        retry_locked(lambda: _prepare(conn, path, wal=not memory), timeout)
    except sqlite3.OperationalError as exc:
        conn.close()
        raise HistoryError(f"cannot open the history database {path}: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise HistoryError(
            f"{path} is not a SQLite database ({exc}); move it aside, or use another "
            "history database (the default is under $GRADELOOP_HOME)"
        ) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _prepare(conn: sqlite3.Connection, path: Path | str, *, wal: bool) -> None:
    if wal:
        _enable_wal(conn)
    # Losing the last commit on power loss is acceptable; a killed process loses none.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, path)


def retry_locked(action: Callable[[], T], timeout: float) -> T:
    """Run ``action``, retrying while SQLite says the database is locked or busy.

    Switching a new file to WAL while other processes open it too can fail with
    "database is locked" at once, without SQLite's busy timeout being consulted
    (seen with four processes opening one new file together). Everything retried
    here is idempotent: WAL is a persistent setting, migrations are transactional.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            message = str(exc).lower()
            transient = "locked" in message or "busy" in message
            if not transient or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def schema_version(conn: sqlite3.Connection) -> int:
    """The schema version recorded in the database file."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: sqlite3.Connection, path: Path | str) -> None:
    """Apply every migration the database lacks, each in its own transaction."""
    # A cheap unlocked look first: an up-to-date file never takes the write lock.
    version = schema_version(conn)
    while version < SCHEMA_VERSION:
        version = _apply_next(conn)
    _refuse_newer(version, path)


def _apply_next(conn: sqlite3.Connection) -> int:
    """Apply the next missing migration, if any is still missing; the version after."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = schema_version(conn)  # another process may have migrated meanwhile
        if version < SCHEMA_VERSION:
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            version += 1
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return version


def _refuse_newer(version: int, path: Path | str) -> None:
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{path} was written by a newer gradeloop (history schema version {version}; "
            f"this gradeloop reads up to {SCHEMA_VERSION}); upgrade gradeloop to read it"
        )


def _enable_wal(conn: sqlite3.Connection) -> None:
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")


def _create_private(path: Path) -> None:
    """Create the folder and an empty database file readable by the owner only.

    SQLite gives its -wal and -shm files the main file's permissions, so the whole
    history stays private. An empty file is a valid empty SQLite database.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
    except OSError as exc:
        raise HistoryError(f"cannot create the history database {path}: {exc}") from exc
