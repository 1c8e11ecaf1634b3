"""Submitting drafts to the Message Batches API, recorded in the history first."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import anthropic

from ..bulk._many import DraftLike, Item, as_item
from ..errors import BatchError
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._shadow import judge_request
from ..grading._transcript import judge_text
from ..history._batches import BatchRequestRecord
from ..history._store import HistoryStore
from ..judging._jury import Jury
from ..models._batch import batch_request
from ..models._failure import describe_api_error
from ..models._judge import AnthropicJudge
from ._jury import submit_jury
from ._types import BatchJob, opened_store

__all__ = ["MAX_BYTES", "MAX_REQUESTS", "BatchJob", "judge_settings", "submit"]

#: The API's limits for one batch; a job above them is split into several batches.
MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1000 * 1000


def judge_settings(judge: AnthropicJudge) -> dict[str, Any]:
    """What a judge needs to read the job's replies later, as stored with the job."""
    return {
        "model": judge.model,
        "max_tokens": judge.max_tokens,
        "structured": judge.mode,  # the mode the requests were built in
        "feedback": judge.feedback,
        "cache_ttl": judge.cache_ttl,
        "extra_body": judge.extra_body,
    }


def submit(
    drafts: Iterable[str | DraftLike],
    rubric: Rubric | Mapping[str, Any],
    *,
    judge: AnthropicJudge | Jury,
    task: str = "",
    store: HistoryStore | None = None,
    registry: Registry | None = None,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
    job_id: str | None = None,
) -> BatchJob:
    """Send one judge request per draft through the Message Batches API.

    The job (rubric, judge settings, every custom id with its draft) is written to
    the history (``store``, default ``$GRADELOOP_HOME/history.db``) before anything
    is sent, and each batch id as soon as the API returns it, so the job can be
    collected from another process or machine. A job above ``max_requests`` requests
    or ``max_bytes`` bytes is split into several batches. The requests are the ones
    :meth:`AnthropicJudge.evaluate` would send first (same prompt, schema, settings).

    A :class:`~gradeloop.Jury` whose members are all AnthropicJudges (``on="all"``)
    goes through too: one member job per judge, on each member's client, decided
    together by :func:`~gradeloop.batches.collect` (:mod:`._jury`). ``job_id`` names
    the job (default: a new one).
    """
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    if isinstance(judge, Jury):
        with opened_store(store) as s:
            return submit_jury(
                drafts,
                rubric,
                judge,
                task=task,
                store=s,
                registry=registry,
                max_requests=max_requests,
                max_bytes=max_bytes,
                submit_one=submit,
                settings_of=judge_settings,
            )
    if not isinstance(judge, AnthropicJudge):
        raise BatchError(
            f"Message Batches take an AnthropicJudge (or a Jury of them), not a "
            f"{type(judge).__name__}: grade these drafts with grade_many() or "
            "`gradeloop grade --drafts` without --batch"
        )
    if judge.samples != 1:
        raise BatchError(
            "Message Batches take one request per draft: use a judge with samples=1 "
            f"(this one has samples={judge.samples})"
        )
    asked = judge_request(rubric)
    if not asked:
        raise BatchError(
            "nothing to send: every key of the rubric is filled by code; grade the drafts "
            "with grade_many() or `gradeloop grade --drafts` instead"
        )
    items = [as_item(d, i, task) for i, d in enumerate(drafts)]
    if not items:
        raise BatchError("no drafts to submit")
    transcript = next((item for item in items if not isinstance(item.draft, str)), None)
    if transcript is not None:  # a job stores text drafts; a transcript would lose its calls
        raise BatchError(
            f"draft {transcript.output_id!r} is an agent's transcript, and Message Batches "
            "jobs take text drafts only; grade transcripts without --batch"
        )
    job_id = job_id or f"gb{uuid.uuid4().hex[:12]}"
    records = list(_plan(job_id, items, judge, asked, max_requests, max_bytes))
    own = store is None
    store = store if store is not None else HistoryStore()
    try:
        store.add_batch_job(
            job_id, rubric=rubric.to_dict(), judge=judge_settings(judge), requests=records
        )
        batch_ids = _send(job_id, items, records, judge, asked, store)
    finally:
        if own:
            store.close()
    return BatchJob(job_id, batch_ids, len(items))


def _plan(
    job_id: str,
    items: list[Item],
    judge: AnthropicJudge,
    asked: tuple[Criterion, ...],
    max_requests: int,
    max_bytes: int,
) -> Iterator[BatchRequestRecord]:
    """Each request's record, with the part it goes in (by count and by size)."""
    part = count = size = 0
    for position, item in enumerate(items):
        custom_id = f"{job_id}-{position}"
        params, key = batch_request(judge, item.task, judge_text(item.draft), asked)
        n = len(json.dumps({"custom_id": custom_id, "params": params}).encode())
        if n > max_bytes:
            raise BatchError(
                f"draft {item.output_id!r} makes a {n:,}-byte request, above the "
                f"{max_bytes:,}-byte batch limit; grade it without --batch"
            )
        if count >= max_requests or size + n > max_bytes:
            part, count, size = part + 1, 0, 0
        count, size = count + 1, size + n
        yield BatchRequestRecord(
            custom_id, part, position, item.output_id, item.task, judge_text(item.draft), key
        )


def _send(
    job_id: str,
    items: list[Item],
    records: list[BatchRequestRecord],
    judge: AnthropicJudge,
    asked: tuple[Criterion, ...],
    store: HistoryStore,
) -> tuple[str, ...]:
    """Create each part's batch (bodies rebuilt per part, so memory holds one part)."""
    batch_ids: list[str] = []
    for part in sorted({r.part for r in records}):
        bodies: list[Any] = [
            {"custom_id": r.custom_id, "params": _params(judge, items[r.position], asked)}
            for r in records
            if r.part == part
        ]
        try:
            batch = judge.client.messages.batches.create(requests=bodies)
        except anthropic.APIError as exc:
            detail = describe_api_error(exc)
            store.set_batch_part(job_id, part, error=detail)
            store.set_batch_status(job_id, "submit_failed" if not batch_ids else "partly_submitted")
            raise BatchError(
                f"submitting part {part + 1} of batch job {job_id} failed: {detail}"
                + (
                    f"; parts already sent: {', '.join(batch_ids)} (collect them with "
                    f"`gradeloop batch collect {job_id}`)"
                    if batch_ids
                    else ""
                ),
                job_id=job_id,
            ) from exc
        store.set_batch_part(job_id, part, batch_id=batch.id)
        batch_ids.append(batch.id)
    store.set_batch_status(job_id, "submitted")
    return tuple(batch_ids)


def _params(judge: AnthropicJudge, item: Item, asked: tuple[Criterion, ...]) -> dict[str, Any]:
    params, _ = batch_request(judge, item.task, judge_text(item.draft), asked)
    return params
