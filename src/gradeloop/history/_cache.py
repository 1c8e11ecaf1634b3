"""JudgeCache: judge replies kept on disk, reused for exactly the same request.

One SQLite file (``$GRADELOOP_HOME/cache.db`` by default) in WAL mode, shared by
threads, tasks and processes. A key is :func:`gradeloop.models._digest.request_digest`
of the whole request (model, system text, wire schema, the task and draft, max tokens,
sampling and thinking settings), so a reply is only ever reused for an identical
request: a cached verdict is still a fresh-context verdict. Only replies that
validated are stored (the judge never stores a refusal, a truncation, an invalid
reply or an API error).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import HistoryError
from ._paths import gradeloop_home
from ._sql import _create_private, _enable_wal, retry_locked

__all__ = ["CacheStats", "JudgeCache", "default_cache_path"]

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS replies (
        key         TEXT PRIMARY KEY,
        model       TEXT NOT NULL,
        text        TEXT NOT NULL,
        created_at  REAL NOT NULL,
        hits        INTEGER NOT NULL DEFAULT 0,
        last_hit_at REAL
    )
    """,
    "CREATE INDEX IF NOT EXISTS replies_by_age ON replies (created_at)",
)
_VERSION = 1


def default_cache_path() -> Path:
    """``gradeloop_home() / "cache.db"``."""
    return gradeloop_home() / "cache.db"


@dataclass(frozen=True)
class CacheStats:
    """What :meth:`JudgeCache.stats` reports. Times are epoch seconds."""

    path: str
    entries: int
    text_bytes: int
    file_bytes: int
    hits: int
    oldest: float | None
    newest: float | None
    by_model: dict[str, int]
    session_hits: int = 0
    session_misses: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(vars(self))


class JudgeCache:
    """A persistent cache of valid judge replies (pass it as ``AnthropicJudge(cache=...)``
    or ``grade_many(..., cache=...)``).

    ``path`` defaults to ``$GRADELOOP_HOME/cache.db``. ``ttl`` (seconds) makes older
    entries misses. ``.hits`` / ``.misses`` count this object's lookups.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        ttl: float | None = None,
        timeout: float = 30.0,
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive seconds (or None for no limit), not {ttl}")
        self.path = Path(path) if path is not None else default_cache_path()
        self.ttl = ttl
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = _open(self.path, timeout)

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r}, ttl={self.ttl!r})"

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the file. Closing twice is harmless; any other use then fails."""
        with self._lock:
            if self._conn is not None and os.getpid() == self._pid:
                self._conn.close()
            self._conn = None

    # -- the judge's three calls -------------------------------------------------------

    def get(self, key: str) -> str | None:
        """The stored reply text for ``key``, or None (absent, or older than ``ttl``)."""
        now = time.time()
        with self._lock:
            conn = self._connection()
            row = conn.execute(
                "SELECT text, created_at FROM replies WHERE key = ?", (key,)
            ).fetchone()
            fresh = row is not None and (self.ttl is None or now - row[1] <= self.ttl)
            if not fresh:
                self.misses += 1
                return None
            self._write(
                conn,
                "UPDATE replies SET hits = hits + 1, last_hit_at = ? WHERE key = ?",
                (now, key),
            )
            self.hits += 1
            return str(row[0])

    def put(self, key: str, text: str, *, model: str) -> None:
        """Store ``text`` (a reply that validated) under ``key``, replacing any older one."""
        with self._lock:
            self._write(
                self._connection(),
                "INSERT OR REPLACE INTO replies (key, model, text, created_at) VALUES (?, ?, ?, ?)",
                (key, model, text, time.time()),
            )

    def discard(self, key: str) -> None:
        """Forget ``key`` (the judge does this for an entry that no longer validates)."""
        with self._lock:
            self._write(self._connection(), "DELETE FROM replies WHERE key = ?", (key,))

    # -- looking after it --------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock:
            row = self._connection().execute("SELECT count(*) FROM replies").fetchone()
        return int(row[0])

    def clear(self, *, older_than: float | None = None) -> int:
        """Delete every entry (or those stored more than ``older_than`` seconds ago);
        returns how many were deleted."""
        sql, args = "DELETE FROM replies", tuple[Any, ...]()
        if older_than is not None:
            sql, args = "DELETE FROM replies WHERE created_at < ?", (time.time() - older_than,)
        with self._lock:
            conn = self._connection()
            cursor = self._write(conn, sql, args)
            deleted = cursor.rowcount
        return max(0, deleted)

    def stats(self) -> CacheStats:
        """How many entries, how big, how often reused, and by which models."""
        with self._lock:
            conn = self._connection()
            count, size, hits, oldest, newest = conn.execute(
                "SELECT count(*), coalesce(sum(length(CAST(text AS BLOB))), 0),"
                " coalesce(sum(hits), 0), min(created_at), max(created_at) FROM replies"
            ).fetchone()
            models = conn.execute(
                "SELECT model, count(*) FROM replies GROUP BY model ORDER BY model"
            ).fetchall()
        file_bytes = sum(
            p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists()
        )
        return CacheStats(
            path=str(self.path),
            entries=int(count),
            text_bytes=int(size),
            file_bytes=file_bytes,
            hits=int(hits),
            oldest=oldest,
            newest=newest,
            by_model={str(m): int(n) for m, n in models},
            session_hits=self.hits,
            session_misses=self.misses,
        )

    # -- plumbing ------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise HistoryError(f"the judge cache {self.path} is closed")
        if os.getpid() != self._pid:
            raise HistoryError("a JudgeCache cannot be used in a child process; open a new one")
        return self._conn

    def _write(self, conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> sqlite3.Cursor:
        try:
            conn.execute("BEGIN IMMEDIATE")
            cursor = conn.execute(sql, args)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise HistoryError(f"judge cache {self.path}: {exc}") from exc
        return cursor


def _open(path: Path, timeout: float) -> sqlite3.Connection:
    _create_private(path)
    try:
        conn = sqlite3.connect(
            str(path), timeout=timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise HistoryError(f"cannot open the judge cache {path}: {exc}") from exc
    try:
        retry_locked(lambda: _prepare(conn), timeout)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise HistoryError(
            f"{path} is not a gradeloop judge cache ({exc}); delete it (it is only a cache) "
            "or give JudgeCache another path"
        ) from exc
    return conn


def _prepare(conn: sqlite3.Connection) -> None:
    _enable_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > _VERSION:
        raise sqlite3.DatabaseError(f"cache schema version {version} is newer than this gradeloop")
    if version < _VERSION:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
