"""JudgeCache: judge replies kept on disk, reused for exactly the same request.

One SQLite file (``$GRADELOOP_HOME/cache.db`` by default) in WAL mode, shared by
threads, tasks and processes. A key is :func:`gradeloop.models._digest.request_digest`
of the whole request (model, system text, wire schema, the task and draft, max tokens,
sampling and thinking settings), so a reply is only ever reused for an identical
request: a cached verdict is still a fresh-context verdict. Only replies that
validated are stored (the judge never stores a refusal, a truncation, an invalid
reply or an API error).

Each entry is bound to its request: beside the reply it keeps an HMAC-SHA256 of the
key, the model and the reply text under a secret of this ``$GRADELOOP_HOME``
(``GRADELOOP_CACHE_SECRET`` when set, else the file ``cache.secret``, made on first
use, readable by its owner only). An entry whose digest does not match - edited,
copied from another request, written by another home, or stored before entries were
bound - is never used: it is deleted and the judge is asked again.

A file SQLite reports damaged is set aside (renamed ``<name>.damaged-<time>``, with
one :class:`~gradeloop.errors.CacheWarning` naming it) and a new cache is started:
grading goes on, and ``clear`` always works.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ..errors import CacheWarning, HistoryError
from ._paths import gradeloop_home
from ._sql import _create_private, _enable_wal, retry_locked

T = TypeVar("T")

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
_VERSION = 2  # 2: the digest that binds each reply to its request (column mac)
# SQLite's result codes for a damaged file (the sqlite3 module names them from 3.11)
_DAMAGED = {getattr(sqlite3, "SQLITE_CORRUPT", 11), getattr(sqlite3, "SQLITE_NOTADB", 26)}
_SECRET_ENV = "GRADELOOP_CACHE_SECRET"


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
    session_rejected: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(vars(self))


class JudgeCache:
    """A persistent cache of valid judge replies (pass it as ``AnthropicJudge(cache=...)``
    or ``grade_many(..., cache=...)``).

    ``path`` defaults to ``$GRADELOOP_HOME/cache.db``. ``ttl`` (seconds) makes older
    entries misses. ``.hits`` / ``.misses`` count this object's lookups;
    ``.rejected`` the entries among the misses whose digest did not match their
    request (deleted, never used).
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
        self.rejected = 0
        self._timeout = timeout
        self._secret = cache_secret()
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = _open(self.path, timeout)
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)

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
        """The stored reply text for ``key``, or None (absent, older than ``ttl``, or
        not bound to this request by its digest: then it is deleted)."""
        now = time.time()

        def look(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT text, created_at, model, mac FROM replies WHERE key = ?", (key,)
            ).fetchone()
            fresh = row is not None and (self.ttl is None or now - row[1] <= self.ttl)
            if fresh and not hmac.compare_digest(
                str(row[3] or ""), self._digest(key, str(row[2]), str(row[0]))
            ):
                self.rejected += 1
                self._write(conn, "DELETE FROM replies WHERE key = ?", (key,))
                fresh = False
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

        return self._run(look)

    def put(self, key: str, text: str, *, model: str) -> None:
        """Store ``text`` (a reply that validated) under ``key``, replacing any older one."""
        mac = self._digest(key, model, text)
        self._run(
            lambda conn: self._write(
                conn,
                "INSERT OR REPLACE INTO replies (key, model, text, created_at, mac)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, model, text, time.time(), mac),
            )
        )

    def discard(self, key: str) -> None:
        """Forget ``key`` (the judge does this for an entry that no longer validates)."""
        self._run(lambda conn: self._write(conn, "DELETE FROM replies WHERE key = ?", (key,)))

    def _digest(self, key: str, model: str, text: str) -> str:
        """What binds a reply to its request: an HMAC under this home's secret."""
        message = "\0".join((key, model, text)).encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    # -- looking after it --------------------------------------------------------------

    def __len__(self) -> int:
        row = self._run(lambda conn: conn.execute("SELECT count(*) FROM replies").fetchone())
        return int(row[0])

    def clear(self, *, older_than: float | None = None) -> int:
        """Delete every entry (or those stored more than ``older_than`` seconds ago);
        returns how many were deleted."""
        sql, args = "DELETE FROM replies", tuple[Any, ...]()
        if older_than is not None:
            sql, args = "DELETE FROM replies WHERE created_at < ?", (time.time() - older_than,)
        cursor = self._run(lambda conn: self._write(conn, sql, args))
        return max(0, cursor.rowcount)

    def stats(self) -> CacheStats:
        """How many entries, how big, how often reused, and by which models."""

        def read(conn: sqlite3.Connection) -> tuple[Any, list[Any]]:
            totals = conn.execute(
                "SELECT count(*), coalesce(sum(length(CAST(text AS BLOB))), 0),"
                " coalesce(sum(hits), 0), min(created_at), max(created_at) FROM replies"
            ).fetchone()
            models = conn.execute(
                "SELECT model, count(*) FROM replies GROUP BY model ORDER BY model"
            ).fetchall()
            return totals, models

        (count, size, hits, oldest, newest), models = self._run(read)
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
            session_rejected=self.rejected,
        )

    # -- plumbing ------------------------------------------------------------------------

    def _run(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """``action`` on the connection, under the lock; once more on a new cache if
        SQLite reports the file damaged (which is set aside first)."""
        with self._lock:
            try:
                return action(self._connection())
            except sqlite3.DatabaseError as exc:
                if getattr(exc, "sqlite_errorcode", None) not in _DAMAGED:
                    raise HistoryError(f"judge cache {self.path}: {exc}") from exc
                self._set_aside(exc)
                return action(self._connection())

    def _set_aside(self, exc: sqlite3.DatabaseError) -> None:
        """Rename the damaged file (and its -wal/-shm), say so once, start a new one."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if not _ours_to_move(self.path, exc):
            raise HistoryError(
                f"{self.path} is not a gradeloop judge cache ({exc}); give JudgeCache the "
                "path of a cache, or a new path"
            ) from exc
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while aside.exists():  # set aside twice in one second: keep both
            n += 1
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{self.path}{suffix}")
            if part.exists():
                part.replace(f"{aside}{suffix}")
        warnings.warn(
            f"the judge cache {self.path} is damaged ({exc}); it was set aside as {aside} "
            "and a new, empty cache started (delete the old file when you no longer need it)",
            CacheWarning,
            stacklevel=4,
        )
        self._conn = _open(self.path, self._timeout)

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
                # a damaged file may refuse even that; the caller sets it aside
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError) and exc.sqlite_errorcode in _DAMAGED:
                raise
            raise HistoryError(f"judge cache {self.path}: {exc}") from exc
        return cursor


def cache_secret() -> bytes:
    """This home's secret for binding entries to requests: ``GRADELOOP_CACHE_SECRET``,
    else ``$GRADELOOP_HOME/cache.secret`` (32 random bytes, made on first use)."""
    given = os.environ.get(_SECRET_ENV, "")
    if given:
        return given.encode("utf-8", "surrogatepass")
    path = gradeloop_home() / "cache.secret"
    for _ in range(2):
        try:
            secret = path.read_bytes()
        except FileNotFoundError:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue  # another process made it meanwhile: read theirs
            except OSError as exc:
                raise HistoryError(f"cannot create the cache secret {path}: {exc}") from exc
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(32))
            continue
        except OSError as exc:
            raise HistoryError(f"cannot read the cache secret {path}: {exc}") from exc
        if len(secret) >= 16:
            return secret
        raise HistoryError(
            f"the cache secret {path} is too short ({len(secret)} bytes); delete it and a "
            "new one is made (cached verdicts are then asked again)"
        )
    raise HistoryError(f"cannot read the cache secret {path}")


def _ours_to_move(path: Path, exc: sqlite3.DatabaseError) -> bool:
    """Whether a damaged file may be renamed: a SQLite file with damaged pages, or the
    default cache in gradeloop's own home. A file a caller named that is not SQLite at
    all (a mistyped path) is never moved."""
    if getattr(exc, "sqlite_errorcode", None) != getattr(sqlite3, "SQLITE_NOTADB", 26):
        return True
    if path.resolve() == default_cache_path().resolve():
        return True
    try:
        with path.open("rb") as f:
            return f.read(16) == b"SQLite format 3\0"
    except OSError:
        return False


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
        if getattr(exc, "sqlite_errorcode", None) in _DAMAGED:
            raise  # JudgeCache sets it aside
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
            columns = {row[1] for row in conn.execute("PRAGMA table_info(replies)")}
            if "mac" not in columns:  # version 1: its entries, unbound, become misses
                conn.execute("ALTER TABLE replies ADD COLUMN mac TEXT")
            conn.execute(f"PRAGMA user_version = {_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
