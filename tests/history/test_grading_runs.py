"""Grading runs in the history: stored whole, scrubbed, listed, and recorded by the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradeloop import HistoryStore, Rubric, grade, run_loop
from gradeloop.errors import HistoryError, LoopNotFoundError
from gradeloop.history._grading import GradedDraft
from gradeloop.history._scrub import REDACTED
from tests.migration.test_compare import DRAFTS, SHADOW_RUBRIC, compare_here
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

KEY = "sk-ant-api03-" + "x" * 40
RUBRIC = {
    "name": "r",
    "criteria": [
        {"key": "short", "description": "short", "checker": "length", "options": {"max_chars": 50}},
        {"key": "tone", "description": "friendly"},
    ],
}


def test_a_run_is_stored_in_order_with_full_detail(tmp_path: Path) -> None:
    rubric = Rubric.from_dict(RUBRIC)
    judge = FakeJudge(
        verdict(True, {"tone": True}, reasoning="kind"), verdict(False, {"tone": False}, ["cold"])
    )
    drafts = [
        GradedDraft("a", "hello", grade("hello", rubric, judge=judge), "greet"),
        GradedDraft("b", "go away", grade("go away", rubric, judge=judge), "greet"),
        GradedDraft("c", "x", None, "greet", error="invalid: not JSON"),
    ]
    with HistoryStore(tmp_path / "h.db") as store:
        run_id = store.add_grading_run(drafts, rubric=rubric.to_dict(), rubric_name="r")
        [summary] = store.list_grading_runs()
        run = store.grading_run(run_id)
    assert (summary.run_id, summary.drafts, summary.accepted) == (run_id, 3, 1)
    assert [d["item_id"] for d in run["drafts"]] == ["a", "b", "c"]
    first = run["drafts"][0]["detail"]
    assert first["reasoning"] == "kind"
    assert [(c["key"], c["source"], c["filled_by"], c["met"]) for c in first["criteria"]] == [
        ("short", "code", "length", True),
        ("tone", "judge", "judge", True),
    ]
    assert run["drafts"][1]["detail"]["issues"] == ["cold"]
    assert run["drafts"][2] | {"evaluation": None} == run["drafts"][2]
    assert run["drafts"][2]["error"] == "invalid: not JSON"


def test_a_run_is_scrubbed_of_keys(tmp_path: Path) -> None:
    rubric = Rubric.from_dict(RUBRIC)
    text = f"my key is {KEY}"
    ev = grade(text, rubric, skip_judge=True)
    with HistoryStore(tmp_path / "h.db") as store:
        run_id = store.add_grading_run(
            [GradedDraft("a", text, ev, f"task {KEY}")],
            rubric=rubric.to_dict(),
            config={"api_key": KEY, "judge_model": "m"},
        )
        run = store.grading_run(run_id)
    raw = (tmp_path / "h.db").read_bytes()
    assert KEY.encode() not in raw
    assert run["drafts"][0]["content"] == f"my key is {REDACTED}"
    assert run["config"] == {"judge_model": "m"}


def test_run_ids_are_unique_and_unknown_ones_are_named(tmp_path: Path) -> None:
    rubric = Rubric.from_dict(RUBRIC)
    with HistoryStore(tmp_path / "h.db") as store:
        store.add_grading_run([], rubric=rubric.to_dict(), run_id="grade_1")
        with pytest.raises(HistoryError, match="already"):
            store.add_grading_run([], rubric=rubric.to_dict(), run_id="grade_1")
        with pytest.raises(LoopNotFoundError, match="grade_2"):
            store.grading_run("grade_2")


def test_loop_records_carry_the_detail(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        judge = FakeJudge(verdict(False, {"tone": False}, ["cold"], reasoning="why"))
        result = run_loop(
            "t", RUBRIC, generator=FakeGenerator(), judge=judge, store=store, max_rounds=1
        )
        [record] = store.iterations(result.loop_id)
    assert record["detail"]["reasoning"] == "why"
    assert {c["key"]: c["source"] for c in record["detail"]["criteria"]} == {
        "short": "code",
        "tone": "judge",
    }


def test_cli_grade_records_a_run_unless_told_not_to(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    args = [
        "grade",
        str(EXAMPLE / "draft.md"),
        "--rubric",
        str(EXAMPLE / "rubric.toml"),
        "--code-only",
        "--db",
        str(db),
    ]
    assert cli(*args, "--no-history").code == 1
    assert not db.exists()
    assert cli(*args).code == 1
    with HistoryStore(db) as store:
        [summary] = store.list_grading_runs()
        run = store.grading_run(summary.run_id)
    assert summary.origin == "grade" and summary.drafts == 1
    assert run["drafts"][0]["item_id"] == "draft.md"
    assert json.dumps(run["rubric"])  # stored as JSON


def test_cli_grade_still_grades_when_the_history_cannot_be_written(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    db.write_text("this is not a database " * 50)
    ran = cli(
        "grade",
        str(EXAMPLE / "draft.md"),
        "--rubric",
        str(EXAMPLE / "rubric.toml"),
        "--code-only",
        "--db",
        str(db),
    )
    assert ran.code == 1
    assert "warning: the grading run was not recorded" in ran.err
    assert "overall" in ran.out


def test_cli_compare_records_its_drafts_as_a_grading_run(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "h.db"
    code, _, err = compare_here(
        emulator, capsys, DRAFTS, "--rubric", SHADOW_RUBRIC, "--db", str(db)
    )
    assert code == 0, err
    drafts = [json.loads(line) for line in Path(DRAFTS).read_text().splitlines() if line.strip()]
    with HistoryStore(db) as store:
        [summary] = store.list_grading_runs()
        run = store.grading_run(summary.run_id)
    assert summary.origin == "compare" and summary.drafts == len(drafts)
    assert [d["content"] for d in run["drafts"]] == [d["draft"] for d in drafts]
    assert run["config"]["judge_model"]
