"""Where a Message Batches job stands: every one of its batches, through its own client.

A job has one batch per part, and a jury's job parts on several API clients; each
batch is asked about through the client it was created with (the judge's, or the
jury member's whose client the job recorded for that part), or through one
``client`` given for them all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import BatchError
from ...history._batches import BatchJobRecord
from ...history._store import HistoryStore
from ._members import members_for_collect
from ._submit import BatchJob

__all__ = ["BatchStatus", "PartStatus", "open_store", "part_clients", "status", "wait"]

COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


@dataclass(frozen=True)
class PartStatus:
    """One provider batch of a job: ``processing_status`` is the API's
    (``in_progress``, ``canceling``, ``ended``) or ``not_submitted``; ``client`` the
    number of the API client it went through (a jury's members may use several)."""

    part: int
    batch_id: str | None
    processing_status: str
    counts: dict[str, int]
    client: int = 0


@dataclass(frozen=True)
class BatchStatus:
    """Where a job stands: each part, and the request counts added up."""

    job_id: str
    requests: int
    parts: tuple[PartStatus, ...]

    @property
    def ended(self) -> bool:
        """Every submitted part has ended (results can be collected)."""
        return all(p.processing_status in ("ended", "not_submitted") for p in self.parts)

    @property
    def counts(self) -> dict[str, int]:
        """Requests per state, over all parts."""
        return {k: sum(p.counts.get(k, 0) for p in self.parts) for k in COUNTS}

    def line(self) -> str:
        """One line for a person: ``job gb..: in_progress, 40 processing, 60 succeeded``."""
        states = sorted({p.processing_status for p in self.parts})
        counts = ", ".join(f"{n:,} {k}" for k, n in self.counts.items() if n)
        return f"batch job {self.job_id}: {'/'.join(states)}; {counts or 'no counts yet'}"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "job_id": self.job_id,
            "requests": self.requests,
            "ended": self.ended,
            "counts": self.counts,
            "parts": [vars(p) for p in self.parts],
        }


def job_record(ident: str | BatchJob, store: HistoryStore) -> BatchJobRecord:
    """The stored job ``ident`` names (a job id, a prefix, a batch id, a BatchJob)."""
    return store.batch_job(ident.job_id if isinstance(ident, BatchJob) else ident)


def part_clients(job: BatchJobRecord, *, client: Any = None, judge: Any = None) -> dict[int, Any]:
    """The client to ask about each part: ``client`` for all, else the one the job's
    judge (or the jury member the job recorded for the part's client) holds."""
    if client is not None:
        return {p.part: client for p in job.parts}
    if judge is None:
        raise TypeError("give the client the job's batches went through, or its judge")
    by_number: dict[int, Any] = {}
    for m in members_for_collect(job.job_id, job.judge, judge):
        by_number.setdefault(m.client, m.judge.client)
    missing = sorted({p.client for p in job.parts} - set(by_number))
    if missing:
        raise BatchError(
            f"batch job {job.job_id} went through clients {missing} that no judge given "
            "holds; collect it with the jury it was submitted to",
            job_id=job.job_id,
        )
    return {p.part: by_number[p.client] for p in job.parts}


def status(
    job: str | BatchJob,
    *,
    client: Any = None,
    judge: Any = None,
    store: HistoryStore | None = None,
) -> BatchStatus:
    """Ask the API where each part of ``job`` (a job id, a batch id or a BatchJob)
    stands: through ``client`` for every part, or through the clients of ``judge``
    (an AnthropicJudge, or the Jury the job was submitted to, each part through its
    member's client)."""
    with open_store(store) as s:
        record = job_record(job, s)
    clients = part_clients(record, client=client, judge=judge)
    parts = []
    for p in record.parts:
        if p.batch_id is None:
            parts.append(PartStatus(p.part, None, "not_submitted", {}, p.client))
            continue
        batch = clients[p.part].messages.batches.retrieve(p.batch_id)
        counts = {k: int(getattr(batch.request_counts, k, 0) or 0) for k in COUNTS}
        parts.append(PartStatus(p.part, p.batch_id, str(batch.processing_status), counts, p.client))
    return BatchStatus(record.job_id, record.requests, tuple(parts))


def wait(
    job: str | BatchJob,
    *,
    client: Any = None,
    judge: Any = None,
    store: HistoryStore | None = None,
    poll: float = 5.0,
    max_poll: float = 60.0,
    timeout: float | None = None,
    on_status: Callable[[BatchStatus], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> BatchStatus:
    """Poll (as :func:`status`, through ``client`` or ``judge``) until every part has
    ended, waiting ``poll`` seconds at first and half as long again each time, up to
    ``max_poll``. Raises :class:`BatchError` after ``timeout`` seconds (the job goes
    on; collect it later)."""
    started = time.monotonic()
    delay = poll
    while True:
        now = status(job, client=client, judge=judge, store=store)
        if on_status is not None:
            on_status(now)
        if now.ended:
            return now
        if timeout is not None and time.monotonic() - started + delay > timeout:
            raise BatchError(
                f"{now.line()}; still processing after {timeout:g}s. It goes on without "
                f"us: run `gradeloop batch collect {now.job_id}` later",
                job_id=now.job_id,
            )
        sleep(delay)
        delay = min(max_poll, delay * 1.5)


class open_store:
    """The given store, or the default one opened (and closed) for the call."""

    def __init__(self, store: HistoryStore | None) -> None:
        self._given = store
        self._own: HistoryStore | None = None

    def __enter__(self) -> HistoryStore:
        if self._given is not None:
            return self._given
        self._own = HistoryStore()
        return self._own

    def __exit__(self, *exc: object) -> None:
        if self._own is not None:
            self._own.close()
