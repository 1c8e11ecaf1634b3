"""Who answers a Message Batches job: one judge, or each member of a jury.

A job goes through one batch (or several, when it is large) per distinct API client:
a jury's members that share a client share its batches, and members on two clients
make two. Each member must be able to go through batches at all: an
:class:`~gradeloop.AnthropicJudge` asking once per draft (``samples=1``) on a client
with ``messages.batches``. Any other member is refused by name, before anything is
recorded or sent.

What is stored with the job (``judge_json``) is enough to read the replies later
from another process: for one judge, its settings (the shape every job had before
juries); for a jury, its rules and names, each member's settings and client number,
and each client's base URL (without credentials).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...errors import BatchError
from ...judging._jury import Jury
from ...models._judge import AnthropicJudge

__all__ = [
    "Member",
    "batch_members",
    "client_urls",
    "is_jury_job",
    "job_settings",
    "judge_settings",
    "members_for_collect",
]

_WAY_OUT = (
    "grade these drafts with grade_many() or `gradeloop grade --drafts` without --batch, "
    "or leave that judge out of the jury"
)


@dataclass(frozen=True)
class Member:
    """One judge of a job: its place in the jury, its name, and its client's number."""

    index: int
    name: str
    judge: AnthropicJudge
    client: int


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


def batch_members(judge: Any) -> list[Member]:
    """The members a job's requests go to, each with its client number; a
    :class:`~gradeloop.errors.BatchError` naming the first member that cannot go
    through Message Batches."""
    if isinstance(judge, Jury):
        pairs = list(zip(judge.names, judge.judges, strict=True))
    elif isinstance(judge, AnthropicJudge):
        pairs = [(str(judge.model), judge)]
    else:
        raise BatchError(
            f"Message Batches take an AnthropicJudge or a Jury of them, not a "
            f"{type(judge).__name__}: grade these drafts with grade_many() or "
            "`gradeloop grade --drafts` without --batch"
        )
    clients: dict[int, int] = {}  # id(client) -> its number, in order of first use
    out = []
    for index, (name, member) in enumerate(pairs):
        _refuse(name, member, jury=isinstance(judge, Jury))
        number = clients.setdefault(id(member.client), len(clients))
        out.append(Member(index, name, member, number))
    return out


def _refuse(name: str, member: Any, *, jury: bool) -> None:
    who = f"jury member {name!r}" if jury else "the judge"
    # only the Messages API has Message Batches: an OpenAICompatibleJudge (a peer of
    # AnthropicJudge on the same judge flow, not a subclass) is refused here
    if not isinstance(member, AnthropicJudge):
        raise BatchError(
            f"{who} ({type(member).__name__}) cannot go through Message Batches, which "
            f"take only AnthropicJudge members (the Messages API's batch endpoints): {_WAY_OUT}"
        )
    if member.samples != 1:
        raise BatchError(
            f"Message Batches take one request per draft and judge: {who} has "
            f"samples={member.samples}; use samples=1"
        )
    batches = getattr(getattr(member.client, "messages", None), "batches", None)
    if batches is None:
        raise BatchError(
            f"{who}'s client ({type(member.client).__name__}) has no messages.batches "
            f"(the Message Batches endpoints): {_WAY_OUT}"
        )


def client_urls(members: list[Member]) -> list[str | None]:
    """Each client's base URL, by client number, with any credentials left out."""
    urls: dict[int, str | None] = {}
    for m in members:
        urls.setdefault(m.client, _public_url(getattr(m.judge.client, "base_url", None)))
    return [urls[n] for n in range(len(urls))]


def _public_url(raw: Any) -> str | None:
    if not raw:
        return None
    parts = urlsplit(str(raw))
    if not parts.hostname:
        return None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def job_settings(judge: Any, members: list[Member]) -> dict[str, Any]:
    """What the job stores about who judges: a judge's settings, or a jury's."""
    if not isinstance(judge, Jury):
        return judge_settings(members[0].judge)
    return {
        "jury": {
            "policy": judge.policy,
            "on": judge.on,
            "quorum": judge.quorum,
            "margin": judge.margin,
            "names": list(judge.names),
            # a batch cannot wait for the first judge's answer (module docs)
            "asked": "every member, every key",
        },
        "members": [{**judge_settings(m.judge), "client": m.client} for m in members],
        "clients": [{"base_url": url} for url in client_urls(members)],
    }


def is_jury_job(settings: Mapping[str, Any]) -> bool:
    """Whether a job's stored judge settings are a jury's."""
    return isinstance(settings.get("jury"), Mapping)


def members_for_collect(job_id: str, settings: Mapping[str, Any], judge: Any) -> list[Member]:
    """The members that read a job's replies: ``judge`` checked against what the job
    was submitted to (one judge, or a jury of as many members), each member with the
    client number the job recorded for it."""
    if not is_jury_job(settings):
        if isinstance(judge, Jury):
            raise BatchError(
                f"batch job {job_id} was submitted to one judge "
                f"({settings.get('model')}), not a jury: collect it with that judge",
                job_id=job_id,
            )
        return batch_members(judge)
    stored = list(settings.get("members") or [])
    names = list(settings["jury"].get("names") or [])
    if not isinstance(judge, Jury) or len(judge.judges) != len(stored):
        raise BatchError(
            f"batch job {job_id} was submitted to a jury of {len(stored)} judges "
            f"({', '.join(map(str, names))}): collect it with a Jury of those judges, in "
            "that order (`gradeloop batch collect` builds it from the job)",
            job_id=job_id,
        )
    members = batch_members(judge)
    for m in members:  # another model would read another member's replies
        want = stored[m.index].get("model")
        if m.judge.model != want:
            raise BatchError(
                f"batch job {job_id}: judge {m.index + 1} of the jury was {want!r} when it "
                f"was submitted, not {m.judge.model!r}: collect it with the same members in "
                "the same order",
                job_id=job_id,
            )
    return [
        Member(m.index, m.name, m.judge, int(stored[m.index].get("client", 0))) for m in members
    ]
