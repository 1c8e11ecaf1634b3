"""A draft past the documented size draws one DraftSizeWarning (the library) or one
line on stderr (the CLI), and is graded all the same."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from gradeloop import Rubric, grade, grade_many
from gradeloop.errors import DraftSizeWarning
from gradeloop.grading._files import DRAFT_WARN_CHARS
from tests.support.cli_helpers import cli

RUBRIC = Rubric.from_dict(
    {"criteria": [{"key": "c", "description": "d", "checker": "length",
                   "options": {"max_chars": 10 * DRAFT_WARN_CHARS}}]}
)  # fmt: skip


def test_a_draft_past_the_size_warns_and_is_graded() -> None:
    with pytest.warns(DraftSizeWarning, match="1,000,001 characters long"):
        ev = grade("a" * (DRAFT_WARN_CHARS + 1), RUBRIC)
    assert ev.accepted is True


def test_a_draft_at_the_size_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert grade("a" * DRAFT_WARN_CHARS, RUBRIC).accepted is True


def test_many_drafts_warn_for_the_large_one() -> None:
    with pytest.warns(DraftSizeWarning):
        out = grade_many(["short", "a" * (DRAFT_WARN_CHARS + 1)], RUBRIC)
    assert [e.accepted for e in out] == [True, True]


def test_the_cli_says_it_on_one_line(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "c"\ndescription = "d"\nchecker = "length"\n'
        "options = { max_chars = 100000000 }\n"
    )
    big, small = tmp_path / "big.md", tmp_path / "small.md"
    big.write_text("a" * (DRAFT_WARN_CHARS + 1))
    small.write_text("a")
    ran = cli("grade", str(big), "--rubric", str(rubric), "--no-history")
    assert ran.code == 0
    assert ran.err.splitlines() == [
        "gradeloop: warning: the draft is 1,000,001 characters long, more than the "
        "1,000,000 gradeloop expects; it is graded, but slowly, and a judge reads (and "
        "bills) all of it"
    ]
    ran = cli("grade", str(small), "--rubric", str(rubric), "--no-history")
    assert ran.code == 0 and ran.err == ""
