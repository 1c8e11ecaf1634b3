"""GradeBatch: a batch of drafts in, the same batch with its grades out.

The batch function of every engine: Ray Data's ``map_batches`` (an actor pool: each
actor builds the rubric, the judge and its client once), Spark's ``mapInPandas``
and Dask's ``map_partitions``. A batch is a ``pyarrow.Table``, a ``pandas.DataFrame``
or a dict of columns (numpy arrays or lists), and comes back in the same form.

Every draft is graded by :func:`gradeloop.grade_many`, so a row's grades are the ones
``grade_many`` gives that draft: the batch only carries them. Identical drafts of a
batch (same task, draft, reference and metadata) are graded once.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from ...bulk._many import grade_many
from ...grading._grade import Evaluation, Judge
from ...grading._rubric import Rubric
from ...grading._transcript import Transcript, as_transcript
from ...models._pacing import limiting
from ._formats import attach, cell_draft, cell_transcript, read
from ._limit import RateLimit
from ._rows import arrow_schema, empty_frame, row_of, spark_ddl

__all__ = ["GradeBatch"]

JudgeLike = Judge | Callable[[], Judge]


class GradeBatch:
    """Grade a batch of drafts; a callable class for ``Dataset.map_batches``::

        ds.map_batches(
            GradeBatch,
            fn_constructor_kwargs={"rubric": rubric, "judge": lambda: AnthropicJudge()},
            compute=ray.data.ActorPoolStrategy(size=8),
            batch_format="pyarrow",
            zero_copy_batch=True,
        )

    ``rubric`` is a :class:`~gradeloop.Rubric`, its dict, or the path of its file.
    ``judge`` is a judge, or a function of no arguments that builds one: a judge
    holds an HTTP client, which does not travel to another process, so give Ray a
    function and each actor builds its own (once). ``draft_column`` holds the drafts
    (text, or a transcript as a list of message dicts); ``transcript_column``, when
    given, holds transcripts as JSON text instead. ``id_column``, ``task_column``,
    ``reference_column`` and ``metadata_column`` are used when the batch has them
    (the task otherwise is ``task``). ``rate_limit`` (a :class:`RateLimit`) admits
    every judge request of every actor through one limiter.

    The batch comes back with ``accepted``, ``criteria_met`` (key -> met), ``scores``
    (key -> 0-10), ``issues`` (key -> list), ``status`` (key -> met / failed /
    not_checked / error), ``overall_score``, ``judge_error``, the judge's
    ``judge_requests``, ``judge_cached``, ``input_tokens``, ``output_tokens`` and
    ``cost_usd``, ``reused``, ``run_id`` and ``evaluation`` (the evaluation JSON);
    ``shadows`` too when the rubric shadows keys.

    A batch is read and never written to (the grades come back in a new table,
    frame or dict), so ``map_batches(..., zero_copy_batch=True)`` is safe and spares
    Ray a copy of each batch; :func:`grade_dataset` asks for it.

    ``skip_judge=True`` grades by code alone. ``judge_after_code=True`` asks the
    judge only about drafts whose code keys all passed (the others keep their judge
    keys ``not_checked``); off by default, as a report wants every key. ``cache``: a
    verdict cache (a :class:`~gradeloop.JudgeCache`, or True for one at this node's
    ``$GRADELOOP_HOME``). ``run_id`` is written on every row (default: ``ray-`` and
    the Ray job's id inside Ray, else a new id).
    """

    def __init__(
        self,
        rubric: Rubric | Mapping[str, Any] | str | Path,
        *,
        judge: JudgeLike | None = None,
        draft_column: str = "draft",
        rate_limit: RateLimit | None = None,
        id_column: str = "id",
        task_column: str = "task",
        task: str = "",
        reference_column: str = "reference",
        metadata_column: str = "metadata",
        transcript_column: str | None = None,
        concurrency: int = 16,
        skip_judge: bool = False,
        judge_after_code: bool = False,
        cache: Any = None,
        run_id: str | None = None,
        checker_timeout: float | None = None,
    ) -> None:
        self.rubric = _rubric(rubric)
        self.judge = _build_judge(judge)
        self.draft_column = draft_column
        self.columns = {
            "id": id_column,
            "task": task_column,
            "reference": reference_column,
            "metadata": metadata_column,
        }
        self.task = task
        self.transcript_column = transcript_column
        self.concurrency = concurrency
        self.skip_judge = skip_judge
        self.judge_after_code = judge_after_code
        self.cache = _open_cache(cache)
        self._owns_cache = cache is True
        self.checker_timeout = checker_timeout
        self.run_id = run_id or _default_run_id()
        self.rate_limit = rate_limit
        self._limit: Any = None
        if rate_limit is not None and self.judge is not None and not skip_judge:
            self._limit = _cluster_limit(rate_limit)

    def __call__(self, batch: Any) -> Any:
        """The batch with its grades (in the batch's own form)."""
        columns, n = read(batch, self._wanted())
        items = [self._item(columns, i) for i in range(n)]
        rows = self.grade_rows(items)
        return attach(batch, rows, self.rubric)

    def grade_rows(self, items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The added values of each draft (dicts with ``output_id``, ``task``,
        ``draft``, ``reference``, ``metadata``), identical drafts graded once."""
        firsts: dict[Hashable, int] = {}
        unique: list[Mapping[str, Any]] = []
        where: list[int] = []
        for item in items:
            key = _identity(item)
            if key not in firsts:
                firsts[key] = len(unique)
                unique.append(item)
            where.append(firsts[key])
        evaluations = self.evaluate(unique)
        seen: set[int] = set()
        rows = []
        for item, index in zip(items, where, strict=True):
            evaluation = evaluations[index]
            reused = index in seen
            seen.add(index)
            if reused:
                evaluation = evaluation.with_ids(str(item["output_id"]))
            rows.append(row_of(evaluation, self.run_id, reused=reused))
        return rows

    def evaluate(self, items: Sequence[Mapping[str, Any]]) -> list[Evaluation]:
        """``grade_many``'s evaluations of ``items``, in order (with the judge asked
        only after the code keys when ``judge_after_code``)."""
        drafts = [_Draft(**item) for item in items]
        if not drafts:
            return []
        skip = self.skip_judge or self.judge is None
        if not self.judge_after_code or skip:
            return self._grade(drafts, skip_judge=skip)
        first = self._grade(drafts, skip_judge=True)
        code = {c.key for c in self.rubric.code_criteria}
        ask = [i for i, e in enumerate(first) if all(e[k].passed for k in code)]
        judged = self._grade([drafts[i] for i in ask], skip_judge=False)
        for i, evaluation in zip(ask, judged, strict=True):
            first[i] = evaluation
        return first

    def _grade(self, drafts: Sequence[_Draft], *, skip_judge: bool) -> list[Evaluation]:
        if not drafts:
            return []
        guard: AbstractContextManager[Any] = (
            limiting(self._limit) if self._limit is not None and not skip_judge else nullcontext()
        )
        with guard:
            return grade_many(
                drafts,
                self.rubric,
                judge=None if skip_judge else self.judge,
                concurrency=self.concurrency,
                cache=None if skip_judge else self.cache,
                skip_judge=skip_judge,
                checker_timeout=self.checker_timeout,
            )

    def _wanted(self) -> list[str]:
        wanted = [self.transcript_column or self.draft_column, *self.columns.values()]
        return list(dict.fromkeys(wanted))

    def _item(self, columns: Mapping[str, list[Any]], i: int) -> dict[str, Any]:
        def value(name: str) -> Any:
            column = columns.get(self.columns[name])
            return None if column is None else column[i]

        if self.transcript_column is not None:
            column = self.transcript_column
            draft: Any = cell_transcript(columns[column][i], column)
        else:
            column = self.draft_column
            draft = cell_draft(columns[column][i], column)
        if isinstance(draft, list):
            draft = as_transcript(draft, what=f"column {column!r}, row {i + 1}")
        task = value("task")
        output_id = value("id")
        metadata = value("metadata")
        return {
            "output_id": str(output_id) if output_id is not None else f"row-{i + 1}",
            "task": task if isinstance(task, str) else self.task,
            "draft": draft,
            "reference": value("reference"),
            "metadata": metadata if isinstance(metadata, Mapping) else None,
        }

    def close(self) -> None:
        """Close the verdict cache this grader opened (``cache=True``); an actor's
        closes with its process."""
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def __dask_tokenize__(self) -> tuple[str, str, int]:
        """Dask names a task by hashing its function; a judge's client cannot be hashed,
        so a grader is named by its run and itself."""
        return ("GradeBatch", self.run_id, id(self))

    def arrow_schema(self) -> Any:
        """The Arrow types of the columns this adds (a ``pyarrow.Schema``)."""
        return arrow_schema(self.rubric)

    def spark_ddl(self) -> str:
        """The columns this adds as Spark DDL, to append to the input's schema for
        ``mapInPandas``: ``StructType(df.schema.fields +
        StructType.fromDDL(grader.spark_ddl()).fields)`` (docs/scale.md)."""
        return spark_ddl(self.rubric)

    def meta(self, like: Any) -> Any:
        """An empty pandas frame of what a graded ``like`` frame holds (Dask's ``meta``)."""
        return empty_frame(self.rubric, like)


class _Draft:
    """A row as :func:`grade_many` takes a draft (a DraftItem's fields)."""

    __slots__ = ("draft", "metadata", "output_id", "reference", "task")

    def __init__(
        self,
        output_id: str,
        task: str,
        draft: str | Transcript,
        reference: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.output_id = output_id
        self.task = task
        self.draft = draft
        self.reference = reference
        self.metadata = metadata


def _rubric(rubric: Rubric | Mapping[str, Any] | str | Path) -> Rubric:
    if isinstance(rubric, Rubric):
        return rubric
    if isinstance(rubric, str | Path):
        return Rubric.load(rubric)
    if isinstance(rubric, Mapping):
        return Rubric.from_dict(rubric)
    raise TypeError(
        f"GradeBatch rubric= takes a Rubric, its dict or its file's path, not "
        f"{type(rubric).__name__}"
    )


def _build_judge(judge: JudgeLike | None) -> Judge | None:
    """The judge, built here when given as a function of no arguments."""
    if judge is None or hasattr(judge, "evaluate"):
        return judge
    if callable(judge):
        built = judge()
        if not hasattr(built, "evaluate"):
            raise TypeError(
                f"GradeBatch judge=: the function returned {type(built).__name__}, "
                "which is no judge (it has no evaluate method)"
            )
        return built
    kind = type(judge).__name__
    raise TypeError(f"GradeBatch judge= takes a judge or a function that builds one, not {kind}")


def _cluster_limit(rate_limit: RateLimit) -> Any:
    """The handle every request of this grader is admitted by (a Ray actor's)."""
    if not isinstance(rate_limit, RateLimit):
        raise TypeError(f"rate_limit= takes a RateLimit, not {type(rate_limit).__name__}")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ImportError(
            "rate_limit= needs Ray: the limit is held by a Ray actor (pip install 'gradeloop[ray]')"
        ) from None
    from ._limit import ClusterLimit

    return ClusterLimit(rate_limit)


def _open_cache(cache: Any) -> Any:
    if cache is True:
        from ...history._cache import JudgeCache

        return JudgeCache()  # this node's $GRADELOOP_HOME
    return cache or None


def _default_run_id() -> str:
    try:
        import ray

        if ray.is_initialized():
            return f"ray-{ray.get_runtime_context().get_job_id()}"
    except ImportError:
        pass
    return f"grade_{secrets.token_hex(6)}"


def _identity(item: Mapping[str, Any]) -> Hashable:
    """What makes two rows the same grading: task, draft, reference and metadata.

    The usual row (a text draft, no metadata, a text reference or none) is keyed by
    the tuple of its texts, any other by its JSON: a tuple never equals a string,
    and which form a row gets depends on its values alone, so equal rows always meet
    and different ones never do."""
    task, draft = item["task"], item["draft"]
    reference, metadata = item["reference"], item["metadata"]
    if (
        isinstance(draft, str)
        and metadata is None
        and (reference is None or isinstance(reference, str))
    ):
        return (task, draft, reference)
    return json.dumps(
        [task, _plain(draft), _plain(reference), metadata], sort_keys=True, default=str
    )


def _plain(value: Any) -> Any:
    return value.to_json() if isinstance(value, Transcript) else value
