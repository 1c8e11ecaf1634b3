"""grade_dataset: a Ray Dataset graded into Parquet, resumably, with merged figures.

The driver's part of a cluster run: it leaves out the drafts already written by an
earlier (killed) run of the same output, grades the rest with :class:`GradeBatch` on
an actor pool, writes them with Ray Data's own Parquet writer, counts every written
row in parallel (:class:`GradeCounts`, a :class:`~gradeloop.stats.RunTally` a shard,
merged on the driver into :func:`~gradeloop.stats.summarize`'s figures) and records
one grading run in the history with the merged figures: one SQLite writer, the driver.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...grading._rubric import Rubric
from ._batch import GradeBatch, JudgeLike, _rubric
from ._counts import GradeCounts
from ._limit import RateLimit

__all__ = ["DatasetRun", "grade_dataset"]

MANIFEST = "gradeloop-run.json"

# Rows a batch by default. Code keys grade a draft in about 0.1 ms, and Ray spends
# some 7 ms on each batch an actor runs, and the driver must hand out the next one in
# time (with batches of 1,000, two actors on two cores waited over a quarter of the
# run for work): 2,000 rows keep Ray's share under 4 %. A judge needs many drafts a
# batch to keep its ``concurrency`` requests in flight; its seconds make Ray's small.
CODE_BATCH, JUDGED_BATCH = 2000, 256


@dataclass(frozen=True)
class DatasetRun:
    """What :func:`grade_dataset` did: the run's id and output folder, how many
    drafts it graded now and how many an earlier run had written, and the merged
    counts and figures of every row in the output."""

    run_id: str
    output: str
    graded: int
    skipped: int
    counts: GradeCounts
    figures: dict[str, Any]


def grade_dataset(
    ds: Any,
    rubric: Rubric | Mapping[str, Any] | str | Path,
    output: str | Path,
    *,
    judge: JudgeLike | None = None,
    actors: int = 2,
    batch_size: int | None = None,
    rate_limit: RateLimit | None = None,
    id_column: str = "id",
    labels_column: str | None = None,
    cluster_column: str | None = None,
    store: Any = None,
    level: float = 0.95,
    **grading: Any,
) -> DatasetRun:
    """Grade every row of the Ray Dataset ``ds`` into Parquet files under ``output``.

    Rows are keyed by ``id_column`` (unique per draft). When ``output`` already
    holds rows of an earlier run with the same rubric (a run that was killed, or a
    dataset that grew), only the missing ids are graded, under the same run id; an
    ``output`` written with another rubric is refused. ``actors`` actors grade
    ``batch_size`` rows at a time (by default 2,000 when code alone grades, with
    ``skip_judge=True`` or no judge, and 256 with a judge); ``grading`` goes to
    :class:`GradeBatch` (``task``, ``concurrency``, ``skip_judge``,
    ``judge_after_code``, ``cache``, column names).
    ``labels_column`` (key -> a person's met / not met) and ``cluster_column`` feed
    the figures. ``store`` (a :class:`~gradeloop.HistoryStore`) gets one grading
    run with the merged figures.
    """
    import ray

    checked = _rubric(rubric)
    names = ds.schema().names
    if id_column not in names:
        raise ValueError(
            f"grade_dataset needs an id column: the dataset has no {id_column!r} "
            "(name yours with id_column=)"
        )
    for option, column in (("labels_column", labels_column), ("cluster_column", cluster_column)):
        if column is not None and column not in names:
            raise ValueError(f"grade_dataset: {option}={column!r} is not a column of the dataset")
    folder = Path(output)
    run_id = _manifest(folder, checked, grading.pop("run_id", None))
    done = _written_ids(folder, id_column)
    todo = ds
    if done:
        import pyarrow as pa

        ref = ray.put(pa.array(sorted(done), type=pa.string()))
        todo = ds.map_batches(
            _missing, fn_args=(ref, id_column), batch_format="pyarrow", zero_copy_batch=True
        )
    graded = todo.map_batches(
        GradeBatch,
        fn_constructor_kwargs={
            "rubric": checked,
            "judge": judge,
            "rate_limit": rate_limit,
            "id_column": id_column,
            "run_id": run_id,
            **grading,
        },
        compute=ray.data.ActorPoolStrategy(size=actors),
        batch_size=batch_size or _batch_rows(judge, grading),
        batch_format="pyarrow",
        zero_copy_batch=True,  # GradeBatch reads a batch and never writes to it
    )
    before = len(done)
    graded.write_parquet(str(folder))
    counts = count_output(
        folder, labels_column=labels_column, cluster_column=cluster_column, id_column=id_column
    )
    figures = counts.figures(level)
    if store is not None:
        _record(store, checked, run_id, counts, figures, folder, actors)
    return DatasetRun(run_id, str(folder), counts.drafts - before, before, counts, figures)


def _batch_rows(judge: Any, grading: Mapping[str, Any]) -> int:
    """Rows a batch when ``batch_size`` is not given: CODE_BATCH when code alone
    grades (no judge, or ``skip_judge=True``), JUDGED_BATCH with a judge."""
    return CODE_BATCH if judge is None or grading.get("skip_judge") else JUDGED_BATCH


def count_output(
    output: str | Path,
    *,
    labels_column: str | None = None,
    cluster_column: str | None = None,
    id_column: str = "id",
) -> GradeCounts:
    """The merged counts of every graded row under ``output`` (counted in parallel
    by Ray tasks, one shard per block, merged here)."""
    import pyarrow.parquet as pq
    import ray

    files = _good_files(Path(output))
    if not files:
        return GradeCounts.merged([], cluster_column=cluster_column)
    names = pq.read_schema(files[0]).names
    for option, column in (("labels_column", labels_column), ("cluster_column", cluster_column)):
        if column is not None and column not in names:
            raise ValueError(f"count_output: {option}={column!r} is not a column of {output}")
    columns = {"labels_column": labels_column, "cluster_column": cluster_column,
               "id_column": id_column}  # fmt: skip
    shards = ray.data.read_parquet([str(f) for f in files]).map_batches(
        _count_batch, fn_kwargs=columns, batch_format="pyarrow", batch_size=None
    )
    return GradeCounts.merged(
        (GradeCounts.from_json(json.loads(row["counts"])) for row in shards.take_all()),
        cluster_column=cluster_column,
    )


def _count_batch(table: Any, **columns: str | None) -> dict[str, list[str]]:
    wanted = ["evaluation", "judge_requests", "judge_cached", "input_tokens", "output_tokens",
              "cost_usd", *(c for c in columns.values() if c)]  # fmt: skip
    rows = table.select([c for c in dict.fromkeys(wanted) if c in table.column_names])
    counts = GradeCounts.of(rows.to_pylist(), **columns)  # type: ignore[arg-type]
    return {"counts": [json.dumps(counts.to_json())]}


def _missing(table: Any, written: Any, id_column: str) -> Any:
    """The rows whose ids are not ``written`` (an Arrow array of ids, or its ref)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import ray

    if isinstance(written, ray.ObjectRef):
        written = ray.get(written)
    ids = pc.cast(table.column(id_column), pa.string())
    return table.filter(pc.invert(pc.is_in(ids, value_set=written)))


def _manifest(folder: Path, rubric: Rubric, run_id: str | None) -> str:
    """The run id of ``folder`` (kept in its manifest; a new one for a new folder).
    A folder graded with another rubric is refused: its rows would not be comparable."""
    digest = hashlib.sha256(json.dumps(rubric.to_dict(), sort_keys=True).encode()).hexdigest()
    path = folder / MANIFEST
    if path.exists():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{path}: not a gradeloop run manifest ({exc})") from None
        if manifest.get("rubric_sha256") != digest:
            raise ValueError(
                f"{folder} holds grades of another rubric: give grade_dataset another "
                "output folder (or remove this one to grade again)"
            )
        return str(manifest["run_id"])
    folder.mkdir(parents=True, exist_ok=True)
    run_id = run_id or f"grade_{secrets.token_hex(6)}"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"run_id": run_id, "rubric_sha256": digest}), encoding="utf-8")
    os.replace(tmp, path)
    return run_id


def _good_files(folder: Path) -> list[Path]:
    """The Parquet files under ``folder`` that are whole. A file a killed run left
    half written (no footer) is set aside as ``NAME.partial``: its drafts are graded
    again."""
    import pyarrow.parquet as pq

    good = []
    for path in sorted(folder.rglob("*.parquet")) if folder.exists() else []:
        try:
            pq.read_metadata(path)
        except (OSError, ValueError):
            os.replace(path, path.with_name(path.name + ".partial"))
            continue
        good.append(path)
    return good


def _written_ids(folder: Path, id_column: str) -> set[str]:
    import pyarrow.parquet as pq

    done: set[str] = set()
    for path in _good_files(folder):
        column = pq.read_table(path, columns=[id_column]).column(id_column)
        done.update(str(v) for v in column.to_pylist())
    return done


def _record(
    store: Any,
    rubric: Rubric,
    run_id: str,
    counts: GradeCounts,
    figures: dict[str, Any],
    folder: Path,
    actors: int,
) -> None:
    """One grading run in the history: the totals and figures, the rows in Parquet."""
    config = {"engine": "ray", "output": str(folder), "actors": actors, "figures": figures}
    store.add_grading_run(  # a resumed run's record is written again, with the new totals
        [],
        rubric=rubric.to_dict(),
        origin="ray",
        config=config,
        run_id=run_id,
        totals=(counts.drafts, counts.accepted),
        replace=True,
    )
