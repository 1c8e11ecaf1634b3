"""``gradeloop batch status|collect|list``: Message Batches jobs, from any process.

A job is submitted with ``gradeloop grade --drafts FILE --batch``; everything needed
to collect it is in the history database, so these commands work after a restart
or on another machine given the same database (``--db``) and API access.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import Any

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
            from ..batches import status

            now = status(job.job_id, client=client_for(args), store=store)
            if args.json:
                print_json(now.to_json())
            else:
                console().print(now.line(), markup=False, soft_wrap=True)
                for part in now.parts:
                    console().print(
                        f"  part {part.part + 1}: {part.batch_id or '-'} {part.processing_status}",
                        markup=False,
                    )
            return 0
        judge = judge_for(args, job.judge)
        return collect_and_show(args, store, job.job_id, judge)


def collect_and_show(args: argparse.Namespace, store: HistoryStore, job_id: str, judge: Any) -> int:
    """Wait (with --wait), collect, print like ``grade --drafts``; the exit code."""
    from ..batches import collect, job_requests, wait

    if getattr(args, "wait", False):
        client = getattr(judge, "client", None)  # a jury: each member's own
        wait(job_id, client=client, judge=judge, store=store, on_status=status_printer(args))
    result = collect(job_id, judge=judge, store=store)
    problems = result.problems()
    if problems:  # on stderr, so --json output stays one evaluation per line
        print(f"gradeloop: batch job {job_id}: {'; '.join(problems)}", file=sys.stderr)
    requests = job_requests(store, job_id)  # a jury's: its drafts, once
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
    asked for), on this machine's client, with the verdict cache unless --no-cache. A
    jury's job gets its Jury back: each member from its stored settings."""
    from ..history._cache import JudgeCache
    from ..judging._jury import Jury

    cache = None
    if not getattr(args, "no_cache", True):
        cache = JudgeCache(ttl=getattr(args, "cache_ttl", None))
        args.opened = [*getattr(args, "opened", []), cache]
    jury = settings.get("jury")
    if isinstance(jury, dict):
        members = [_member(args, m, cache) for m in settings.get("members") or ()]
        return Jury(
            members,
            policy=jury.get("policy", "majority"),
            on=jury.get("on", "all"),
            quorum=jury.get("quorum"),
            margin=float(jury.get("margin", 1.0)),
            names=jury.get("names"),
        )
    return _member(args, settings, cache)


def _member(args: argparse.Namespace, settings: dict[str, Any], cache: Any) -> Any:
    from ..models._anthropic import AnthropicJudge

    return AnthropicJudge(
        client_for(args),
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
        out.print(
            f"{job.job_id}  {when}  {job.status:<16} {job.requests:>7,} drafts  {ids}", markup=False
        )
    return 0
