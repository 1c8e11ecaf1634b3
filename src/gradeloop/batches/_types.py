"""What the batch functions return: a submitted job, where it stands, what it gave."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..grading._grade import Evaluation
from ..history._store import HistoryStore

__all__ = ["COUNTS", "BatchJob", "BatchResult", "BatchStatus", "PartStatus", "opened_store"]

COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


@dataclass(frozen=True)
class BatchJob:
    """A submitted job: its id (for ``gradeloop batch status|collect``), the provider's
    batch ids (one per part), and how many requests it holds."""

    job_id: str
    batch_ids: tuple[str, ...]
    requests: int

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"job_id": self.job_id, "batch_ids": list(self.batch_ids), "requests": self.requests}


@dataclass(frozen=True)
class PartStatus:
    """One provider batch of a job: ``processing_status`` is the API's
    (``in_progress``, ``canceling``, ``ended``) or ``not_submitted``."""

    part: int
    batch_id: str | None
    processing_status: str
    counts: dict[str, int]


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


@dataclass
class BatchResult:
    """A collected job: one evaluation per draft, in submission order (ids set)."""

    job_id: str
    evaluations: list[Evaluation]
    run_id: str | None = None
    outcomes: dict[str, int] = field(default_factory=dict)
    unmatched: int = 0  # results whose custom id is not in the job (ignored)
    duplicated: int = 0  # ids with more than one result (all set aside: duplicate_result)
    unreadable: int = 0  # result lines that are not a result (not JSON, wrong shape)

    def problems(self) -> list[str]:
        """What was wrong with the results stream, one phrase each (empty: nothing)."""
        out = []
        if self.unmatched:
            out.append(f"{_n(self.unmatched, 'result')} for ids not in this job ignored")
        if self.duplicated:
            out.append(
                f"{_n(self.duplicated, 'id')} with more than one result: all set aside, "
                "the draft reported duplicate_result"
            )
        if self.unreadable:
            out.append(f"{_n(self.unreadable, 'result line')} that could not be read skipped")
        return out


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


class opened_store:
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
