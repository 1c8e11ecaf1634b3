"""What the command line says when the input is wrong: one line, one shape, the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import EXAMPLE, cli

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
        assert "seed" not in text.lower(), text
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
    assert gone.code == 2 and "no loops are recorded yet" in gone.err
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
    assert header.split() == ["id", "started", "task", "rounds", "stop", "passed", "score"]
    assert "loop_0123456789abcdef" in row and task.strip() in row  # piped: full values
    screen = cli("history", tty=True, env={"COLUMNS": "80"})
    assert "loop_0123456789abcdef" in screen.out.replace("\n", "")  # folded, not cut
    for column in ("rounds", "passed", "score"):
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
