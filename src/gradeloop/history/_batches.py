"""The history store's records of Message Batches jobs (schema versions 4 and 11).

A job is written in full before anything is sent, so a killed process, a reboot or
another machine can still find it: the rubric and the judge's settings, every
request's custom id with its draft, task and cache key, and the job's parts (one
provider batch each, at most 100,000 requests). Each part's provider batch id is
added as soon as its create call returns. Texts are scrubbed like every other
record, so a draft holding a credential is graded, when collected, without it.

A jury's job (version 11) sends one request per draft and member: the draft's row
holds its first member's request, ``batch_member_requests`` the other members' (the
draft is stored once), and each part names the client it went through (members
sharing a client share its batches). A job written before version 11 reads as a
one-judge job whose parts all went through client 0.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HistoryError, LoopNotFoundError
from ._scrub import scrub_rubric, scrub_settings, scrub_text

__all__ = [
    "BatchJobRecord",
    "BatchPart",
    "BatchRecords",
    "BatchRequestRecord",
    "MemberRequestRecord",
]


@dataclass(frozen=True)
class BatchRequestRecord:
    """One request of a job: its custom id, which part it went in, and its draft."""

    custom_id: str
    part: int
    position: int
    item_id: str
    task: str
    draft: str
    cache_key: str


@dataclass(frozen=True)
class MemberRequestRecord:
    """A jury member's request for a draft (members after the first; the first one's
    is the draft's :class:`BatchRequestRecord`)."""

    custom_id: str
    part: int
    position: int
    member: int
    cache_key: str


@dataclass(frozen=True)
class BatchPart:
    """One provider batch of a job (``batch_id`` None until its create call returned);
    ``client`` numbers the API client it went through (a jury's members may use several)."""

    part: int
    batch_id: str | None
    requests: int
    error: str | None = None
    client: int = 0


@dataclass(frozen=True)
class BatchJobRecord:
    """A job as stored: ``status`` is ``submitting``, ``submitted``, ``collected`` or
    ``submit_failed``."""

    job_id: str
    created_at: float
    status: str
    rubric: dict[str, Any]
    judge: dict[str, Any]
    requests: int
    parts: tuple[BatchPart, ...]
    collected_at: float | None = None
    run_id: str | None = None


class BatchRecords:
    """Store and read Message Batches jobs."""

    path: Path

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def add_batch_job(
        self,
        job_id: str,
        *,
        rubric: Mapping[str, Any],
        judge: Mapping[str, Any],
        requests: Sequence[BatchRequestRecord],
        member_requests: Sequence[MemberRequestRecord] = (),
        part_clients: Mapping[int, int] | None = None,
    ) -> None:
        """Record a job and all its requests in one transaction, before submission.

        ``member_requests`` are a jury's other members' requests; ``part_clients``
        maps each part to the client it goes through (default 0)."""
        parts: dict[int, int] = {}
        for part in [r.part for r in requests] + [m.part for m in member_requests]:
            parts[part] = parts.get(part, 0) + 1
        clients = part_clients or {}
        with self._write() as conn:
            try:
                conn.execute(
                    "INSERT INTO batch_jobs (job_id, created_at, status, rubric_json,"
                    " judge_json, requests) VALUES (?, ?, 'submitting', ?, ?, ?)",
                    (
                        job_id,
                        time.time(),
                        _dumps(scrub_rubric(rubric)),
                        _dumps(scrub_settings(dict(judge))),
                        len(requests) + len(member_requests),
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise HistoryError(f"batch job {job_id!r} is already in {self.path}") from exc
            conn.executemany(
                "INSERT INTO batch_parts (job_id, part, requests, client) VALUES (?, ?, ?, ?)",
                [(job_id, part, n, clients.get(part, 0)) for part, n in sorted(parts.items())],
            )
            conn.executemany(
                "INSERT INTO batch_member_requests (job_id, custom_id, part, position, member,"
                " cache_key) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (job_id, m.custom_id, m.part, m.position, m.member, m.cache_key)
                    for m in member_requests
                ],
            )
            conn.executemany(
                "INSERT INTO batch_requests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        job_id,
                        r.custom_id,
                        r.part,
                        r.position,
                        scrub_text(r.item_id),
                        scrub_text(r.task),
                        scrub_text(r.draft),
                        r.cache_key,
                    )
                    for r in requests
                ],
            )

    def set_batch_part(
        self, job_id: str, part: int, *, batch_id: str | None = None, error: str | None = None
    ) -> None:
        """Record a part's provider batch id (or why its submission failed)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE batch_parts SET batch_id = coalesce(?, batch_id), error = ?"
                " WHERE job_id = ? AND part = ?",
                (batch_id, None if error is None else scrub_text(error), job_id, part),
            )

    def set_batch_status(self, job_id: str, status: str, *, run_id: str | None = None) -> None:
        """Move a job to ``status`` (``collected`` also records the grading run id)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE batch_jobs SET status = ?, run_id = coalesce(?, run_id),"
                " collected_at = CASE WHEN ? = 'collected' THEN ? ELSE collected_at END"
                " WHERE job_id = ?",
                (status, run_id, status, time.time(), job_id),
            )

    def batch_job(self, ident: str) -> BatchJobRecord:
        """The job ``ident`` names: a job id, a unique prefix of one, or one of its
        parts' provider batch ids."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT job_id FROM batch_parts WHERE batch_id = ?", (ident,)
            ).fetchone()
            job_id = row[0] if row is not None else _resolve(conn, ident, self.path)
            job = conn.execute("SELECT * FROM batch_jobs WHERE job_id = ?", (job_id,)).fetchone()
            parts = conn.execute(
                "SELECT part, batch_id, requests, error, client FROM batch_parts WHERE job_id = ?"
                " ORDER BY part",
                (job_id,),
            ).fetchall()
        return BatchJobRecord(
            job_id=job["job_id"],
            created_at=float(job["created_at"]),
            status=job["status"],
            rubric=json.loads(job["rubric_json"]),
            judge=json.loads(job["judge_json"]),
            requests=int(job["requests"]),
            parts=tuple(BatchPart(*tuple(p)) for p in parts),
            collected_at=job["collected_at"],
            run_id=job["run_id"],
        )

    def batch_requests(self, job_id: str) -> list[BatchRequestRecord]:
        """Every request of a job, in submission order."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT custom_id, part, position, item_id, task, draft, cache_key"
                " FROM batch_requests WHERE job_id = ? ORDER BY position",
                (job_id,),
            ).fetchall()
        return [BatchRequestRecord(*tuple(r)) for r in rows]

    def batch_member_requests(self, job_id: str) -> list[MemberRequestRecord]:
        """A jury job's requests of members after the first, by draft then member
        (empty for a one-judge job)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT custom_id, part, position, member, cache_key FROM batch_member_requests"
                " WHERE job_id = ? ORDER BY position, member",
                (job_id,),
            ).fetchall()
        return [MemberRequestRecord(*tuple(r)) for r in rows]

    def list_batch_jobs(self, limit: int = 20) -> list[BatchJobRecord]:
        """Recorded jobs, newest first."""
        with self._read() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT job_id FROM batch_jobs ORDER BY created_at DESC, rowid DESC LIMIT ?",
                    (max(0, int(limit)),),
                ).fetchall()
            ]
        return [self.batch_job(i) for i in ids]


def _resolve(conn: sqlite3.Connection, ident: str, path: Path) -> str:
    hint = "run `gradeloop batch list` to see the recorded jobs"
    if not ident:
        raise LoopNotFoundError(f"an empty batch id matches nothing; {hint}")
    rows = conn.execute(
        "SELECT job_id FROM batch_jobs WHERE job_id >= ? AND job_id < ? ORDER BY job_id LIMIT 3",
        (ident, ident + "\U0010ffff"),
    ).fetchall()
    ids = [r[0] for r in rows]
    if ident in ids or len(ids) == 1:
        return ident if ident in ids else str(ids[0])
    if not ids:
        raise LoopNotFoundError(f"no batch job or batch {ident!r} in {path}; {hint}")
    raise LoopNotFoundError(f"batch job prefix {ident!r} is ambiguous; give more characters")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
