"""No control character from a task, a draft or a judge's issue reaches a terminal raw:
every C0 and C1 control but newline and tab is shown escaped (`history` and every
other command); JSON keeps the same strings, escaped; a draft sent to a file or pipe
is written exactly."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import HistoryStore, Rubric, run_loop
from gradeloop.cli._io import terminal_safe, write_text
from tests.support.cli_helpers import _Stream, cli
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

OSC8 = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
CSI = "\x1b[2J\x1b[31m"  # clear the screen, turn red
C1 = "\x9b31m\x85"  # the 8-bit CSI and NEL
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

RUBRIC = Rubric.from_dict(
    {"criteria": [{"key": "tone", "description": "Polite.", "scale": "score", "threshold": 7}]}
)


@pytest.fixture
def loop_id(gradeloop_home: Path) -> str:
    judge = FakeJudge(verdict(False, {}, [f"tone: rude {OSC8} {C1}"], {"tone": 3}))
    with HistoryStore(gradeloop_home / "history.db") as store:
        result = run_loop(
            f"write a greeting {CSI}",
            RUBRIC,
            generator=FakeGenerator([f"hi {CSI}{C1}"]),
            judge=judge,
            max_rounds=1,
            store=store,
        )
    return result.loop_id


@pytest.mark.parametrize("tty", [False, True])
def test_history_escapes_the_task_the_draft_and_the_issues(loop_id: str, tty: bool) -> None:
    for args in (("history",), ("history", loop_id)):
        ran = cli(*args, tty=tty)
        assert ran.code == 0, ran.err
        shown = re.sub(r"\x1b\[[0-9;]*m", "", ran.out) if tty else ran.out  # rich's colours
        assert not RAW.search(shown), repr(shown)
    ran = cli("history", loop_id)
    assert "\\x1b]8;;https://evil.example/" in ran.out and "\\x9b31m" in ran.out


def test_history_json_keeps_the_strings_escaped(loop_id: str) -> None:
    ran = cli("history", loop_id, "--json")
    assert not RAW.search(ran.out)
    data = json.loads(ran.out)
    assert data["iterations"][0]["content"] == f"hi {CSI}{C1}"  # the same text, read back


def test_grade_escapes_a_checker_issue_quoting_the_draft(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "s"\ndescription = "short sentences"\nchecker = "sentence_len"\n'
        "options = { max_words = 3 }\n"
    )
    draft = tmp_path / "d.md"
    draft.write_text(f"One two {OSC8} three four five six.\n")
    ran = cli("grade", str(draft), "--rubric", str(rubric), tty=True)
    assert ran.code == 1
    assert not RAW.search(re.sub(r"\x1b\[[0-9;]*m", "", ran.out)), repr(ran.out)
    assert "\\x1b]8;;" in ran.out


def test_an_error_naming_a_path_escapes_it(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "json_valid"\n')
    ran = cli("grade", f"nope{CSI}.md", "--rubric", str(rubric))
    assert ran.code == 2 and "\\x1b[2J" in ran.err and not RAW.search(ran.err)


def test_plain_text_is_left_as_it_is() -> None:
    text = "a\tb\nc — é ✓ 中"
    assert terminal_safe(text) == text
    assert terminal_safe("line\r\nnext\rx") == "line\nnext\\x0dx"


@given(st.text())
def test_terminal_safe_leaves_no_control_but_newline_and_tab(text: str) -> None:
    assert not RAW.search(terminal_safe(text))


@pytest.mark.parametrize("tty", [True, False])
def test_a_draft_is_escaped_on_a_terminal_and_exact_when_piped(
    tty: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _Stream(tty)
    monkeypatch.setattr(sys, "stdout", out)
    write_text(f"draft {CSI}{C1}")
    expected = "draft \\x1b[2J\\x1b[31m\\x9b31m\\x85\n" if tty else f"draft {CSI}{C1}\n"
    assert out.getvalue() == expected
