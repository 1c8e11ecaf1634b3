"""Grading many drafts through the Message Batches API: half the price, results later.

::

    from gradeloop import AnthropicJudge, Rubric, batches

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

A :class:`~gradeloop.Jury` of AnthropicJudges (``on="all"``) goes through too: one
member job per judge on its own client, decided together at ``collect`` as
``Jury.evaluate`` decides (``status``/``wait``/``collect`` take the Jury as ``judge``).
"""

from __future__ import annotations

from ._collect import BatchResult, BatchStatus, PartStatus, collect, status, wait
from ._jury import job_requests
from ._submit import MAX_BYTES, MAX_REQUESTS, BatchJob, judge_settings, submit

__all__ = [
    "MAX_BYTES",
    "MAX_REQUESTS",
    "BatchJob",
    "BatchResult",
    "BatchStatus",
    "PartStatus",
    "collect",
    "job_requests",
    "judge_settings",
    "status",
    "submit",
    "wait",
]
