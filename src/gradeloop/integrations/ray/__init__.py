"""Grading past one machine: Ray Data (and Spark, Dask) with one global rate limit.

Extra ``gradeloop[ray]``. :class:`GradeBatch` is the batch function of every engine:
Ray Data's ``map_batches`` (a callable class: each actor of the pool builds the
rubric, the judge and its client once), Spark's ``mapInPandas`` and Dask's
``map_partitions``; every draft is graded by :func:`gradeloop.grade_many`, so a row's
grades are the ones ``grade_many`` gives that draft::

    import ray
    from gradeloop import AnthropicJudge
    from gradeloop.integrations.ray import GradeBatch, RateLimit

    graded = ray.data.read_parquet("drafts/").map_batches(
        GradeBatch,
        fn_constructor_kwargs={
            "rubric": "rubric.toml",
            "judge": AnthropicJudge,  # built in each actor
            "rate_limit": RateLimit(requests_per_minute=4000),
        },
        compute=ray.data.ActorPoolStrategy(size=8),
        batch_format="pyarrow",
        zero_copy_batch=True,
    )

:func:`grade_dataset` runs the whole job from the driver: resumable Parquet output
keyed by draft id, merged figures (:class:`GradeCounts`: a
:class:`gradeloop.stats.RunTally` a shard, so the figures are
:func:`gradeloop.stats.summarize`'s, exactly as one machine gets them) and one
history record. :class:`RateLimit` is one token bucket (a named Ray actor) on
requests and tokens per minute that every actor's judge requests are admitted by.
Ray is imported only when a Ray feature is used; docs/scale.md has the Spark and
Dask recipes.
"""

from ._batch import GradeBatch
from ._counts import GradeCounts
from ._dataset import DatasetRun, count_output, grade_dataset
from ._limit import RateLimit, TokenBuckets, remove_rate_limit

__all__ = [
    "DatasetRun",
    "GradeBatch",
    "GradeCounts",
    "RateLimit",
    "TokenBuckets",
    "count_output",
    "grade_dataset",
    "remove_rate_limit",
]
