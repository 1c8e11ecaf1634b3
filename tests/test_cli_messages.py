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
