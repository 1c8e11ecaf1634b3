"""compare_runs(): two runs of the same drafts pair by pair, and the gate's verdict."""

from __future__ import annotations

import pytest

from gradeloop.errors import InputError
from gradeloop.stats import GradedRow, KeyOutcome, compare_runs


def _run(flags: list[bool], *, prefix: str = "", task: bool = False) -> list[GradedRow]:
    return [
        GradedRow(
            f"{prefix}{i}", ok, {"k": KeyOutcome(ok, 10.0 if ok else 0.0)}, 10.0 if ok else 0.0,
            task=f"task {i}" if task else "",
        )
        for i, ok in enumerate(flags)
    ]  # fmt: skip


def test_a_clear_drop_is_a_regression_exit_1() -> None:
    base = _run([True] * 300)
    cand = _run([True] * 240 + [False] * 60)
    result = compare_runs(base, cand)
    assert result.verdict == "regression" and result.exit_code == 1
    gate = result.to_json()["accepted"]
    assert gate["baseline"] == 1.0 and gate["candidate"] == 0.8 and gate["diff"] == -0.2
    assert gate["p"] < 1e-15 and gate["verdict"] == "regression"
    assert gate["ci"][0] < -0.2 < gate["ci"][1] < 0


def test_identical_runs_with_enough_drafts_show_no_regression_exit_0() -> None:
    flags = [i % 4 != 0 for i in range(400)]
    result = compare_runs(_run(flags), _run(flags))
    assert result.verdict == "no regression" and result.exit_code == 0
    assert result.accepted.detectable is not None and result.accepted.detectable <= 0.05


def test_few_drafts_are_insufficient_evidence_exit_4_never_no_change() -> None:
    flags = [True, False] * 10
    result = compare_runs(_run(flags), _run(flags))
    assert result.verdict == "insufficient evidence" and result.exit_code == 4
    assert result.accepted.detectable is not None and result.accepted.detectable > 0.05


def test_a_tolerated_drop_does_not_block() -> None:
    base, cand = _run([True] * 300), _run([True] * 285 + [False] * 15)
    assert compare_runs(base, cand).verdict == "regression"
    tolerant = compare_runs(base, cand, max_drop={"*": 0.1})
    assert tolerant.accepted.verdict == "regression within max-drop"
    assert tolerant.exit_code != 1


def test_holm_adjusts_over_the_gate_and_the_keys() -> None:
    result = compare_runs(_run([True] * 50), _run([True] * 44 + [False] * 6))
    ps = [c.p for c in result.comparisons]
    assert [c.p_adjusted for c in result.comparisons] == [min(1.0, 2 * min(ps))] * 2


def test_runs_align_by_task_when_ids_differ() -> None:
    result = compare_runs(
        _run([True] * 10, prefix="a", task=True), _run([True] * 10, prefix="b", task=True)
    )
    assert result.aligned_by == "task" and result.pairs == 10


def test_runs_with_nothing_in_common_are_bad_input() -> None:
    with pytest.raises(InputError, match="share no draft id"):
        compare_runs(_run([True] * 3, prefix="a"), _run([True] * 3, prefix="b"))


def test_a_duplicate_id_is_bad_input_naming_it() -> None:
    with pytest.raises(InputError, match="two drafts with id '0'"):
        compare_runs(_run([True]) * 2, _run([True]))


def test_unpaired_drafts_and_different_datasets_are_reported() -> None:
    result = compare_runs(_run([True] * 5), _run([True] * 3))
    assert result.only_baseline == ["3", "4"] and result.only_candidate == []
    assert any("different datasets" in w for w in result.warnings)


def test_scores_are_compared_by_paired_t_and_a_seeded_bootstrap() -> None:
    base = [
        GradedRow(str(i), True, {"s": KeyOutcome(True, 6.0 + i % 3)}, 6.0 + i % 3)
        for i in range(30)
    ]
    cand = [
        GradedRow(str(i), True, {"s": KeyOutcome(True, 7.0 + i % 3 * 0.9)}, 7.0) for i in range(30)
    ]
    scores = compare_runs(base, cand, seed=3).to_json()["scores"]
    assert set(scores) == {"overall", "s"}
    assert (
        scores["s"]["bootstrap_ci"]
        == compare_runs(base, cand, seed=3).to_json()["scores"]["s"]["bootstrap_ci"]
    )
    assert scores["s"]["ci"][0] < scores["s"]["diff"] < scores["s"]["ci"][1]


def test_the_markdown_summary_names_the_verdict_and_each_row() -> None:
    md = compare_runs(_run([True] * 300), _run([True] * 240 + [False] * 60)).markdown()
    assert md.startswith("### ❌ gradeloop gate: regression")
    assert "| **accepted** (the gate) | 100.0 % | 80.0 % | -20.0 pp" in md and "| `k` |" in md
