"""Grading many drafts through the Message Batches API: half the price, results later.

::

    from gradeloop import AnthropicJudge, Rubric
    from gradeloop.bulk import batches

    judge = AnthropicJudge()
    job = batches.submit(["draft one", "draft two"], Rubric.load("rubric.toml"),
                         judge=judge, task="Write the payments guide.")
    print(job.job_id, job.batch_ids)          # recorded in the history already
    batches.wait(job, client=judge.client)    # or come back later, from anywhere
    result = batches.collect(job, judge=judge)
    for evaluation in result.evaluations:     # in submission order
        print(evaluation.output_id, evaluation.accepted, evaluation.judge_error)

``submit`` records the job (rubric, judge settings, every custom id and draft) in
the history before sending anything and splits a job above 100,000 requests or
256 MB into several batches; ``status`` and ``wait`` follow it; ``collect`` matches
results to drafts by custom id and turns errored, expired or canceled requests into
failed evaluations (never passes). The CLI: ``gradeloop grade --drafts F --batch``,
``gradeloop batch status ID``, ``gradeloop batch collect ID``.

A :class:`~gradeloop.judging.Jury` of AnthropicJudge members goes through batches too:
one request per draft and member, one batch per distinct client; ``collect`` decides
each draft as :meth:`Jury.evaluate <gradeloop.judging.Jury.evaluate>` does, a member whose
request failed abstaining, named (``status``/``wait``/``collect`` take the jury as
``judge=`` and ask each batch through its member's client).
"""

from __future__ import annotations

from ._collect import BatchResult, collect
from ._jury import MemberTally
from ._members import judge_settings
from ._status import BatchStatus, PartStatus, status, wait
from ._submit import MAX_BYTES, MAX_REQUESTS, BatchJob, submit

__all__ = [
    "MAX_BYTES",
    "MAX_REQUESTS",
    "BatchJob",
    "BatchResult",
    "BatchStatus",
    "MemberTally",
    "PartStatus",
    "collect",
    "judge_settings",
    "status",
    "submit",
    "wait",
]
