"""The report shows a jury's votes (loops and grading runs) and pairwise selections."""

from __future__ import annotations

from pathlib import Path

from gradeloop import HistoryStore, Rubric, grade, run_loop
from gradeloop.history._grading import GradedDraft
from gradeloop.history.report import render_report
from gradeloop.judging import Jury
from tests.loop.test_select_pairwise import SCORES, ScriptedJudge
from tests.support.fakes import FakeGenerator
from tests.support.judging_fakes import Raising, Voter

RUBRIC = {"criteria": [{"key": "cited", "description": "Cites the spec."}]}
SCRIPT = "<script>alert(1)</script>"


def test_a_loops_jury_votes_and_pairwise_selection_are_shown(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    jury = Jury([Voter({"cited": True}, model="judge-a"), Voter({"cited": False},
                model=f"judge-{SCRIPT}"), Raising("down")], quorum=2)  # fmt: skip
    calls: list[str] = []
    with HistoryStore(db) as store:
        voted = run_loop("t", RUBRIC, generator=FakeGenerator(), judge=jury, store=store,
                         max_rounds=1).loop_id  # fmt: skip
        paired = run_loop("t", {"criteria": [{"key": "quality", "description": "q",
                          "scale": "score", "threshold": 9}]},
                          generator=FakeGenerator(calls=calls), store=store, max_rounds=3,
                          judge=ScriptedJudge(SCORES, calls, position="first"),
                          stagnation_rounds=0, select="pairwise").loop_id  # fmt: skip
    html = render_report([voted, paired], db=db)
    assert "jury votes" in html
    assert "judge-a: met" in html and "not met" in html
    assert "down: api_error" in html
    assert "the jury tied: 1 of 2 judges say met" in html
    assert SCRIPT not in html  # a member's name is text, never markup
    assert "pairwise selection" in html
    assert "(orders disagree)" in html and "kept the earlier draft" in html


def test_a_grading_runs_jury_votes_are_shown_and_plain_runs_show_none(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    r = Rubric.from_dict(RUBRIC)
    jury = Jury([Voter({"cited": True}, model="a"), Voter({"cited": True}, model="b")])
    with HistoryStore(db) as store:
        run = store.add_grading_run(
            [GradedDraft("d0", "text", grade("text", r, judge=jury), "task")],
            rubric=r.to_dict(),
            rubric_name="demo",
        )
        plain = store.add_grading_run(
            [GradedDraft("d0", "text", grade("text", r, judge=Voter({"cited": True})), "task")],
            rubric=r.to_dict(),
            rubric_name="demo",
        )
    html = render_report([run], db=db)
    assert "jury votes" in html and "a: met; b: met" in html
    assert "jury votes" not in render_report([plain], db=db)
