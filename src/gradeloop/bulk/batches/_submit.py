"""Submitting drafts to the Message Batches API, recorded in the history first.

One request per draft and judge: a single judge's job holds one per draft, a jury's
one per draft and member. Each distinct API client gets its own batches (members that
share a client share them), and a client's requests above 100,000 or 256 MB are
split into several batches.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic

from ...bulk._many import DraftLike, Item, as_item
from ...errors import BatchError
from ...errors._redact import scrub_chain, scrub_error
from ...grading._registry import Registry
from ...grading._rubric import Criterion, Rubric
from ...grading._shadow import judge_request
from ...grading._transcript import judge_text
from ...history._batches import BatchRequestRecord, MemberRequestRecord
from ...history._store import HistoryStore
from ...judging._jury import Jury
from ...models._batch import batch_request
from ...models._failure import describe_api_error
from ...models._judge import AnthropicJudge
from ._members import Member, batch_members, job_settings

__all__ = ["MAX_BYTES", "MAX_REQUESTS", "BatchJob", "submit"]

#: The API's limits for one batch; a job above them is split into several batches.
MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1000 * 1000


@dataclass(frozen=True)
class BatchJob:
    """A submitted job: its id (for ``gradeloop batch status|collect``), the provider's
    batch ids (one per part), how many requests it holds (one per draft and judge)
    and how many drafts."""

    job_id: str
    batch_ids: tuple[str, ...]
    requests: int
    drafts: int | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "job_id": self.job_id,
            "batch_ids": list(self.batch_ids),
            "requests": self.requests,
            "drafts": self.requests if self.drafts is None else self.drafts,
        }


@dataclass(frozen=True)
class _Planned:
    """One request of the job: its custom id, part, draft and member."""

    custom_id: str
    part: int
    position: int
    member: int
    cache_key: str


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
) -> BatchJob:
    """Send one judge request per draft (per draft and member, for a
    :class:`~gradeloop.judging.Jury`) through the Message Batches API.

    The job (rubric, judge settings, every custom id with its draft) is written to
    the history (``store``, default ``$GRADELOOP_HOME/history.db``) before anything
    is sent, and each batch id as soon as the API returns it, so the job can be
    collected from another process or machine. A job above ``max_requests`` requests
    or ``max_bytes`` bytes per client is split into several batches. The requests are
    the ones :meth:`AnthropicJudge.evaluate` would send first (same prompt, schema,
    settings).

    A jury's members must each be an :class:`~gradeloop.AnthropicJudge` with
    ``samples=1`` on a client with Message Batches; members sharing a client share its
    batches, members on different clients get a batch each. Every member is asked every
    key: with ``on="doubtful"`` too, since a batch cannot wait for the first member's
    answer (docs/scale.md); the collected verdicts record it (``requested_on``).
    """
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    members = batch_members(judge)
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
    job_id = f"gb{uuid.uuid4().hex[:12]}"
    jury = isinstance(judge, Jury)
    planned = list(_plan(job_id, items, members, asked, max_requests, max_bytes, jury=jury))
    own = store is None
    store = store if store is not None else HistoryStore()
    try:
        store.add_batch_job(
            job_id,
            rubric=rubric.to_dict(),
            judge=job_settings(judge, members),
            requests=_draft_rows(planned, items),
            member_requests=[
                MemberRequestRecord(p.custom_id, p.part, p.position, p.member, p.cache_key)
                for p in planned
                if p.member > 0
            ],
            part_clients={p.part: members[p.member].client for p in planned},
        )
        batch_ids = _send(job_id, items, planned, members, asked, store)
    finally:
        if own:
            store.close()
    return BatchJob(job_id, batch_ids, len(planned), len(items))


def _plan(
    job_id: str,
    items: list[Item],
    members: list[Member],
    asked: tuple[Criterion, ...],
    max_requests: int,
    max_bytes: int,
    *,
    jury: bool,
) -> Iterator[_Planned]:
    """Each request with the part it goes in: a client's requests in its own parts,
    split by count and by size."""
    part = -1
    for client in sorted({m.client for m in members}):
        group = [m for m in members if m.client == client]
        part, count, size = part + 1, 0, 0
        for position, item in enumerate(items):
            for m in group:
                custom_id = f"{job_id}-{position}" + (
                    # a random part per request: no member's server can guess (and
                    # answer for) another member's ids
                    f"-{m.index}-{secrets.token_hex(8)}" if jury else ""
                )
                params, key = batch_request(m.judge, item.task, judge_text(item.draft), asked)
                n = len(json.dumps({"custom_id": custom_id, "params": params}).encode())
                if n > max_bytes:
                    raise BatchError(
                        f"draft {item.output_id!r} makes a {n:,}-byte request, above the "
                        f"{max_bytes:,}-byte batch limit; grade it without --batch"
                    )
                if count >= max_requests or size + n > max_bytes:
                    part, count, size = part + 1, 0, 0
                count, size = count + 1, size + n
                yield _Planned(custom_id, part, position, m.index, key)


def _draft_rows(planned: list[_Planned], items: list[Item]) -> list[BatchRequestRecord]:
    """Each draft with its first member's request (in draft order)."""
    rows = sorted((p for p in planned if p.member == 0), key=lambda p: p.position)
    return [
        BatchRequestRecord(
            p.custom_id,
            p.part,
            p.position,
            items[p.position].output_id,
            items[p.position].task,
            judge_text(items[p.position].draft),
            p.cache_key,
        )
        for p in rows
    ]


def _send(
    job_id: str,
    items: list[Item],
    planned: list[_Planned],
    members: list[Member],
    asked: tuple[Criterion, ...],
    store: HistoryStore,
) -> tuple[str, ...]:
    """Create each part's batch through its client (bodies rebuilt per part, so memory
    holds one part)."""
    batch_ids: list[str] = []
    for part in sorted({p.part for p in planned}):
        mine = [p for p in planned if p.part == part]
        client = members[mine[0].member].judge.client
        bodies: list[Any] = [
            {
                "custom_id": p.custom_id,
                "params": _params(members[p.member].judge, items[p.position], asked),
            }
            for p in mine
        ]
        try:
            batch = client.messages.batches.create(requests=bodies)
        except anthropic.APIError as exc:
            scrub_chain(exc)  # chained below: it may quote the key
            detail = scrub_error(describe_api_error(exc))
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
