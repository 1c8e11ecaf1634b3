"""GradeBatch, the global rate limit and grade_dataset on a real local Ray cluster,
with the Messages-API emulator as every actor's judge (marker ``engines``)."""

from __future__ import annotations

import functools
import gc
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gradeloop import HistoryStore, grade_many
from gradeloop.integrations.ray import (
    GradeBatch,
    GradeCounts,
    RateLimit,
    count_output,
    grade_dataset,
)
from gradeloop.integrations.ray._rows import row_of
from gradeloop.migration import DraftItem
from gradeloop.stats import GradedRow, summarize
from tests.engines.conftest import ROOT
from tests.engines.helpers import RUBRIC, drafts, emulator_judge, verdict_for
from tests.support.emulator import Emulator

# Ray warns about its own settings when its data context starts (not ours to fix).
pytestmark = [pytest.mark.engines, pytest.mark.filterwarnings("ignore::DeprecationWarning:ray")]


def _items(rows: list[dict[str, Any]]) -> list[DraftItem]:
    return [DraftItem(r["id"], r["task"], r["draft"]) for r in rows]


def _dataset(ray: Any, rows: list[dict[str, Any]], blocks: int = 20) -> Any:
    return ray.data.from_items(rows, override_num_blocks=blocks)


def _grade_on_ray(ray: Any, rows: list[dict[str, Any]], url: str, **kwargs: Any) -> list[Any]:
    return (
        _dataset(ray, rows)
        .map_batches(
            GradeBatch,
            fn_constructor_kwargs={
                "rubric": RUBRIC,
                "judge": functools.partial(emulator_judge, url),
                "run_id": "run-1",
                **kwargs.pop("grading", {}),
            },
            compute=ray.data.ActorPoolStrategy(size=2),
            batch_size=256,
            **kwargs,
        )
        .take_all()
    )


def test_ten_thousand_drafts_on_two_actors_equal_grade_many(
    ray_cluster: Any, judged: Emulator
) -> None:
    rows = drafts(10_000)
    graded = _grade_on_ray(ray_cluster, rows, judged.base_url, batch_format="pyarrow")
    sent_by_ray = len(judged.bodies)
    local = grade_many(_items(rows), RUBRIC, judge=emulator_judge(judged.base_url), concurrency=16)
    by_id = {row["id"]: row for row in graded}
    assert len(graded) == len(by_id) == 10_000 == sent_by_ray
    for evaluation in local:
        row = by_id[evaluation.output_id]
        assert json.loads(row["evaluation"]) == evaluation.to_json()
        expected = row_of(evaluation, "run-1")
        assert {k: row[k] for k in expected} == expected
    assert 0 < sum(e.accepted for e in local) < 10_000  # both answers occur


@pytest.mark.parametrize(
    ("batch_format", "zero_copy"),
    [("pandas", False), ("numpy", False), ("pyarrow", False),
     ("pandas", True), ("numpy", True), ("pyarrow", True)],
)  # fmt: skip
def test_each_batch_format_gives_the_same_rows(
    ray_cluster: Any, judged: Emulator, batch_format: str, zero_copy: bool
) -> None:
    # zero_copy_batch=True hands GradeBatch read-only views (grade_dataset asks for it)
    rows = drafts(300)
    graded = _grade_on_ray(
        ray_cluster, rows, judged.base_url, batch_format=batch_format, zero_copy_batch=zero_copy
    )
    local = grade_many(_items(rows), RUBRIC, judge=emulator_judge(judged.base_url))
    by_id = {row["id"]: row for row in graded}
    for evaluation in local:
        row = by_id[evaluation.output_id]
        assert row["criteria_met"] == {c.key: c.passed for c in evaluation.criteria}
        assert row["accepted"] is evaluation.accepted
        assert json.loads(row["evaluation"]) == evaluation.to_json()


class FrozenCount(GradeBatch):
    """GradeBatch that writes, on each row, how many objects its process has frozen."""

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        out = super().__call__(batch)
        return out.append_column("frozen", pa.array([gc.get_freeze_count()] * out.num_rows))


class FrozenByItsOwner(FrozenCount):
    """docs/scale.md's recipe: the owner of an actor freezes its set-up, not gradeloop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        gc.freeze()


@pytest.mark.parametrize(("grader", "frozen"), [(FrozenCount, False), (FrozenByItsOwner, True)])
def test_an_actor_s_collector_is_left_as_ray_made_it_unless_its_owner_freezes_it(
    ray_cluster: Any, grader: type[GradeBatch], frozen: bool
) -> None:
    graded = (
        _dataset(ray_cluster, drafts(40), blocks=4)
        .map_batches(
            grader,
            fn_constructor_kwargs={"rubric": RUBRIC, "skip_judge": True},
            compute=ray_cluster.data.ActorPoolStrategy(size=2),
            batch_size=10,
            batch_format="pyarrow",
        )
        .take_all()
    )
    assert len(graded) == 40
    # gradeloop changes nothing process-wide, in an actor too; the recipe's freeze
    # holds an actor's modules, rubric and Ray's own objects: many thousands
    counts = {row["frozen"] for row in graded}
    assert (min(counts) > 10_000) if frozen else (counts == {0})


def _arrivals(server: Emulator) -> list[float]:
    stamps: list[float] = []

    def answer(body: dict[str, Any]) -> Any:
        stamps.append(time.monotonic())
        return verdict_for(body)

    server.responder = answer
    return stamps


def _steady_rate(stamps: list[float], skip: float = 1.5) -> float:
    """Requests a second after the first ``skip`` seconds (the bucket's first burst)."""
    times = sorted(stamps)
    steady = [t for t in times if t >= times[0] + skip]
    return (len(steady) - 1) / (steady[-1] - steady[0])


@pytest.fixture
def slow_judge() -> Any:
    server = Emulator(keep_alive=True, latency=0.05)
    try:
        yield server
    finally:
        server.close()


def test_the_global_limit_holds_a_rate_across_actors(
    ray_cluster: Any, slow_judge: Emulator
) -> None:
    stamps = _arrivals(slow_judge)
    limit = RateLimit(requests_per_minute=1800, name="test-rate-holds")  # 30 a second
    _grade_on_ray(
        ray_cluster, drafts(360), slow_judge.base_url, batch_format="pyarrow",
        grading={"rate_limit": limit},
    )  # fmt: skip
    assert len(stamps) == 360
    assert _steady_rate(stamps) == pytest.approx(30, rel=0.10)


def test_without_the_limit_two_actors_send_far_faster(
    ray_cluster: Any, slow_judge: Emulator
) -> None:
    stamps = _arrivals(slow_judge)
    _grade_on_ray(ray_cluster, drafts(360), slow_judge.base_url, batch_format="pyarrow")
    assert _steady_rate(stamps, skip=0.5) > 30 * 1.5


def test_the_token_limit_holds_across_actors(ray_cluster: Any, slow_judge: Emulator) -> None:
    stamps = _arrivals(slow_judge)
    limit = RateLimit(tokens_per_minute=180_000, name="test-tokens-hold")  # 3,000 a second
    _grade_on_ray(
        ray_cluster, drafts(200), slow_judge.base_url, batch_format="pyarrow",
        grading={"rate_limit": limit},
    )  # fmt: skip
    times = sorted(stamps)
    start = times[0] + 1.5  # after the bucket's first burst
    # tokens of the replies answered after the start, over the same span
    spent = sum(
        usage["input_tokens"] + usage["output_tokens"]
        for (_, usage), t in zip(slow_judge.answered, times, strict=True)
        if t >= start
    )
    assert spent / (times[-1] - start) == pytest.approx(3000, rel=0.10)


def test_a_limiter_started_with_other_settings_is_refused(ray_cluster: Any) -> None:
    from gradeloop.integrations.ray._limit import ClusterLimit

    ClusterLimit(RateLimit(requests_per_minute=60, name="test-settings"))
    ClusterLimit(RateLimit(requests_per_minute=60, name="test-settings"))  # the same: fine
    with pytest.raises(ValueError, match="already runs with"):
        ClusterLimit(RateLimit(requests_per_minute=120, name="test-settings"))


def _written(folder: Path) -> list[str]:
    import pyarrow.parquet as pq

    ids: list[str] = []
    for path in folder.rglob("*.parquet"):
        try:
            ids += pq.read_table(path, columns=["id"]).column("id").to_pylist()
        except (OSError, ValueError):  # a half-written file of the killed run
            continue
    return ids


def test_a_killed_run_restarted_grades_only_what_is_missing(
    ray_cluster: Any, tmp_path: Path
) -> None:
    server = Emulator(keep_alive=True, latency=0.02)
    server.responder = verdict_for
    source, out = tmp_path / "drafts.jsonl", tmp_path / "graded"
    rows = drafts(1500)
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    command = [
        sys.executable, "-m", "tests.engines.driver",
        ray_cluster.get_runtime_context().gcs_address, server.base_url, str(source), str(out),
    ]  # fmt: skip
    try:
        first = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(_written(out)) < 200 and time.monotonic() < deadline:
            assert first.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        assert first.stdout is not None
        first.stdout.close()
        time.sleep(2)  # the killed job's actors and tasks are stopped with it
        kept = _written(out)
        assert 200 <= len(kept) < 1500
        before = len(server.bodies)
        second = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=300)
        assert second.returncode == 0, second.stderr.decode()[-3000:]
        report = json.loads(second.stdout.decode().strip().splitlines()[-1])
        assert report == {"graded": 1500 - len(kept), "skipped": len(kept),
                          "run_id": report["run_id"]}  # fmt: skip
        assert len(server.bodies) - before == 1500 - len(kept)  # only the missing ones
        final = _written(out)
        assert sorted(final) == sorted(r["id"] for r in rows)  # each once
    finally:
        server.close()


def test_merged_figures_equal_a_single_machine_run(
    ray_cluster: Any, judged: Emulator, tmp_path: Path
) -> None:
    rows = drafts(1200)
    with HistoryStore(tmp_path / "history.db") as store:
        run = grade_dataset(
            _dataset(ray_cluster, rows), RUBRIC, tmp_path / "graded",
            judge=functools.partial(emulator_judge, judged.base_url), batch_size=100,
            labels_column="labels", cluster_column="source", store=store,
        )  # fmt: skip
        recorded = store.grading_run(run.run_id)
        (summary,) = store.list_grading_runs()
    local = grade_many(_items(rows), RUBRIC, judge=emulator_judge(judged.base_url))
    single = GradeCounts.of(
        [{**row, **row_of(evaluation, "x")} for row, evaluation in zip(rows, local, strict=True)],
        cluster_column="source",
        labels_column="labels",
    )
    assert run.counts == single
    assert run.figures == single.figures()
    # the figures are gradeloop.stats' of the same drafts graded on one machine
    graded = [GradedRow.from_evaluation(e, metadata={"source": r["source"]})
              for r, e in zip(rows, local, strict=True)]  # fmt: skip
    expected = summarize(graded, cluster="source").to_json()
    expected.pop("variance", None)  # needs the rows (no key here has samples anyway)
    stats_part = {k: v for k, v in run.figures.items() if k != "judge"}
    stats_part["keys"] = {
        k: {n: v for n, v in f.items() if n != "labels"} for k, f in stats_part["keys"].items()
    }
    assert stats_part == expected
    assert run.figures["n"] == 1200 and run.graded == 1200 and run.skipped == 0
    assert run.figures["accepted"]["rate"] == round(sum(e.accepted for e in local) / 1200, 4)
    assert [k for k, f in run.figures["keys"].items() if "shadow" in f] == ["short"]
    assert {k for k, f in run.figures["keys"].items() if "labels" in f} == {"cites", "polite"}
    assert run.figures["cluster"] == "source" and run.figures["accepted"]["clusters"] == 7
    assert recorded["origin"] == "ray" and recorded["drafts"] == []  # the rows are in Parquet
    assert (summary.run_id, summary.drafts, summary.accepted) == (
        run.run_id,
        1200,
        sum(e.accepted for e in local),
    )
    assert recorded["config"]["figures"] == json.loads(json.dumps(run.figures))


def test_a_figures_column_the_dataset_lacks_is_refused_before_grading(
    ray_cluster: Any, tmp_path: Path
) -> None:
    rows = drafts(20)
    out = tmp_path / "graded"
    with pytest.raises(ValueError, match="cluster_column='sorce' is not a column of the dataset"):
        grade_dataset(_dataset(ray_cluster, rows, 2), RUBRIC, out, skip_judge=True,
                      cluster_column="sorce")  # fmt: skip
    assert not list(out.rglob("*.parquet"))  # nothing graded
    run = grade_dataset(_dataset(ray_cluster, rows, 2), RUBRIC, out, skip_judge=True,
                        cluster_column="source", labels_column="labels")  # fmt: skip
    assert run.graded == 20 and run.figures["cluster"] == "source"
    with pytest.raises(ValueError, match="labels_column='label' is not a column of"):
        count_output(out, labels_column="label")


def test_an_output_of_another_rubric_is_refused(ray_cluster: Any, tmp_path: Path) -> None:
    rows = drafts(20)
    out = tmp_path / "graded"
    grade_dataset(_dataset(ray_cluster, rows, 2), RUBRIC, out, skip_judge=True)
    other = RUBRIC.to_dict()
    other["criteria"] = other["criteria"][:1]
    with pytest.raises(ValueError, match="another rubric"):
        grade_dataset(_dataset(ray_cluster, rows, 2), other, out, skip_judge=True)
    again = grade_dataset(_dataset(ray_cluster, rows, 2), RUBRIC, out, skip_judge=True)
    assert (again.graded, again.skipped) == (0, 20)


def _row_groups(out: Path) -> list[int]:
    """The rows of each row group written under ``out`` (one a graded batch)."""
    import pyarrow.parquet as pq

    sizes = []
    for path in out.rglob("*.parquet"):
        meta = pq.ParquetFile(path).metadata
        sizes += [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    return sorted(sizes, reverse=True)


def test_grade_dataset_batches_code_keys_by_thousands_and_a_judge_s_by_hundreds(
    ray_cluster: Any, judged: Emulator, tmp_path: Path
) -> None:
    code, judge = tmp_path / "code", tmp_path / "judge"
    grade_dataset(_dataset(ray_cluster, drafts(4500), 2), RUBRIC, code, skip_judge=True)
    assert _row_groups(code) == [2000, 2000, 250, 250]  # two blocks of 2,250
    grade_dataset(_dataset(ray_cluster, drafts(600), 2), RUBRIC, judge,
                  judge=functools.partial(emulator_judge, judged.base_url))  # fmt: skip
    assert _row_groups(judge) == [256, 256, 44, 44]
    given = tmp_path / "given"
    grade_dataset(_dataset(ray_cluster, drafts(600), 2), RUBRIC, given, skip_judge=True,
                  batch_size=300)  # fmt: skip
    assert _row_groups(given) == [300, 300]
