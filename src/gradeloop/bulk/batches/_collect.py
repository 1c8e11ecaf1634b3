"""Following a Message Batches job, and turning its results into evaluations.

Results are matched to drafts by custom id, never by order (the API returns them
in any order). A request that errored, expired or was canceled, or that has no
result at all, is a failed evaluation naming the reason: never a pass. Valid
verdicts go through the same checks as every judge answer, land in the verdict
cache when the judge has one, and the whole job is recorded as a grading run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import BatchError
from ...grading._grade import Evaluation, GradePlan
from ...grading._registry import Registry
from ...grading._rubric import Rubric
from ...grading._verdict import Verdict
from ...history._batches import BatchJobRecord, BatchRequestRecord, MemberRequestRecord
from ...history._grading import GradedDraft
from ...history._store import HistoryStore
from ...judging._jury import Jury
from ...models._batch import read_batch_reply
from ...models._fingerprint import run_fingerprint
from ...models._judge import AnthropicJudge
from ._jury import Asked, MemberTally, batch_evaluation, jury_evaluation, request_failed
from ._members import Member, is_jury_job, members_for_collect
from ._status import job_record, open_store, part_clients, status
from ._submit import BatchJob

__all__ = ["BatchResult", "collect"]


@dataclass
class BatchResult:
    """A collected job: one evaluation per draft, in submission order (ids set).

    ``outcomes`` counts the requests by how they ended (a jury's job: one request per
    draft and member); ``members`` tallies a jury's members (answered, abstained, cost
    at the batch price); ``notes`` says how the job was run where it differs from the
    judge given (a jury's ``on="doubtful"``, asked about every key)."""

    job_id: str
    evaluations: list[Evaluation]
    run_id: str | None = None
    outcomes: dict[str, int] = field(default_factory=dict)
    unmatched: int = 0  # results whose custom id is not in the job (ignored)
    duplicated: int = 0  # ids with more than one result (all set aside: duplicate_result)
    unreadable: int = 0  # result lines that are not a result (not JSON, wrong shape)
    members: dict[str, MemberTally] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

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


DOUBTFUL_NOTE = (
    "the jury's on='doubtful' was sent as on='all': a batch cannot wait for the first "
    "judge's answer, so every judge was asked every key and every answer counts"
)


def collect(
    job: str | BatchJob,
    *,
    judge: AnthropicJudge | Jury,
    store: HistoryStore | None = None,
    registry: Registry | None = None,
    record: bool = True,
) -> BatchResult:
    """The evaluations of an ended job, in the order its drafts were submitted.

    ``judge`` is the judge the job was submitted to, or (a jury's job) a
    :class:`~gradeloop.judging.Jury` of the same members in the same order: each draft's
    member answers are decided as :meth:`Jury.evaluate <gradeloop.Jury.evaluate>`
    decides them, a member whose request failed abstaining, named. Raises
    :class:`BatchError` when a part has not ended yet. With ``record`` the job is
    stored as a grading run the first time it is collected.
    """
    with open_store(store) as s:
        stored = job_record(job, s)
        members = members_for_collect(stored.job_id, stored.judge, judge)
        requests = s.batch_requests(stored.job_id)
        others = s.batch_member_requests(stored.job_id)
        now = status(stored.job_id, judge=judge, store=s)
        if not now.ended:
            raise BatchError(
                f"{now.line()}: not ended yet; wait, or check `gradeloop batch status "
                f"{stored.job_id}`",
                job_id=stored.job_id,
            )
        ids = {r.custom_id: r.part for r in requests} | {m.custom_id: m.part for m in others}
        read = _results(stored, ids, part_clients(stored, judge=judge))
        out = BatchResult(
            stored.job_id,
            [],
            unmatched=read.unmatched,
            duplicated=len(read.duplicated),
            unreadable=read.unreadable,
        )
        asked = _Outcomes(read, {p.part for p in stored.parts if p.batch_id is not None}, out)
        rubric = Rubric.from_dict(stored.rubric, registry=registry)
        if is_jury_job(stored.judge):
            assert isinstance(judge, Jury)  # members_for_collect saw to it
            out.evaluations = _jury_drafts(requests, others, members, asked, rubric, judge,
                                           registry, out)  # fmt: skip
            if stored.judge["jury"].get("on") == "doubtful":
                out.notes.append(DOUBTFUL_NOTE)
        else:
            for r in requests:
                got = asked(r.custom_id, r.part, r.cache_key)
                ev = _evaluate(r, got, rubric, members[0].judge, registry)
                out.evaluations.append(ev.with_ids(r.item_id))
        out.run_id = stored.run_id
        if record and stored.status != "collected":
            out.run_id = _record(s, stored, requests, out.evaluations, judge)
    return out


def _jury_drafts(
    requests: list[BatchRequestRecord],
    others: list[MemberRequestRecord],
    members: list[Member],
    asked: _Outcomes,
    rubric: Rubric,
    jury: Jury,
    registry: Registry | None,
    out: BatchResult,
) -> list[Evaluation]:
    """Each draft's evaluation from its members' requests."""
    by_draft: dict[int, dict[int, MemberRequestRecord]] = {}
    for o in others:
        by_draft.setdefault(o.position, {})[o.member] = o
    out.members = {m.name: MemberTally() for m in members}
    evaluations = []
    for r in requests:
        mine = by_draft.get(r.position, {})
        got = [asked(r.custom_id, r.part, r.cache_key)]
        for m in members[1:]:
            req = mine.get(m.index)
            got.append(
                asked(req.custom_id, req.part, req.cache_key)
                if req is not None
                else Asked("not_submitted", None, "")
            )
        ev = jury_evaluation(r, got, members, rubric, jury, registry, out.members)
        evaluations.append(ev.with_ids(r.item_id))
    return evaluations


class _Outcomes:
    """How each request ended, counted into the result's ``outcomes`` as asked."""

    def __init__(self, read: _Read, submitted: set[int], out: BatchResult) -> None:
        self._read, self._submitted, self._out = read, submitted, out

    def __call__(self, custom_id: str, part: int, cache_key: str) -> Asked:
        result = self._read.found.get(custom_id)
        if part not in self._submitted:
            outcome = "not_submitted"
        elif custom_id in self._read.duplicated:
            outcome = "duplicate_result"
        else:
            outcome = _kind(result)
        self._out.outcomes[outcome] = self._out.outcomes.get(outcome, 0) + 1
        return Asked(outcome, result, cache_key)


@dataclass
class _Read:
    """A job's results streams, read line by line."""

    found: dict[str, Any] = field(default_factory=dict)  # custom id -> its one result
    duplicated: set[str] = field(default_factory=set)
    unmatched: int = 0
    unreadable: int = 0


def _results(job: BatchJobRecord, ids: Mapping[str, int], clients: dict[int, Any]) -> _Read:
    """Every part's results by custom id, each part through its client: ``ids`` maps
    each request's custom id to its part, and a result is read only from the batch of
    its own part (another member's server cannot answer for it: counted unmatched). An
    id seen twice keeps neither result (which one is true cannot be known: fail
    closed); a line that is no result is counted and skipped, so one bad line never
    costs the others."""
    read = _Read()
    for part in job.parts:
        if part.batch_id is None:
            continue
        for entry in _entries(clients[part.part], part.batch_id, read):
            cid = entry.custom_id
            if ids.get(cid) != part.part:
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


def _evaluate(
    r: BatchRequestRecord,
    got: Asked,
    rubric: Rubric,
    judge: AnthropicJudge,
    registry: Registry | None,
) -> Evaluation:
    """One judge's job: the draft's evaluation from its one request."""

    def verdict_of(plan: GradePlan) -> Verdict:
        failed = request_failed(got)
        if failed is not None:
            raise failed
        return read_batch_reply(
            judge, r.task, r.draft, plan.asked, got.result.message, key=got.cache_key
        )

    return batch_evaluation(r, rubric, judge, registry, verdict_of)


def _record(
    store: HistoryStore,
    job: BatchJobRecord,
    requests: list[BatchRequestRecord],
    evaluations: list[Evaluation],
    judge: AnthropicJudge | Jury,
) -> str:
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
