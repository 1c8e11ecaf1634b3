"""``gradeloop report`` charts the reward watch over steps."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from gradeloop import HistoryStore
from gradeloop.history.report import render_report
from gradeloop.history.report._watch import AUDIT_ORIGIN as REPORTED
from gradeloop.rewards import trl_reward
from gradeloop.rewards._watch import AUDIT_ORIGIN
from tests.rewards.fakes import RUBRIC, WordJudge, columns
from tests.support.cli_helpers import cli


def _watched(db: Path, steps: int = 3) -> list[str]:
    completions = [f"hello {i}" for i in range(8)]
    with HistoryStore(db) as store:
        reward = trl_reward(
            RUBRIC,
            judge=WordJudge("trainee"),
            audit=WordJudge("auditor", "hello"),
            audit_fraction=0.25,
            store=store,
            name="greet-run",
        )
        for n in range(steps):
            state = SimpleNamespace(global_step=n)
            reward(prompts=["p"] * 8, completions=list(completions),
                   **{**columns(8), "trainer_state": state})  # fmt: skip
        store.add_grading_run([], rubric=RUBRIC.to_dict(), origin="grade")
        return [s.run_id for s in reward.watch.steps if s.run_id]


def test_the_origin_is_the_one_the_report_reads() -> None:
    assert AUDIT_ORIGIN == REPORTED


def test_the_report_charts_each_watch_and_lists_its_steps_once(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    ids = _watched(db)
    html = render_report(db=db)
    assert 'data-watch="greet-run"' in html
    assert html.count('data-series="train_reward"') == 1
    assert html.count('class="point" data-step=') == 6  # two series, three steps
    assert "training judge" in html and "audit judge" in html
    assert "agreement: polite" in html
    for run_id in ids:  # the steps are charted, not listed as grading runs one by one
        assert f'id="run-{run_id}"' not in html and run_id not in html.split("reward watch")[0]
    assert "graded by" in html  # the plain grading run is still there


def test_a_step_named_by_id_is_shown_as_a_run(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    ids = _watched(db, steps=1)
    html = render_report([ids[0]], db=db)
    assert ids[0] in html and 'data-watch="greet-run"' not in html


def test_the_command_writes_the_chart(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    _watched(db, steps=2)
    out = tmp_path / "r.html"
    ran = cli("report", "--db", str(db), "--html", str(out))
    assert ran.code == 0, ran.err
    assert "reward watch: greet-run" in out.read_text(encoding="utf-8")
