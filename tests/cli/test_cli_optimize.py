"""`gradeloop optimize`, `history` and `stats` against the emulator, in this process; the
killed-loop test runs the console script in a subprocess (it must die for real)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from gradeloop import HistoryStore
from gradeloop.testing import text_reply, verdict_reply
from tests.support.cli_helpers import EXAMPLE, cli, kill_when_blocked
from tests.support.emulator import Emulator

RUBRIC = str(EXAMPLE / "rubric.toml")
JUDGE_KEYS = ("api_cited", "errors_named", "no_invention")


def judged(passed: bool, issue: str = "cite 4.4 for retries") -> Any:
    return verdict_reply(
        {
            "reasoning": "read it",
            "criteria_met": dict.fromkeys(JUDGE_KEYS, passed),
            "passed": passed,
            "issues": [] if passed else [issue],
        }
    )


class Model:
    """Answers generate requests with numbered drafts and judge requests from a script."""

    def __init__(self, verdicts: list[Any], block_on_draft: int | None = None) -> None:
        self.verdicts = list(verdicts)
        self.drafts = 0
        self.block_on_draft = block_on_draft
        self.release = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Any:
        if "output_config" in body:
            return self.verdicts.pop(0)
        n = self.drafts
        self.drafts += 1
        if n == self.block_on_draft:
            self.release.wait(30)
        return text_reply(f"# Guide\n\nDraft number {n}. It is short.\n")


def optimize(emulator: Emulator, *extra: str) -> Any:
    return cli(
        "optimize",
        "--rubric",
        RUBRIC,
        "--task-file",
        str(EXAMPLE / "task.md"),
        "--base-url",
        emulator.base_url,
        *extra,
    )


def test_optimize_runs_the_loop_prints_rounds_and_records_history(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    emulator.responder = Model([judged(False), judged(True)])
    ran = optimize(emulator)
    assert ran.code == 0, ran.err
    assert ran.out == "# Guide\n\nDraft number 1. It is short.\n"
    lines = [ln for ln in ran.err.splitlines() if ln.startswith("round ")]
    assert lines[0].startswith("round 1/3  score 4.00  fail  failed: api_cited, errors_named")
    assert lines[1].startswith("round 2/3  score 10.00  pass")
    assert "tokens" in lines[0]
    assert "PASSED: passed after 2 rounds" in ran.err

    listing = cli("history")
    assert listing.code == 0 and "passed" in listing.out and "Write the integration" in listing.out
    with HistoryStore(gradeloop_home / "history.db") as store:
        loop_id = store.latest_loop_id()
        assert loop_id is not None
        records = store.iterations(loop_id)
    assert [r["feedback"] for r in records] == ["- cite 4.4 for retries", None]
    data = json.loads(cli("history", loop_id[:10], "--json").out)
    assert data["improvement_trajectory"] == [4.0, 10.0]
    assert data["iterations"][0]["feedback"] == "- cite 4.4 for retries"
    shown = cli("history", loop_id)
    assert "4.00 → 10.00" in shown.out and "errors_named" in shown.out

    stats = json.loads(cli("stats", "--json").out)
    assert stats["iterations_to_pass"]["value"] == 2
    assert stats["history_completeness"]["value"] == 100.0
    assert "iteration efficiency" in cli("stats").out


def test_not_passing_exits_1_with_the_best_draft(emulator: Emulator) -> None:
    emulator.responder = Model([judged(False)] * 3)
    ran = optimize(emulator, "--max-rounds", "2", "--json", "--no-history")
    assert ran.code == 1
    data = json.loads(ran.out)
    assert data["stop_reason"] == "max_rounds" and data["passed"] is False
    assert len(data["iterations"]) == 2
    assert "NOT PASSED" in ran.err


def test_single_shot_is_one_draft_graded(emulator: Emulator, tmp_path: Path) -> None:
    emulator.responder = Model([judged(False)] * 3)
    out = tmp_path / "final.md"
    ran = optimize(emulator, "--single-shot", "--out", str(out), "--no-history")
    assert ran.code == 1 and ran.out == ""
    assert out.read_text(encoding="utf-8").startswith("# Guide")
    assert len(emulator.bodies) == 2


def test_no_history_writes_no_database(emulator: Emulator, gradeloop_home: Path) -> None:
    emulator.responder = Model([judged(True)])
    assert optimize(emulator, "--no-history").code == 0
    assert not (gradeloop_home / "history.db").exists()


def test_optimize_without_a_model_is_exit_2() -> None:
    ran = cli("optimize", "--rubric", RUBRIC, "--task", "write it")
    assert ran.code == 2 and "ANTHROPIC_API_KEY" in ran.err and "--base-url" in ran.err


def test_optimize_bad_arguments_are_exit_2(emulator: Emulator) -> None:
    for args, fragment in (
        (["--max-rounds", "x"], "invalid int value"),
        (["--return", "first"], "invalid choice"),
        (["--task", ""], "the task is empty"),
    ):
        ran = cli("optimize", "--rubric", RUBRIC, "--base-url", emulator.base_url, *args)
        assert ran.code == 2 and fragment in ran.err, ran.err


def test_a_loop_killed_mid_run_keeps_its_finished_rounds(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    model = Model([judged(False), judged(False), judged(False)], block_on_draft=2)
    emulator.responder = model
    kill_when_blocked(
        model,
        [
            "optimize",
            "--rubric",
            RUBRIC,
            "--task",
            "write",
            "--base-url",
            emulator.base_url,
            "--stagnation-rounds",
            "0",
        ],
    )
    data = json.loads(cli("history", "--json").out)
    assert data[0]["rounds"] == 2 and data[0]["status"] == "interrupted"
    history = json.loads(cli("history", data[0]["loop_id"], "--json").out)
    assert [it["content"] for it in history["iterations"]] == [
        "# Guide\n\nDraft number 0. It is short.\n",
        "# Guide\n\nDraft number 1. It is short.\n",
    ]


# -- a draft cut off at --max-tokens: its text shown with the failure, and kept -----------

ECHO = "Write the integration guide. " + "Next page. Previous page. " * 40 + "Page 31 of 32"


def test_a_first_draft_cut_off_shows_what_it_wrote_and_the_history_keeps_it(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    from gradeloop.testing import truncated

    emulator.responder = lambda body: truncated(ECHO)
    ran = optimize(emulator, "--max-tokens", "256")
    assert ran.code == 2 and ran.out == ""
    [error] = [ln for ln in ran.err.splitlines() if ln.startswith("gradeloop: error:")]
    assert error.startswith("gradeloop: error: the draft was cut off at max_tokens=256")
    assert "a draft that reaches 256 tokens fails the loop" in error
    assert "it began 'Write the integration guide. Next page." in error
    assert "and ended '…" in error and "Page 31 of 32'" in error
    [kept] = [ln for ln in ran.err.splitlines() if ln.startswith("what it wrote is kept")]
    loop_id = kept.split("gradeloop history ")[1].rstrip("`")
    shown = cli("history", loop_id)
    assert shown.code == 0, shown.err
    assert "failed: NotAnAnswer: the draft was cut off at max_tokens=256" in shown.out
    assert f"it had written {len(ECHO):,} characters (the first 1000; `--json`" in shown.out
    assert ECHO[:1000] in shown.out and ECHO not in shown.out
    data = json.loads(cli("history", loop_id, "--json").out)
    [failure] = data["unrounded_usage"]["failures"]
    assert failure["text"] == ECHO


def test_a_revision_cut_off_ends_the_loop_with_its_text_in_the_error(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    from gradeloop.testing import truncated

    model = Model([judged(False)])

    def answer(body: dict[str, Any]) -> Any:
        return truncated(ECHO) if model.drafts == 1 and "output_config" not in body else model(body)

    emulator.responder = answer
    ran = optimize(emulator, "--max-tokens", "300")
    assert ran.code == 1, ran.err  # the judged first draft is returned, not passed
    assert "NOT PASSED: generator_failed after 1 round" in ran.err
    assert "the generator failed: NotAnAnswer: the draft was cut off at max_tokens=300" in ran.err
    assert "Page 31 of 32'" in ran.err
    with HistoryStore(gradeloop_home / "history.db") as store:
        loop_id = store.latest_loop_id()
        assert loop_id is not None
        outside = store.loop_usage_outside_rounds(loop_id)
    assert outside is not None and outside["failures"][0]["text"] == ECHO


def test_a_draft_that_finished_is_not_called_cut_off(emulator: Emulator) -> None:
    emulator.responder = Model([judged(True)])
    ran = optimize(emulator, "--max-tokens", "256", "--no-history")
    assert ran.code == 0 and "cut off" not in ran.err
