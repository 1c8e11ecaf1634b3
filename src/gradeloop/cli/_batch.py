"""``gradeloop batch status|collect|list``: Message Batches jobs, from any process.

A job is submitted with ``gradeloop grade --drafts FILE --batch``; everything needed
to collect it is in the history database, so these commands work after a restart
or on another machine given the same database (``--db``) and API access. A jury's
job (several ``--judge-model``) is followed and collected with the jury rebuilt from
the job: each member's stored settings, each batch through the base URL it was sent
to (``--base-url`` replaces it only for a job that went through one API).
"""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any

from ..errors import InputError
from ..history._store import HistoryStore
from ..migration._jsonl import DraftItem
from ._io import add_db_option, console, print_json
from ._many_output import print_results
from ._models import add_cache_options, add_model_options


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "batch",
        help="follow and collect Message Batches jobs (see grade --batch)",
        description="Follow and collect jobs submitted with `gradeloop grade --drafts FILE "
        "--batch`. ID is the job id (gb...) or one of its batch ids (msgbatch_...). "
        "collect exits 0 when every draft is accepted, 1 when any is not, 2 for bad "
        "input or a job that has not ended.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    status = actions.add_parser("status", help="where a job stands (request counts)")
    status.add_argument("job", metavar="ID")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    collect = actions.add_parser("collect", help="the evaluations of an ended job")
    collect.add_argument("job", metavar="ID")
    collect.add_argument("--json", action="store_true", help="one evaluation per line")
    collect.add_argument(
        "--wait", action="store_true", help="wait for the job to end first (polling)"
    )
    listing = actions.add_parser("list", help="the recorded jobs, newest first")
    listing.add_argument("--limit", type=int, default=20, metavar="N")
    for sp in (status, collect, listing):
        add_db_option(sp)
    for sp in (status, collect):
        add_model_options(sp, generator=False)
    add_cache_options(collect)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    with HistoryStore(args.db) as store:
        if args.action == "list":
            return _list(store, args.limit)
        job = store.batch_job(args.job)
        if args.action == "status":
            from ..bulk.batches import status

            now = status(job.job_id, judge=judge_for(args, job.judge), store=store)
            if args.json:
                print_json(now.to_json())
            else:
                console().print(now.line(), markup=False, soft_wrap=True)
                who = _members_by_client(job.judge)
                for part in now.parts:
                    judges = f" (judges {who[part.client]})" if who else ""
                    console().print(
                        f"  part {part.part + 1}: {part.batch_id or '-'} "
                        f"{part.processing_status}{judges}",
                        markup=False,
                    )
            return 0
        judge = judge_for(args, job.judge)
        return collect_and_show(args, store, job.job_id, judge)


def collect_and_show(args: argparse.Namespace, store: HistoryStore, job_id: str, judge: Any) -> int:
    """Wait (with --wait), collect, print like ``grade --drafts``; the exit code."""
    from ..bulk.batches import collect, wait

    if getattr(args, "wait", False):
        wait(job_id, judge=judge, store=store, on_status=status_printer(args))
    result = collect(job_id, judge=judge, store=store)
    problems = result.problems()
    # on stderr, so --json output stays one evaluation per line
    if problems:
        print(f"gradeloop: batch job {job_id}: {'; '.join(problems)}", file=sys.stderr)
    for note in result.notes:
        print(f"gradeloop: batch job {job_id}: {note}", file=sys.stderr)
    for name, tally in result.members.items():
        print(f"gradeloop: jury member {tally.line(name)}", file=sys.stderr)
    requests = store.batch_requests(job_id)
    items = [DraftItem(r.item_id, r.task, r.draft) for r in requests]
    print_results(args, items, result.evaluations)
    return 0 if all(e.accepted for e in result.evaluations) else 1


def status_printer(args: argparse.Namespace) -> Any:
    """One progress line on stderr per poll, unless --quiet."""
    if getattr(args, "quiet", False):
        return None
    return lambda now: print(f"gradeloop: {now.line()}", file=sys.stderr, flush=True)


def client_for(args: argparse.Namespace) -> Any:
    """The Anthropic client the connection options describe."""
    from ..models._anthropic import make_client

    return make_client(base_url=getattr(args, "base_url", None))


def judge_for(args: argparse.Namespace, settings: dict[str, Any]) -> Any:
    """A judge built with the job's stored settings (so replies are read as they were
    asked for), on this machine's client, with the verdict cache unless --no-cache;
    for a jury's job, the jury (:func:`_jury_for`)."""
    from ..bulk.batches._members import is_jury_job
    from ..history._cache import JudgeCache

    cache = None
    if not getattr(args, "no_cache", True):
        cache = JudgeCache(ttl=getattr(args, "cache_ttl", None))
        args.opened = [*getattr(args, "opened", []), cache]
    if is_jury_job(settings):
        return _jury_for(args, settings, cache)
    return _stored_judge(settings, client_for(args), cache)


def _jury_for(args: argparse.Namespace, settings: dict[str, Any], cache: Any) -> Any:
    """The jury a job was submitted to: its rules and names, each member on a client
    for the base URL its batches went to."""
    from ..judging._jury import Jury
    from ..models._anthropic import make_client

    urls = [c.get("base_url") for c in settings.get("clients") or [{}]]
    given = getattr(args, "base_url", None)
    if given and len(urls) > 1:
        raise InputError(
            f"--base-url: this job's batches went to {len(urls)} APIs "
            f"({', '.join(str(u) for u in urls)}), and one URL cannot stand for them all; "
            "leave --base-url out (each batch is followed at the URL it was sent to)"
        )
    clients = [make_client(base_url=given or url) for url in urls]
    rules = settings["jury"]
    members = [
        _stored_judge(m, clients[int(m.get("client", 0))], cache) for m in settings["members"]
    ]
    return Jury(
        members,
        policy=rules.get("policy", "majority"),
        on=rules.get("on", "all"),
        quorum=rules.get("quorum"),
        margin=float(rules.get("margin", 1.0)),
        names=rules.get("names"),
    )


def _members_by_client(settings: dict[str, Any]) -> dict[int, str]:
    """A jury job's member names per client number (empty for one judge's job)."""
    rules = settings.get("jury")
    if not isinstance(rules, dict):
        return {}
    out: dict[int, list[str]] = {}
    for name, m in zip(rules.get("names") or [], settings.get("members") or [], strict=False):
        out.setdefault(int(m.get("client", 0)), []).append(str(name))
    return {client: ", ".join(names) for client, names in out.items()}


def _stored_judge(settings: dict[str, Any], client: Any, cache: Any) -> Any:
    from ..models._anthropic import AnthropicJudge

    return AnthropicJudge(
        client,
        model=settings.get("model"),
        max_tokens=int(settings.get("max_tokens") or 2048),
        structured=settings.get("structured") or "auto",
        feedback=bool(settings.get("feedback")),
        cache_ttl=settings.get("cache_ttl") or "5m",
        extra_body=settings.get("extra_body"),
        cache=cache,
    )


def _list(store: HistoryStore, limit: int) -> int:
    out = console()
    jobs = store.list_batch_jobs(limit)
    if not jobs:
        out.print(f"no batch jobs recorded in {store.path}", markup=False)
        return 0
    for job in jobs:
        when = datetime.datetime.fromtimestamp(job.created_at).strftime("%Y-%m-%d %H:%M")
        ids = ", ".join(p.batch_id or "(not submitted)" for p in job.parts)
        judges = len(job.judge.get("members") or [None])  # a jury: a request per member
        drafts = f"{job.requests // judges:>7,} drafts"
        if judges > 1:
            drafts += f" x {judges} judges"
        out.print(f"{job.job_id}  {when}  {job.status:<16} {drafts}  {ids}", markup=False)
    return 0
