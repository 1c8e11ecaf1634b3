"""regrade reuses a stored answer only for the draft that got it, and only as it was stored.

Two stored drafts with the same text keep their own answers (reuse is by the stored
output's id, never by a text match); a stored answer edited in the database, or one
recorded without a seal, is not reused: the judge is asked and the row is named.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from gradeloop import Criterion, HistoryStore, Rubric, Verdict, grade
from gradeloop.history._grading import GradedDraft
from gradeloop.migration import regrade
from gradeloop.models._fingerprint import run_fingerprint

RUBRIC = Rubric(criteria=[Criterion(key="cites", description="Every claim cites a source.")])
TEXT = "Water boils at 100 C at sea level."


class Judge:
    """A judge that answers ``met`` for every key, counting what it was asked."""

    model = "judge-model"

    def __init__(self, met: bool) -> None:
        self.met = met
        self.asked: list[list[str]] = []

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.asked.append([c.key for c in criteria])
        keys = {c.key: self.met for c in criteria}
        return Verdict(reasoning="r", criteria_met=keys, passed=self.met, issues=[])


def store_run(store: HistoryStore, answers: dict[str, bool], text: str = TEXT) -> str:
    """A grading run of drafts with the same ``text``, each with its own stored answer."""
    drafts = [
        GradedDraft(item, text, grade(text, RUBRIC, task="t", judge=Judge(met)), "t")
        for item, met in answers.items()
    ]
    config = {"fingerprint": run_fingerprint(Judge(True), RUBRIC.to_dict())}
    return store.add_grading_run(drafts, rubric=RUBRIC.to_dict(), config=config)


def met_by_item(store: HistoryStore, run: str) -> dict[str, bool]:
    return {d["item_id"]: d["evaluation"]["passed"] for d in store.grading_run(run)["drafts"]}


def test_two_drafts_with_the_same_text_keep_their_own_answers(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        source = store_run(store, {"unmet": False, "met": True})
        judge = Judge(True)
        report = regrade(source, RUBRIC, store=store, judge=judge)
        assert judge.asked == []  # both answers reused: nothing changed
        assert met_by_item(store, str(report.run_id)) == {"unmet": False, "met": True}
    (cites,) = report.keys
    assert (cites.to_met, cites.to_unmet, cites.reused) == (0, 0, 2)


def test_drafts_with_different_texts_are_reused_too(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        one = store_run(store, {"a": False})
        judge = Judge(True)
        report = regrade(one, RUBRIC, store=store, judge=judge)
        assert judge.asked == [] and report.keys[0].reused == 1 and report.warnings == []


def edit_record(db: Path, item: str, edit: str) -> None:
    """Change one stored draft's record behind gradeloop's back."""
    conn = sqlite3.connect(db)
    (raw,) = conn.execute("SELECT record_json FROM graded_drafts WHERE item_id = ?", (item,))
    record = json.loads(raw[0])
    if edit == "flip":
        record["evaluation"]["passed"] = True
        for c in record["detail"]["criteria"]:
            c["met"] = True
        for c in record["evaluation"]["criteria"]:
            c["passed"] = True
    else:  # as an older gradeloop stored it
        record.pop("seal")
    conn.execute(
        "UPDATE graded_drafts SET record_json = ? WHERE item_id = ?", (json.dumps(record), item)
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("edit", "named"),
    [("flip", "do not match their seal"), ("unseal", "carry no seal")],
)
def test_a_stored_answer_that_does_not_match_its_seal_is_asked_again(
    tmp_path: Path, edit: str, named: str
) -> None:
    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        source = store_run(store, {"edited": False, "kept": False}, text="no source here")
    edit_record(db, "edited", edit)
    with HistoryStore(db) as store:
        judge = Judge(False)
        report = regrade(source, RUBRIC, store=store, judge=judge)
        assert met_by_item(store, str(report.run_id)) == {"edited": False, "kept": False}
    assert judge.asked == [["cites"]]  # the edited row only; the other is reused
    assert report.keys[0].reused == 1
    (line,) = report.warnings
    assert named in line and source in line
    assert ("draft edited" in line) == (edit == "flip")


def test_the_seal_is_not_part_of_the_records_users_read(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        run = store_run(store, {"a": True})
        assert "seal" not in store.grading_run(run)["drafts"][0]
        assert len(store.grading_run(run, seals=True)["drafts"][0]["seal"]) == 64


def test_many_at_once_each_draft_keeps_its_own_answer(tmp_path: Path) -> None:
    answers = {f"d{n}": n % 2 == 0 for n in range(8)}
    with HistoryStore(tmp_path / "h.db") as store:
        source = store_run(store, answers)
        judge = Judge(True)
        report = regrade(source, RUBRIC, store=store, judge=judge, jobs=4)
        assert judge.asked == [] and met_by_item(store, str(report.run_id)) == answers


def test_a_loop_round_edited_in_the_database_is_asked_again(tmp_path: Path) -> None:
    from gradeloop import run_loop
    from tests.support.fakes import FakeGenerator

    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        loop = run_loop(
            "t", RUBRIC, generator=FakeGenerator(["no source"]), judge=Judge(False),
            store=store, max_rounds=1,
        ).loop_id  # fmt: skip
        judge = Judge(False)
        regrade(loop, RUBRIC, store=store, judge=judge, record=False)
        assert judge.asked == []  # sealed and unchanged: reused
    conn = sqlite3.connect(db)
    (raw,) = conn.execute("SELECT record_json FROM iterations").fetchone()
    conn.execute(
        "UPDATE iterations SET record_json = ?", (raw.replace('"met":false', '"met":true'),)
    )
    conn.commit()
    conn.close()
    with HistoryStore(db) as store:
        report = regrade(loop, RUBRIC, store=store, judge=judge, record=False)
    assert judge.asked == [["cites"]] and "do not match their seal" in report.warnings[0]
