"""The same batch function on Spark (``mapInPandas``, a local[2] session on Java 17)
and on Dask (``map_partitions``): the recipes of docs/scale.md, with the emulator as
the judge, equal grade_many's results draft for draft (marker ``engines``)."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from gradeloop import grade_many
from gradeloop.integrations.ray import GradeBatch
from gradeloop.migration import DraftItem
from tests.engines.conftest import ROOT
from tests.engines.helpers import RUBRIC, drafts, emulator_judge
from tests.support.emulator import Emulator

pytestmark = pytest.mark.engines

COLUMNS = ("id", "draft", "task")


def _expected(rows: list[dict[str, Any]], url: str) -> dict[str, Any]:
    items = [DraftItem(r["id"], r["task"], r["draft"]) for r in rows]
    return {e.output_id: e for e in grade_many(items, RUBRIC, judge=emulator_judge(url))}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
    )
    from pyspark.sql import SparkSession

    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # the JVM and its workers on loopback only
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers in this venv (not PATH's python3)

    session = (
        SparkSession.builder.master("local[2]")
        .appName("gradeloop-engines")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def test_spark_map_in_pandas_equals_grade_many(spark: Any, judged: Emulator) -> None:
    import pandas as pd
    from pyspark.sql.types import StructType

    rows = drafts(400)
    df = spark.createDataFrame(pd.DataFrame([{k: r[k] for k in COLUMNS} for r in rows]))
    judge = functools.partial(emulator_judge, judged.base_url)

    def grade_partition(frames: Iterator[Any]) -> Iterator[Any]:
        grader = GradeBatch(RUBRIC, judge=judge, run_id="spark-run")  # once per task
        for frame in frames:
            yield grader(frame)

    added = StructType.fromDDL(GradeBatch(RUBRIC, skip_judge=True).spark_ddl())
    schema = StructType(df.schema.fields + added.fields)
    graded = df.repartition(4).mapInPandas(grade_partition, schema=schema).collect()
    expected = _expected(rows, judged.base_url)
    assert len(graded) == 400
    for row in graded:
        evaluation = expected[row["id"]]
        assert json.loads(row["evaluation"]) == evaluation.to_json()
        assert row["criteria_met"].asDict() == {c.key: c.passed for c in evaluation.criteria}
        assert row["issues"]["cites"] == list(evaluation["cites"].issues)
        assert row["accepted"] is evaluation.accepted and row["run_id"] == "spark-run"


def test_dask_map_partitions_equals_grade_many(judged: Emulator) -> None:
    import dask
    import dask.dataframe as dd
    import pandas as pd

    rows = drafts(400)
    frame = pd.DataFrame([{k: r[k] for k in COLUMNS} for r in rows])
    grader = GradeBatch(RUBRIC, judge=functools.partial(emulator_judge, judged.base_url))
    ddf = dd.from_pandas(frame, npartitions=4)
    with dask.config.set(scheduler="threads", num_workers=2):
        graded = ddf.map_partitions(grader, meta=grader.meta(frame)).compute()
    expected = _expected(rows, judged.base_url)
    assert len(graded) == 400 == len(judged.bodies) // 2
    for _, row in graded.iterrows():
        evaluation = expected[row["id"]]
        assert json.loads(row["evaluation"]) == evaluation.to_json()
        assert row["criteria_met"] == {c.key: c.passed for c in evaluation.criteria}
    assert list(graded.columns) == list(grader.meta(frame).columns)
