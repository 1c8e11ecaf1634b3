"""``gradeloop grade --drafts FILE.jsonl``: many drafts, graded concurrently.

The JSONL format is the one ``compare`` reads (``{"id"?, "task"?, "draft"}`` per
line). ``--json`` prints one evaluation per line, in input order, with the draft's
id, each as soon as it and the drafts before it are graded; otherwise a table and the
totals (judge calls, cache reuse, tokens, dollars). Each draft is recorded in the
history as it is graded (:mod:`._many_stream`): a run stopped half way keeps, and
shows, what it did. Exit 0 when every draft is accepted, 1 when any is not, 2 for bad
input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..bulk._many import grade_many
from ..errors import InputError, JudgeError
from ..grading._grade import Evaluation
from ..grading._jsonout import dumps
from ..grading._rubric import Rubric
from ..grading._shadow import judge_request
from ..migration._jsonl import DraftItem, read_drafts
from ._io import console, read_task
from ._many_output import print_results, render_many
from ._many_stream import ManyStream
from ._models import build_judge, judges_configured, require_model
from ._record import say_recorded


def run(args: argparse.Namespace) -> int:
    """Grade every draft of ``--drafts``; the exit code."""
    rubric = Rubric.load(args.rubric)
    asked = judge_request(rubric) and not args.code_only
    task = read_task(args.task, args.task_file)
    given_task = args.task is not None or args.task_file is not None
    # a task matters only to the judge: code-only grading needs none on each line
    items = read_drafts(args.drafts, default_task=task if given_task or not asked else None)
    judge = None
    if asked:
        if rubric.judge_keys:
            require_model(args, rubric.judge_keys, code_only_hint=True, rubric=rubric)
        if judges_configured(args, rubric):
            judge = build_judge(args, rubric)
    if args.batch:
        return _batch(args, rubric, items, judge)
    stream = ManyStream(args, rubric, items, judge)
    try:
        evaluations = grade_many(
            items,
            rubric,
            judge=judge,
            concurrency=args.jobs,
            progress=not args.quiet,
            skip_judge=args.code_only,
            on_result=stream,
        )
    except KeyboardInterrupt:
        _stopped(args, items, stream)
        raise
    finally:
        run_id = stream.close()
    _require_a_server(evaluations)
    print_results(args, items, evaluations, streamed=True)  # --json lines went out already
    say_recorded(run_id, args)
    return 0 if all(e.accepted for e in evaluations) else 1


def _stopped(args: argparse.Namespace, items: Sequence[DraftItem], stream: ManyStream) -> None:
    """Interrupted: what was graded, written out and shown, and where it is kept."""
    done = stream.interrupted()
    if not args.json and done:
        render_many([items[i] for i in done], [r for r in stream.results if r is not None])
    run_id = stream.recorder.run_id if not stream.recorder.off else None
    kept = f"; recorded as grading run {run_id}" if run_id else ""
    print(
        f"gradeloop: stopped after {len(done)} of {len(items)} drafts{kept}; a rerun "
        "answers the finished ones from the verdict cache",
        file=sys.stderr,
    )


def _batch(
    args: argparse.Namespace, rubric: Rubric, items: Sequence[DraftItem], judge: object
) -> int:
    """Submit through the Message Batches API; wait and collect unless --no-wait."""
    from ..bulk.batches import submit
    from ..history._store import HistoryStore
    from ._batch import collect_and_show

    if judge is None:
        raise InputError(
            "--batch sends the judge's requests, and this rubric asks the judge nothing "
            "(or --code-only was given): grade without --batch"
        )
    with HistoryStore(args.db) as store:
        job = submit(items, rubric, judge=judge, store=store)  # type: ignore[arg-type]
        ids = ", ".join(job.batch_ids)
        drafts = job.requests if job.drafts is None else job.drafts
        per = f" for {drafts:,} drafts" if drafts != job.requests else ""  # a jury's
        print(
            f"gradeloop: submitted batch job {job.job_id} ({job.requests:,} requests{per}; "
            f"batch{'es' if len(job.batch_ids) > 1 else ''} {ids}); recorded in {store.path}",
            file=sys.stderr,
        )
        if args.no_wait:
            if args.json:
                sys.stdout.write(dumps(job.to_json()) + "\n")
            else:
                console().print(
                    f"collect it later: gradeloop batch collect {job.job_id}", markup=False
                )
            return 0
        args.wait = True
        return collect_and_show(args, store, job.job_id, judge)


def _require_a_server(evaluations: Sequence[Evaluation]) -> None:
    """One line and exit 2 when the judge's API failed on every draft: the model server
    is not there (unreachable, refusing, timing out), and a table of failures says less."""
    errors = [e.judge_error for e in evaluations]
    if errors and all(e is not None and e.startswith("api_error: ") for e in errors):
        first = str(errors[0]).removeprefix("api_error: ")
        raise JudgeError(f"the judge failed on every draft: {first}", reason="api_error")
