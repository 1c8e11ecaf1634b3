"""A damaged history row is named and left out; the command goes on with the rest.

A row that is not JSON, JSON nested 200,000 deep, or JSON of the wrong shape once ended
regrade, report and label in exit 3 ("internal error"). Now each names the run and the
row in one warning line, leaves the row out, and does its work on the others; a run
whose own rubric is damaged is refused in one line (exit 2).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from gradeloop import Criterion, HistoryStore, Rubric, Verdict, grade, run_loop
from gradeloop.errors import HistoryError, HistoryWarning
from gradeloop.history._grading import GradedDraft
from gradeloop.history._records import record_problem
from gradeloop.history.report._label import LabelSession
from gradeloop.migration._evidence import stored_run
from tests.support.cli_helpers import cli
from tests.support.fakes import FakeGenerator

RUBRIC = Rubric.from_dict({"criteria": [{"key": "tone", "description": "Polite."}]})


class Unmet:
    """A judge that never passes, so a loop runs all its rounds."""

    model = "judge-model"

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        keys = {c.key: False for c in criteria}
        return Verdict(reasoning="r", criteria_met=keys, passed=False, issues=["tone: curt"])


def good(record: str) -> str:
    return record


def wrong_shape(record: str) -> str:
    data = json.loads(record)
    data["evaluation"]["criteria"] = "oops"
    return json.dumps(data)


DAMAGE = {
    "not JSON": lambda record: "{not json",
    "too deep": lambda record: "[" * 200_000 + "]" * 200_000,
    "a list": lambda record: "[1, 2]",
    "content a number": lambda record: json.dumps({**json.loads(record), "content": 7}),
    "criteria not a list": wrong_shape,
}


def history(tmp_path: Path, damage: str | None) -> tuple[Path, str, str]:
    """A grading run of 3 drafts and a loop of 3 rounds; the second of each damaged."""
    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        drafts = [
            GradedDraft(f"d{i}", f"draft {i}", grade(f"draft {i}", RUBRIC, judge=Unmet()), "t")
            for i in range(3)
        ]
        run = store.add_grading_run(drafts, rubric=RUBRIC.to_dict())
        loop = run_loop("t", RUBRIC, generator=FakeGenerator(["a", "b", "c"]), judge=Unmet(),
                        store=store, max_rounds=3, stagnation_rounds=None).loop_id  # fmt: skip
    if damage is not None:
        conn = sqlite3.connect(db)
        for table, where in (("graded_drafts", "position = 1"), ("iterations", "iteration = 2")):
            (raw,) = conn.execute(f"SELECT record_json FROM {table} WHERE {where}").fetchone()
            conn.execute(
                f"UPDATE {table} SET record_json = ? WHERE {where}", (DAMAGE[damage](raw),)
            )
        conn.commit()
        conn.close()
    return db, run, loop


@pytest.mark.parametrize("damage", DAMAGE)
def test_regrade_and_report_leave_the_damaged_row_out_and_go_on(
    tmp_path: Path, damage: str
) -> None:
    db, run, loop = history(tmp_path, damage)
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "tone"\ndescription = "Polite."\n')
    for source, row in ((run, f"grading run {run}, draft 2"), (loop, f"loop {loop}, round 2")):
        ran = cli("regrade", source, "--rubric", str(rubric), "--db", str(db), "--json")
        assert ran.code == 0, ran.err
        assert f"gradeloop: warning: {row}" in ran.err and ran.err.count(row) == 1
        assert json.loads(ran.out)["drafts"] == 2  # the other two were regraded
    ran = cli("report", "--html", str(tmp_path / "r.html"), "--db", str(db))
    assert ran.code == 0 and "damaged" in ran.err
    assert (tmp_path / "r.html").exists()


@pytest.mark.parametrize("damage", DAMAGE)
def test_label_leaves_the_damaged_row_out(tmp_path: Path, damage: str) -> None:
    db, run, _ = history(tmp_path, damage)
    with HistoryStore(db) as store, pytest.warns(HistoryWarning, match="draft 2|d1"):
        source = stored_run(store, run)
    with LabelSession(source, tmp_path / "l.jsonl") as session:
        assert [d.item_id for d in session.drafts] == ["d0", "d2"]


def test_an_undamaged_history_reads_whole_without_a_warning(tmp_path: Path) -> None:
    db, run, loop = history(tmp_path, None)  # filterwarnings=error: any warning fails
    with HistoryStore(db) as store:
        assert len(stored_run(store, run).drafts) == 3
        assert len(stored_run(store, loop).drafts) == 3
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "tone"\ndescription = "Polite."\n')
    ran = cli("regrade", run, "--rubric", str(rubric), "--db", str(db), "--json")
    assert ran.code == 0 and "warning" not in ran.err


def test_a_run_whose_rubric_is_damaged_is_refused_in_one_line(tmp_path: Path) -> None:
    db, run, _ = history(tmp_path, None)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE grading_runs SET rubric_json = ?", ("[" * 100_000,))
    conn.commit()
    conn.close()
    with HistoryStore(db) as store, pytest.raises(HistoryError, match="stored rubric is damaged"):
        store.grading_run(run)
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "tone"\ndescription = "Polite."\n')
    ran = cli("regrade", run, "--rubric", str(rubric), "--db", str(db))
    assert ran.code == 2 and f"grading run {run}: its stored rubric is damaged" in ran.err


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ({"content": "x", "evaluation": {"criteria": [{"score": "nine"}]}}, "not a number"),
        ({"content": "x", "detail": {"criteria": [{"met": "yes"}]}}, "not true or false"),
        ({"content": "x", "detail": {"criteria": ["x"]}}, "not an object"),
        ({"content": "x", "usage": [1]}, "'usage' is a list"),
        ({"iteration": "2"}, "not a whole number"),
    ],
)
def test_the_shape_check_names_what_is_wrong(record: dict[str, object], says: str) -> None:
    problem = record_problem(record)
    assert problem is not None and says in problem
    assert record_problem({"content": "x", "evaluation": {"criteria": []}}) is None
