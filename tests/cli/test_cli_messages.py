"""What the command line says when the input is wrong: one line, one shape, the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator

RUBRIC = str(EXAMPLE / "rubric.toml")
DRAFT = str(EXAMPLE / "draft.md")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["grade", DRAFT, "--rubric", RUBRIC, "--code-onyl"],
            "gradeloop grade: error: unrecognized argument --code-onyl; did you mean "
            "--code-only? (see `gradeloop grade --help`)",
        ),
        (
            ["history", "--limt", "3"],
            "gradeloop history: error: unrecognized argument --limt; did you mean --limit?",
        ),
        (
            ["grade", DRAFT, "--rubric", RUBRIC, "--zzzzzz"],
            "gradeloop grade: error: unrecognized arguments: --zzzzzz",
        ),
    ],
)
def test_a_mistyped_flag_gets_its_commands_closest_flag(args: list[str], expected: str) -> None:
    ran = cli(*args)
    assert ran.code == 2 and ran.err.startswith(expected), ran.err
    assert len(ran.err.strip().splitlines()) == 1


def test_a_misspelt_required_field_gets_a_did_you_mean(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "a"\ndescripton = "x"\n', encoding="utf-8")
    ran = cli("grade", DRAFT, "--rubric", str(rubric), "--code-only")
    assert ran.code == 2
    assert "unknown criterion field 'descripton'; did you mean 'description'?" in ran.err
    rubric.write_text('[[criteria]]\nkey = "a"\n', encoding="utf-8")  # really missing
    assert (
        "missing required field 'description'" in cli("grade", DRAFT, "--rubric", str(rubric)).err
    )


def test_help_texts_use_no_internal_jargon_and_every_command_has_a_description() -> None:
    from gradeloop.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, __import__("argparse")._SubParsersAction):
            for name, command in action.choices.items():
                assert command.description, f"`gradeloop {name} --help` has no description"
                texts.append(command.format_help())
    for text in texts:
        # the seed documents are internal; a random seed (propose's --seed N) is not
        plain = re.sub(r"--seed( n)?\b|random seed", "", text.lower())
        assert "seed" not in plain, text
    readme = (EXAMPLE.parent.parent / "README.md").read_text(encoding="utf-8")
    assert "seed 00" not in readme


def test_checkers_shows_plain_descriptions_that_fit_when_piped() -> None:
    ran = cli("checkers")
    assert ran.code == 0 and "``block" not in ran.out  # the docstring's markup is gone
    assert "The draft is valid JSON (block=true: " in ran.out
    assert "json_valid  (builtin, gradeloop)" in ran.out
    assert max(len(line) for line in ran.out.splitlines()) <= 100


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["grade", "missing.md", "--rubric", RUBRIC],
            "draft file not found: missing.md; check the path",
        ),
        (
            ["grade", DRAFT, "--rubric", "nope.toml"],
            "rubric file not found: nope.toml; check the path",
        ),
        (
            ["grade", DRAFT, "--rubric", RUBRIC, "--task-file", "t.txt"],
            "task file not found: t.txt; check the path",
        ),
        (["history", "--db", "no.db"], "history database file not found: no.db; check the path"),
    ],
)
def test_not_found_has_one_shape(args: list[str], expected: str) -> None:
    ran = cli(*args)
    assert ran.code == 2 and ran.err == f"gradeloop: error: {expected}\n"


def test_a_length_check_with_no_bound_blames_no_single_option(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "a"\ndescription = "d"\nchecker = "length"\n')
    ran = cli("grade", DRAFT, "--rubric", str(rubric))
    assert "checker 'length' options: set at least one of: min_words" in ran.err
    assert "option 'max_lines'" not in ran.err and "got None" not in ran.err


def test_read_only_commands_create_no_files(gradeloop_home: Path) -> None:
    assert cli("history").code == 0
    assert cli("stats").code == 0
    gone = cli("history", "loop_abc")
    assert gone.code == 2 and "nothing is recorded yet" in gone.err
    resume = cli("optimize", "--resume", "nope")
    assert resume.code == 2 and resume.err.startswith("gradeloop: error: no graph thread 'nope'")
    assert list(gradeloop_home.iterdir()) == []


def test_the_history_table_never_cuts_ids_or_drops_columns(
    gradeloop_home: Path, tmp_path: Path
) -> None:
    from gradeloop import HistoryStore

    task = "Write the integration guide for the payments API, with examples " * 3
    with HistoryStore() as store:
        store.start_loop("loop_0123456789abcdef", task=task, rubric={}, config={})
    piped = cli("history")
    header, row = piped.out.splitlines()[:2]
    assert header.split() == ["id", "started", "task", "rounds", "stop", "passed", "score", "cost"]
    assert "loop_0123456789abcdef" in row  # piped: ids in full
    assert task[:50] in row and task.strip() not in row and "…" in row  # the task: a preview
    screen = cli("history", tty=True, env={"COLUMNS": "80"})
    assert "loop_0123456789abcdef" in screen.out.replace("\n", "")  # folded, not cut
    for column in ("rounds", "passed", "score", "cost"):
        assert column in screen.out


def test_calibrate_counts_one_draft_in_the_singular(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"draft": "Short. Fine.", "labels": {"code_runs": true}}\n')
    ran = cli(
        "calibrate",
        str(labels),
        "--rubric",
        str(EXAMPLE / "rubric-shadow.toml"),
        "--task",
        "t",
        "--no-history",
    )
    assert ran.code == 0, ran.err
    assert "1 labelled draft" in ran.out and "1 labelled drafts" not in ran.out


def test_grade_warns_when_the_judge_gets_no_task(emulator: Emulator) -> None:
    from tests.cli.test_cli_optimize import judged

    emulator.enqueue(judged(True), judged(True))
    base = ["grade", DRAFT, "--rubric", RUBRIC, "--base-url", emulator.base_url, "--no-history"]
    ran = cli(*base)
    assert "warning: no --task given" in ran.err
    told = cli(*base, "--task", "Write the payments guide.")
    assert "warning" not in told.err
    offline = cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--no-history")
    assert "warning" not in offline.err  # no judge, nothing to warn about


@pytest.mark.parametrize("command", ["compare", "calibrate"])
def test_inputs_are_checked_before_the_model(command: str) -> None:
    ran = cli(command, "missing.jsonl", "--rubric", str(EXAMPLE / "rubric-shadow.toml"))
    assert ran.code == 2 and "file not found: missing.jsonl" in ran.err  # not "no model"


def test_optimize_writes_its_history_to_db(
    emulator: Emulator, tmp_path: Path, gradeloop_home: Path
) -> None:
    from gradeloop import HistoryStore
    from tests.cli.test_cli_optimize import Model, judged

    emulator.responder = Model([judged(True)])
    db = tmp_path / "elsewhere.db"
    ran = cli(
        "optimize",
        "--rubric",
        RUBRIC,
        "--task",
        "t",
        "--base-url",
        emulator.base_url,
        "--db",
        str(db),
    )
    assert ran.code == 0, ran.err
    with HistoryStore(db) as store:
        assert len(store.list_loops()) == 1
    assert not (gradeloop_home / "history.db").exists()
    assert "gradeloop history" in ran.err and f"--db {db}" in ran.err


def test_an_out_path_that_cannot_be_written_stops_before_any_model_call(
    emulator: Emulator, tmp_path: Path
) -> None:
    base = ["optimize", "--rubric", RUBRIC, "--task", "t", "--base-url", emulator.base_url]
    ran = cli(*base, "--out", str(tmp_path / "no" / "such" / "x.md"))
    assert ran.code == 2 and "--out folder not found" in ran.err
    graph = cli(*base, "--engine", "graph", "--out", str(tmp_path))
    assert graph.code == 2 and "is a folder" in graph.err
    assert emulator.bodies == []  # nothing was paid for


def test_a_late_write_failure_names_the_loop_and_how_to_recover(
    emulator: Emulator, tmp_path: Path
) -> None:
    import shutil

    from tests.cli.test_cli_optimize import Model, judged

    folder = tmp_path / "out"
    folder.mkdir()
    model = Model([judged(True)])

    def vanish(body: dict[str, object]) -> object:  # the folder goes away mid-run
        shutil.rmtree(folder, ignore_errors=True)
        return model(body)

    emulator.responder = vanish
    ran = cli(
        "optimize",
        "--rubric",
        RUBRIC,
        "--task",
        "t",
        "--base-url",
        emulator.base_url,
        "--out",
        str(folder / "final.md"),
    )
    assert ran.code == 2
    found = re.search(
        r"loop (loop_\w+) is recorded: recover its final draft with "
        r"`gradeloop history (loop_\w+) --json`",
        ran.err,
    )
    assert found and found.group(1) == found.group(2), ran.err
    shown = cli("history", found.group(1), "--json")
    assert json.loads(shown.out)["iterations"][0]["content"].startswith("# Guide")


def test_compare_labels_each_sources_words_and_speaks_of_no_labels(emulator: Emulator) -> None:
    from tests.migration.test_compare import stand_in

    emulator.responder = stand_in().respond
    ran = cli(
        "compare",
        str(EXAMPLE / "drafts.jsonl"),
        "--rubric",
        str(EXAMPLE / "rubric-shadow.toml"),
        "--task-file",
        str(EXAMPLE / "task.md"),
        "--base-url",
        emulator.base_url,
        "--no-history",
    )
    assert ran.code == 0, ran.err
    lines = [line.strip() for line in ran.out.splitlines()]
    judge = [line for line in lines if line.startswith("judge said:")]
    checker = [line for line in lines if line.startswith("checker sentence_len said:")]
    assert judge and checker
    assert not any("has 42 words (max 40)" in line for line in judge)  # not the checker's
    assert any("has 42 words (max 40)" in line for line in checker)


def test_the_constant_side_kappa_note_fits_compare_and_calibrate() -> None:
    from gradeloop.migration._agreement import cohen_kappa

    kappa, note = cohen_kappa([True, True, True], [True, False, True])
    assert kappa == 0 and note is not None
    assert "label" not in note  # compare has no labels: the note must fit both commands
    assert "items that should pass and items that should fail" in note


def test_an_empty_draft_is_graded_with_a_note(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "short"\ndescription = "d"\nchecker = "length"\n'
        "options = { max_words = 3 }\n"
    )
    empty = cli("grade", "-", "--rubric", str(rubric), stdin="  \n")
    assert empty.code == 0 and "note: the draft is empty" in empty.err
    text = cli("grade", "-", "--rubric", str(rubric), stdin="Hi.")
    assert "note" not in text.err


def test_calibrate_compares_a_moved_key_with_its_previous_judge_figure(
    emulator: Emulator,
) -> None:
    from tests.migration.test_compare import stand_in

    emulator.responder = stand_in().respond
    common = ["--task-file", str(EXAMPLE / "task.md"), "--base-url", emulator.base_url]
    labels = str(EXAMPLE / "labels.jsonl")
    before = cli("calibrate", labels, "--rubric", str(EXAMPLE / "rubric-shadow.toml"), *common)
    assert before.code == 0, before.err
    after = cli("calibrate", labels, "--rubric", str(EXAMPLE / "rubric.toml"), "--json", *common)
    assert after.code == 0, after.err
    key = next(k for k in json.loads(after.out)["keys"] if k["key"] == "sentence_len")
    assert key["rated_by"] == "sentence_len" and key["moved_from"] == "judge"
    assert key["delta"]["agreement"] == pytest.approx(0.3)  # 70% as the judge -> 100% in code
    again = ["--name", "second"]  # a fresh group: before and after once more, as text
    cli("calibrate", labels, "--rubric", str(EXAMPLE / "rubric-shadow.toml"), *common, *again)
    text = cli("calibrate", labels, "--rubric", str(EXAMPLE / "rubric.toml"), *common, *again)
    row = next(line for line in text.out.splitlines() if line.startswith("sentence_len"))
    assert "moved from judge: agreement +30 pts" in row and "new" not in row
