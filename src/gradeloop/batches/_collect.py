"""Following a Message Batches job, and turning its results into evaluations.

Results are matched to drafts by custom id, never by order (the API returns them
in any order). A request that errored, expired or was canceled, or that has no
result at all, is a failed evaluation naming the reason: never a pass. Valid
verdicts go through the same checks as every judge answer, land in the verdict
cache when the judge has one, and the whole job is recorded as a grading run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..bulk._many import failed_evaluation
from ..errors import BatchError, JudgeError
from ..grading._agrade import _Replay
from ..grading._calls import judge_calls
from ..grading._grade import Evaluation, _ask_judge, finish_grade, run_checks, start_plan
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._shadow import judge_request
from ..grading._verdict import Verdict
from ..history._batches import BatchJobRecord, BatchRequestRecord
from ..history._grading import GradedDraft
from ..history._store import HistoryStore
from ..models._batch import read_batch_reply
from ..models._fingerprint import run_fingerprint
from ..models._judge import AnthropicJudge
from ._jury import collect_jury, is_jury_job, jury_status
from ._types import COUNTS as _COUNTS
from ._types import BatchJob, BatchResult, BatchStatus, PartStatus, opened_store

__all__ = ["BatchResult", "BatchStatus", "PartStatus", "collect", "status", "wait"]


def _job(ident: str | BatchJob, store: HistoryStore) -> BatchJobRecord:
    return store.batch_job(ident.job_id if isinstance(ident, BatchJob) else ident)


def status(
    job: str | BatchJob,
    *,
    client: Any = None,
    store: HistoryStore | None = None,
    judge: Any = None,
) -> BatchStatus:
    """Ask the API where each part of ``job`` (a job id, a batch id or a BatchJob) stands.

    ``client`` asks the API (default: ``judge``'s). A jury's job asks each member's
    client (``judge`` is the Jury; else ``client`` for every member)."""
    with opened_store(store) as s:
        record = _job(job, s)
        if is_jury_job(record):
            return jury_status(record, judge=judge, client=client, store=s, status_one=status)
    client = client if client is not None else getattr(judge, "client", None)
    if client is None:
        raise BatchError(f"batch job {record.job_id}: give a client (or the judge) to ask the API")
    parts = []
    for p in record.parts:
        if p.batch_id is None:
            parts.append(PartStatus(p.part, None, "not_submitted", {}))
            continue
        batch = client.messages.batches.retrieve(p.batch_id)
        counts = {k: int(getattr(batch.request_counts, k, 0) or 0) for k in _COUNTS}
        parts.append(PartStatus(p.part, p.batch_id, str(batch.processing_status), counts))
    return BatchStatus(record.job_id, record.requests, tuple(parts))


def wait(
    job: str | BatchJob,
    *,
    client: Any = None,
    store: HistoryStore | None = None,
    judge: Any = None,
    poll: float = 5.0,
    max_poll: float = 60.0,
    timeout: float | None = None,
    on_status: Callable[[BatchStatus], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> BatchStatus:
    """Poll until every part has ended, waiting ``poll`` seconds at first and half as
    long again each time, up to ``max_poll``. Raises :class:`BatchError` after
    ``timeout`` seconds (the job goes on; collect it later)."""
    started = time.monotonic()
    delay = poll
    while True:
        now = status(job, client=client, store=store, judge=judge)
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


def collect(
    job: str | BatchJob,
    *,
    judge: Any,
    store: HistoryStore | None = None,
    registry: Registry | None = None,
    record: bool = True,
) -> BatchResult:
    """The evaluations of an ended job, in the order its drafts were submitted.

    Raises :class:`BatchError` when a part has not ended yet. With ``record`` the job
    is stored as a grading run the first time it is collected. A jury's job is
    collected with its Jury (``judge``): each draft decided by the members' answers.
    """
    with opened_store(store) as s:
        job_record = _job(job, s)
        if is_jury_job(job_record):
            return collect_jury(
                job_record,
                jury=judge,
                store=s,
                registry=registry,
                record=record,
                member_answers=member_answers,
                record_run=record_run,
            )
        requests = s.batch_requests(job_record.job_id)
        now = status(job_record.job_id, client=judge.client, store=s)
        if not now.ended:
            raise BatchError(
                f"{now.line()}: not ended yet; wait, or check `gradeloop batch status "
                f"{job_record.job_id}`",
                job_id=job_record.job_id,
            )
        read = _results(job_record, requests, judge.client)
        rubric = Rubric.from_dict(job_record.rubric, registry=registry)
        submitted = {p.part for p in job_record.parts if p.batch_id is not None}
        out = BatchResult(
            job_record.job_id,
            [],
            unmatched=read.unmatched,
            duplicated=len(read.duplicated),
            unreadable=read.unreadable,
        )
        for r in requests:
            result = read.found.get(r.custom_id)
            if r.part not in submitted:
                outcome = "not_submitted"
            elif r.custom_id in read.duplicated:
                outcome = "duplicate_result"
            else:
                outcome = _kind(result)
            out.outcomes[outcome] = out.outcomes.get(outcome, 0) + 1
            out.evaluations.append(
                _evaluate(r, result, outcome, rubric, judge, registry).with_ids(r.item_id)
            )
        out.run_id = job_record.run_id
        if record and job_record.status != "collected":
            out.run_id = record_run(s, job_record, requests, out.evaluations, judge)
    return out


@dataclass
class _Read:
    """A job's results streams, read line by line."""

    found: dict[str, Any] = field(default_factory=dict)  # custom id -> its one result
    duplicated: set[str] = field(default_factory=set)
    unmatched: int = 0
    unreadable: int = 0


def _results(job: BatchJobRecord, requests: list[BatchRequestRecord], client: Any) -> _Read:
    """Every part's results by custom id. An id seen twice keeps neither result (which
    one is true cannot be known: fail closed); a line that is no result is counted and
    skipped, so one bad line never costs the others."""
    wanted = {r.custom_id for r in requests}
    read = _Read()
    for part in job.parts:
        if part.batch_id is None:
            continue
        for entry in _entries(client, part.batch_id, read):
            cid = entry.custom_id
            if cid not in wanted:
                read.unmatched += 1
            elif cid in read.found or cid in read.duplicated:
                read.found.pop(cid, None)
                read.duplicated.add(cid)
            else:
                read.found[cid] = entry.result
    return read


def _entries(client: Any, batch_id: str, read: _Read) -> Iterator[Any]:
    """The results of one batch, one line at a time (the SDK's own decoder stops the
    whole stream at the first line that is not JSON)."""
    stream = client.messages.batches.results(batch_id)
    response = getattr(stream, "http_response", None)
    if response is None:  # not the SDK's decoder (a caller's fake): its entries as given
        yield from stream
        return
    try:
        for line in response.iter_lines():
            if not line.strip():
                continue
            entry = _entry(line)
            if entry is None:
                read.unreadable += 1
            else:
                yield entry
    finally:
        response.close()


def _entry(line: str) -> Any:
    """One results line as the SDK's result object; None when it is not one."""
    from anthropic.types.messages import MessageBatchIndividualResponse

    try:
        data = json.loads(line, object_pairs_hook=_no_duplicate_keys)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    result = data.get("result")
    if (
        not isinstance(data.get("custom_id"), str)
        or not isinstance(result, dict)
        or not isinstance(result.get("type"), str)
    ):
        return None
    return MessageBatchIndividualResponse.model_construct(**data)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a key is repeated")
    return out


def _kind(result: Any) -> str:
    return "no_result" if result is None else str(getattr(result, "type", "unknown"))


_WHY = {
    "expired": "batch_expired: the request expired before it was processed "
    "(a batch ends within 24 hours)",
    "canceled": "batch_canceled: the batch was canceled before this request was processed",
    "no_result": "no_result: the batch returned no result for this request",
    "duplicate_result": "duplicate_result: the batch returned more than one result for "
    "this request; none was used",
    "not_submitted": "not_submitted: this part of the job was never submitted",
}


def _evaluate(
    r: BatchRequestRecord,
    result: Any,
    outcome: str,
    rubric: Rubric,
    judge: AnthropicJudge,
    registry: Registry | None,
) -> Evaluation:
    plan = run_checks(
        start_plan(r.draft, rubric, task=r.task, judge=judge, skip_judge=False, registry=registry)
    )
    with judge_calls() as calls:
        verdict, error = _verdict(r, result, outcome, judge, plan.asked)
        if verdict is not None:
            try:
                answer = _ask_judge(_Replay(verdict), r.task, r.draft, plan.asked, plan.rubric)
            except JudgeError as exc:
                error = f"{exc.reason}: {exc}"
    if error is not None:
        return failed_evaluation(plan, error, tuple(calls))
    return finish_grade(plan, answer, tuple(calls))


def _verdict(
    r: BatchRequestRecord,
    result: Any,
    outcome: str,
    judge: AnthropicJudge,
    asked: Sequence[Criterion],
) -> tuple[Verdict | None, str | None]:
    """A request's verdict read as the judge reads its first reply, or why there is
    none (the result errored, expired... or the reply was not a valid verdict)."""
    if outcome == "succeeded":
        try:
            return read_batch_reply(
                judge, r.task, r.draft, asked, result.message, key=r.cache_key
            ), None
        except JudgeError as exc:
            return None, f"{exc.reason}: {exc}"
    if outcome == "errored":
        detail = getattr(getattr(result, "error", None), "error", None)
        kind = getattr(detail, "type", "error")
        message = getattr(detail, "message", "no message")
        return None, f"batch_errored: {kind}: {message}"
    return None, _WHY.get(outcome) or f"batch_{outcome}: an outcome gradeloop does not know"


def member_answers(
    job_id: str, judge: AnthropicJudge, client: Any, store: HistoryStore, rubric: Rubric
) -> tuple[dict[str, tuple[Any, tuple[Any, ...]]], list[BatchRequestRecord], _Read]:
    """One jury member's job read: per draft position, its verdict (or the JudgeError it
    abstains with) and the calls recorded reading it; the requests; the stream's count."""
    record = store.batch_job(job_id)
    requests = store.batch_requests(job_id)
    now = status(job_id, client=client, store=store)
    if not now.ended:
        raise BatchError(
            f"{now.line()}: not ended yet; wait, or check `gradeloop batch status {job_id}`",
            job_id=job_id,
        )
    read = _results(record, requests, client)
    submitted = {p.part for p in record.parts if p.batch_id is not None}
    asked = judge_request(rubric)
    found: dict[str, tuple[Any, tuple[Any, ...]]] = {}
    for r in requests:
        result = read.found.get(r.custom_id)
        if r.part not in submitted:
            outcome = "not_submitted"
        elif r.custom_id in read.duplicated:
            outcome = "duplicate_result"
        else:
            outcome = _kind(result)
        with judge_calls() as calls:
            verdict, error = _verdict(r, result, outcome, judge, asked)
        # a result that is no verdict: the member abstains on this draft, saying why
        got: Any = verdict if verdict is not None else JudgeError(str(error), reason="api_error")
        found[str(r.position)] = (got, tuple(calls))
    return found, requests, read


def record_run(
    store: HistoryStore,
    job: BatchJobRecord,
    requests: list[BatchRequestRecord],
    evaluations: list[Evaluation],
    judge: Any,
) -> str:
    """Store a collected job as a grading run and mark the job collected; its id."""
    drafts = [
        GradedDraft(r.item_id, r.draft, None, r.task, ev.judge_error)
        if ev.judge_error is not None
        else GradedDraft(r.item_id, r.draft, ev, r.task)
        for r, ev in zip(requests, evaluations, strict=True)
    ]
    run_id = store.add_grading_run(
        drafts,
        rubric=job.rubric,
        rubric_name=str(job.rubric.get("name") or "batch"),
        origin="batch",
        config={
            "judge_model": judge.model,
            "batch_job": job.job_id,
            "batch_ids": [p.batch_id for p in job.parts],
            "fingerprint": run_fingerprint(judge, job.rubric),
        },
    )
    store.set_batch_status(job.job_id, "collected", run_id=run_id)
    return run_id
