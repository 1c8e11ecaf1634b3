"""The first hour on the command line (issue 40): what a new user met, each as a test.

The commands run in this process against the emulators; each test names the stumble
it guards.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.models.test_structured_forms import refused
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator
from tests.support.oai_emulator import OAIEmulator

RUBRIC = str(EXAMPLE / "rubric.toml")
DRAFT = str(EXAMPLE / "draft.md")


def test_a_refused_structured_form_gives_the_cli_option_not_only_the_python_keyword(
    oai_emulator: OAIEmulator, gradeloop_home: Path
) -> None:
    oai_emulator.enqueue(refused())
    ran = cli(
        "grade", DRAFT, "--rubric", RUBRIC, "--provider", "openai-compatible",
        "--base-url", oai_emulator.base_url, "--judge-model", "gemma", "--structured", "native",
        "--no-cache",
    )  # fmt: skip
    assert ran.code != 0
    assert "--structured auto" in ran.err and "--structured json" in ran.err, ran.err


# -- where a RUN_ID comes from ------------------------------------------------------------


def test_grade_ends_with_the_run_id_it_recorded_and_history_lists_and_shows_it(
    gradeloop_home: Path,
) -> None:
    ran = cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only")
    assert ran.code == 1
    last = ran.err.splitlines()[-1]
    assert last.startswith("run grade_") and " recorded (`gradeloop history grade_" in last
    assert "`gradeloop label grade_" in last
    run_id = last.split()[1]
    listed = cli("history")
    assert listed.code == 0 and "no loops recorded yet" in listed.out
    assert "grading runs (`gradeloop history RUN_ID` shows one):" in listed.out
    [row] = [ln for ln in listed.out.splitlines() if ln.startswith(run_id)]
    assert "grade" in row and "payments-guide" in row
    shown = cli("history", run_id[:12])
    assert shown.code == 0, shown.err
    assert shown.out.startswith(f"grading run {run_id}")
    assert "draft.md" in shown.out and "code_runs" in shown.out
    as_json = cli("history", run_id, "--json")
    assert json.loads(as_json.out)["run_id"] == run_id


def test_grade_json_keeps_stdout_json_and_no_history_prints_no_id(gradeloop_home: Path) -> None:
    ran = cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--json")
    assert json.loads(ran.out)["passed"] is False and "recorded (`gradeloop history" in ran.err
    unrecorded = cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--no-history")
    assert "recorded (`gradeloop history" not in unrecorded.err


def test_an_unknown_run_id_says_history_lists_both_kinds(gradeloop_home: Path) -> None:
    assert cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only").code == 1
    for command in (["history", "nope"], ["regrade", "nope", "--rubric", RUBRIC]):
        ran = cli(*command)
        assert ran.code == 2 and "`gradeloop history` lists both" in ran.err, ran.err
        assert "gradeloop view" not in ran.err
    empty = cli("history")
    assert "grading runs" in empty.out


def test_an_empty_history_says_what_records_into_it(gradeloop_home: Path) -> None:
    ran = cli("history")
    assert ran.code == 0 and "nothing recorded yet" in ran.out
    assert "`gradeloop grade` every grading run" in ran.out


def test_the_history_list_shows_a_preview_of_a_long_task(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    from tests.cli.test_cli_optimize import Model, judged

    emulator.responder = Model([judged(True)])
    long_task = "Write the guide. " * 30
    ran = cli("optimize", "--rubric", RUBRIC, "--task", long_task, "--base-url", emulator.base_url)
    assert ran.code == 0, ran.err
    [row] = [ln for ln in cli("history").out.splitlines() if ln.startswith("loop_")]
    assert len(row) < 200 and "…" in row  # piped too: a preview, not a 500-character row
