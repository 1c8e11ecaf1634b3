"""A Jury through Message Batches: one member job per judge, decided together at collect.

A jury job is a row of its own in the history (its rubric, the jury's settings and
each member's, and the member jobs' ids) and one ordinary batch job per member, each
holding one request per draft, submitted on that member's client (so members on two
accounts make two batches). Collecting reads every member's results, then decides
each draft exactly as :meth:`Jury.evaluate <gradeloop.Jury.evaluate>` does (majority
or median, the quorum, ties failing closed); a member whose result errored, expired,
was duplicated or could not be read abstains on that draft and is named.

``on="doubtful"`` asks the other members only after the first one answered, which a
batch cannot wait for: such a jury is refused here (use ``on="all"`` in batches).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..bulk._many import DraftLike, failed_evaluation
from ..errors import BatchError, JudgeError
from ..grading._agrade import _Replay
from ..grading._calls import judge_calls
from ..grading._grade import Evaluation, _ask_judge, finish_grade, run_checks, start_plan
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..history._batches import BatchJobRecord, BatchRequestRecord
from ..history._store import HistoryStore
from ..judging._jury import Jury
from ..models._judge import AnthropicJudge
from ._types import BatchJob, BatchResult, BatchStatus, PartStatus

__all__ = ["collect_jury", "is_jury_job", "job_requests", "jury_status", "submit_jury"]


def is_jury_job(job: BatchJobRecord) -> bool:
    """Whether ``job`` is a jury's (its members' jobs hold the requests)."""
    return isinstance(job.judge.get("jury"), Mapping)


def job_requests(store: HistoryStore, job_id: str) -> list[BatchRequestRecord]:
    """A job's requests, one per draft in submission order (a jury's: its first
    member's, which hold the same drafts)."""
    job = store.batch_job(job_id)
    if is_jury_job(job):
        members = list(job.judge.get("member_jobs") or ())
        return store.batch_requests(members[0]) if members else []
    return store.batch_requests(job.job_id)


def check_members(jury: Jury) -> list[AnthropicJudge]:
    """The members, when every one can go through Message Batches; else a BatchError
    that names the first that cannot and says what to do."""
    if jury.on != "all":
        raise BatchError(
            "a Jury with on='doubtful' asks the others after the first judge answered, "
            "which a batch cannot wait for: use on='all' in batches, or grade without --batch"
        )
    members = []
    for name, member in zip(jury.names, jury.judges, strict=True):
        if not isinstance(member, AnthropicJudge) or member.samples != 1:
            raise BatchError(
                f"jury member {name!r} ({type(member).__name__}) cannot go through Message "
                "Batches: every member must be an AnthropicJudge with samples=1; grade these "
                "drafts without --batch"
            )
        members.append(member)
    return members


def submit_jury(
    drafts: Iterable[str | DraftLike],
    rubric: Rubric,
    jury: Jury,
    *,
    task: str,
    store: HistoryStore,
    registry: Registry | None,
    max_requests: int,
    max_bytes: int,
    submit_one: Callable[..., BatchJob],
    settings_of: Callable[[AnthropicJudge], dict[str, Any]],
) -> BatchJob:
    """Record the jury job, then submit one member job per judge with ``submit_one``
    (:func:`~gradeloop.batches.submit`; the member jobs are recorded before each is
    sent, as every job is)."""
    members = check_members(jury)
    items = list(drafts)
    job_id = f"gb{uuid.uuid4().hex[:12]}"
    member_jobs = [f"{job_id}m{i}" for i in range(len(members))]
    store.add_batch_job(
        job_id,
        rubric=rubric.to_dict(),
        judge={
            "jury": {
                "policy": jury.policy,
                "on": jury.on,
                "quorum": jury.quorum,
                "margin": jury.margin,
                "names": list(jury.names),
            },
            "members": [settings_of(m) for m in members],
            "member_jobs": member_jobs,
        },
        requests=[],
    )
    batch_ids: list[str] = []
    requests = 0
    try:
        for member, member_job in zip(members, member_jobs, strict=True):
            job = submit_one(
                items,
                rubric,
                judge=member,
                task=task,
                store=store,
                registry=registry,
                max_requests=max_requests,
                max_bytes=max_bytes,
                job_id=member_job,
            )
            batch_ids.extend(job.batch_ids)
            requests += job.requests
    except BatchError as exc:
        store.set_batch_status(job_id, "submit_failed" if not batch_ids else "partly_submitted")
        raise BatchError(f"jury batch job {job_id}: {exc}", job_id=job_id) from exc
    store.set_batch_status(job_id, "submitted")
    return BatchJob(job_id, tuple(batch_ids), requests)


def _clients(job: BatchJobRecord, judge: Any, client: Any) -> list[Any]:
    """Each member job's client: the jury's members', else ``client`` for all."""
    n = len(job.judge.get("member_jobs") or ())
    members = getattr(judge, "judges", None)
    if isinstance(judge, Jury) and members is not None:
        if len(members) != n:
            raise BatchError(
                f"batch job {job.job_id} is a jury of {n} judges; this Jury has "
                f"{len(members)}: give the jury the job was submitted with"
            )
        return [getattr(m, "client", client) for m in members]
    if client is None:
        raise BatchError(f"batch job {job.job_id} is a jury's: give its Jury (or a client)")
    return [client] * n


def jury_status(
    job: BatchJobRecord,
    *,
    judge: Any,
    client: Any,
    store: HistoryStore,
    status_one: Callable[..., BatchStatus],
) -> BatchStatus:
    """Every member job's parts (asked with ``status_one``), one after the other, as
    one job's status."""
    parts: list[PartStatus] = []
    requests = 0
    member_jobs = list(job.judge.get("member_jobs") or ())
    for member_job, member_client in zip(member_jobs, _clients(job, judge, client), strict=True):
        now = status_one(member_job, client=member_client, store=store)
        requests += now.requests
        parts.extend(
            PartStatus(len(parts) + i, p.batch_id, p.processing_status, p.counts)
            for i, p in enumerate(now.parts)
        )
    return BatchStatus(job.job_id, requests, tuple(parts))


def collect_jury(
    job: BatchJobRecord,
    *,
    jury: Any,
    store: HistoryStore,
    registry: Registry | None,
    record: bool,
    member_answers: Callable[..., Any],
    record_run: Callable[..., str],
) -> BatchResult:
    """The evaluations of an ended jury job, in the order its drafts were submitted
    (each member's results read by ``member_answers``, the run stored by
    ``record_run``: the functions the single-judge collect uses)."""
    if not isinstance(jury, Jury):
        raise BatchError(
            f"batch job {job.job_id} is a jury's: collect it with a Jury of its "
            f"{len(job.judge.get('member_jobs') or ())} judges"
        )
    clients = _clients(job, jury, None)
    member_jobs = list(job.judge.get("member_jobs") or ())
    rubric = Rubric.from_dict(job.rubric, registry=registry)
    out = BatchResult(job.job_id, [])
    answers: list[dict[str, tuple[Any, tuple[Any, ...]]]] = []
    requests: list[BatchRequestRecord] = []
    for member_job, member, member_client in zip(member_jobs, jury.judges, clients, strict=True):
        found, reqs, read = member_answers(member_job, member, member_client, store, rubric)
        requests = requests or reqs
        answers.append(found)
        out.unmatched += read.unmatched
        out.duplicated += len(read.duplicated)
        out.unreadable += read.unreadable
    for r in requests:
        per_member = [a[str(r.position)] for a in answers]
        evaluation = _decide(r, per_member, rubric, jury, registry)
        kind = "succeeded" if evaluation.judge_error is None else "jury_failed"
        out.outcomes[kind] = out.outcomes.get(kind, 0) + 1
        out.evaluations.append(evaluation.with_ids(r.item_id))
    out.run_id = job.run_id
    if record and job.status != "collected":
        out.run_id = record_run(store, job, requests, out.evaluations, jury)
    return out


def _decide(
    r: BatchRequestRecord,
    per_member: Sequence[tuple[Any, tuple[Any, ...]]],
    rubric: Rubric,
    jury: Jury,
    registry: Registry | None,
) -> Evaluation:
    """One draft's evaluation from each member's verdict (or the error it abstains with)."""
    plan = run_checks(
        start_plan(r.draft, rubric, task=r.task, judge=jury, skip_judge=False, registry=registry)
    )
    calls = tuple(c for _, member_calls in per_member for c in member_calls)
    judged: list[Criterion] = [c for c in plan.asked if c.source == "judge"]
    try:
        verdict = jury._decide(judged, [outcome for outcome, _ in per_member])
        with judge_calls():
            answer = _ask_judge(_Replay(verdict), r.task, r.draft, plan.asked, plan.rubric)
    except JudgeError as exc:
        return failed_evaluation(plan, f"{exc.reason}: {exc}", calls)
    return finish_grade(plan, answer, calls)
