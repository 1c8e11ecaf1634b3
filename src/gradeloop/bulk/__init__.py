"""Grading many drafts at once: bounded concurrency, pacing on rate limits, progress::

    from gradeloop.bulk import grade_many
    from gradeloop.migration import read_drafts

    evaluations = grade_many(read_drafts("drafts.jsonl"), rubric, judge=judge, concurrency=16)

``grade_many`` and ``agrade_many`` are also importable from :mod:`gradeloop` itself.
:mod:`gradeloop.bulk.batches` grades many drafts through the Message Batches API
instead (half the price, results later): ``from gradeloop.bulk import batches``. It
is imported only when asked for, as it needs the Anthropic SDK.
"""

from ._many import agrade_many, grade_many
from ._progress import ManyProgress

__all__ = ["ManyProgress", "agrade_many", "grade_many"]
