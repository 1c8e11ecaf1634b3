"""gradeloop grade --drafts / --jobs / --json, the verdict cache from the CLI, and
gradeloop cache stats|clear (in-process: gradeloop.cli.main)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop.cli import main
from gradeloop.testing import refusal, verdict_reply
from tests.support.emulator import Emulator


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


CODE_RUBRIC = (
    '[[criteria]]\nkey = "short"\ndescription = "At most 5 words."\n'
    'checker = "length"\noptions = { max_words = 5 }\n'
)
JUDGE_RUBRIC = '[[criteria]]\nkey = "tone"\ndescription = "Polite."\n'


def files(tmp_path: Path, rubric: str, *lines: dict[str, Any]) -> tuple[str, str]:
    r = tmp_path / "rubric.toml"
    r.write_text(rubric)
    d = tmp_path / "drafts.jsonl"
    d.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(r), str(d)


def met(body: dict[str, Any]) -> Any:
    return verdict_reply(
        {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
    )


def test_json_lines_in_input_order_with_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric, drafts = files(
        tmp_path,
        CODE_RUBRIC,
        {"id": "b", "draft": "two words"},
        {"id": "a", "draft": "this one has far too many words in it"},
        {"draft": "fine"},
    )
    code, out, _ = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--json")
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 1  # one draft is not accepted
    assert [x["id"] for x in lines] == ["b", "a", "drafts.jsonl:3"]
    assert [x["passed"] for x in lines] == [True, False, True]
    assert lines[0]["criteria"][0]["name"] == "short"


def test_exit_0_when_every_draft_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric, drafts = files(tmp_path, CODE_RUBRIC, {"draft": "a"}, {"draft": "b c"})
    code, out, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--jobs", "2")
    assert code == 0
    assert "2 drafts: 2 accepted, 0 not" in out
    assert "grading" not in err  # no progress bar when stderr is not a terminal


def test_the_judge_the_cache_and_the_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    emulator.responder = met
    rubric, drafts = files(
        tmp_path, JUDGE_RUBRIC, *({"task": "t", "draft": f"draft {i}"} for i in range(5))
    )
    base = ("grade", "--drafts", drafts, "--rubric", rubric, "--base-url", emulator.base_url)
    code, out, _ = run(capsys, *base, "--judge-model", "claude-opus-5-5")
    assert code == 0 and len(emulator.requests) == 5
    assert "judge: 5 calls, 0 answered from the cache" in out
    assert "cost: $" in out and "an accepted draft" in out
    code, out, _ = run(capsys, *base, "--judge-model", "claude-opus-5-5")
    assert code == 0 and len(emulator.requests) == 5  # answered from the cache
    assert "judge: 0 calls, 5 answered from the cache, 0 tokens" in out
    assert "cost: $0.0000 total" in out
    run(capsys, *base, "--judge-model", "claude-opus-5-5", "--no-cache")
    assert len(emulator.requests) == 10
    code, out, _ = run(capsys, "cache", "stats", "--json")
    assert json.loads(out)["entries"] == 5
    code, out, _ = run(capsys, "cache", "clear")
    assert code == 0 and "deleted 5 cached entries" in out


def test_an_unknown_price_is_said_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    emulator.responder = met
    rubric, drafts = files(tmp_path, JUDGE_RUBRIC, {"task": "t", "draft": "x"})
    _, out, _ = run(
        capsys, "grade", "--drafts", drafts, "--rubric", rubric,
        "--base-url", emulator.base_url, "--judge-model", "my-local-model",
    )  # fmt: skip
    assert "cost: unknown" in out


def test_one_drafts_judge_failure_is_its_own_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    emulator.responder = lambda body: (
        refusal() if "bad" in body["messages"][0]["content"] else met(body)
    )
    rubric, drafts = files(
        tmp_path,
        JUDGE_RUBRIC,
        {"id": "1", "task": "t", "draft": "good"},
        {"id": "2", "task": "t", "draft": "bad"},
        {"id": "3", "task": "t", "draft": "good too"},
    )
    base = ("grade", "--drafts", drafts, "--rubric", rubric, "--base-url", emulator.base_url)
    code, out, _ = run(capsys, *base)
    assert code == 1 and "JUDGE FAILED" in out and "(1 with a failed judge)" in out
    code, out, _ = run(capsys, *base, "--json", "--no-cache")
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["passed"] for x in lines] == [True, False, True]
    assert lines[1]["judge_error"].startswith("refusal:")


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--jobs", "0"], "'0': must be at least 1"),
        (["--jobs", "many"], "'many' is not a whole number"),
        (["--cache-ttl", "soon"], "'soon' is not a duration"),
        (["--cache-ttl=0s"], "a duration must be positive"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str
) -> None:
    rubric, drafts = files(tmp_path, CODE_RUBRIC, {"draft": "a"})
    with pytest.raises(SystemExit) as info:  # argparse's own exit, one line
        main(["grade", "--drafts", drafts, "--rubric", rubric, *extra])
    assert info.value.code == 2
    assert fragment in capsys.readouterr().err


def test_a_draft_and_drafts_together_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric, drafts = files(tmp_path, CODE_RUBRIC, {"draft": "a"})
    code, _, err = run(capsys, "grade", "x.md", "--drafts", drafts, "--rubric", rubric)
    assert code == 2 and "give one DRAFT file" in err


def test_a_bad_line_is_named_by_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric, drafts = files(tmp_path, CODE_RUBRIC, {"draft": "a"})
    Path(drafts).write_text('{"draft": "a"}\n{"draft": 3}\n')
    code, _, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric)
    assert code == 2 and "drafts.jsonl:2: 'draft' must be a string" in err


def test_neither_a_draft_nor_drafts_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric, _ = files(tmp_path, CODE_RUBRIC, {"draft": "a"})
    code, _, err = run(capsys, "grade", "--rubric", rubric)
    assert code == 2 and "give one DRAFT file" in err


def test_cache_commands_on_a_fresh_home_create_nothing(
    capsys: pytest.CaptureFixture[str], gradeloop_home: Path
) -> None:
    code, out, _ = run(capsys, "cache", "stats")
    assert code == 0 and "no verdict cache yet" in out
    code, out, _ = run(capsys, "cache", "clear", "--older-than", "7d")
    assert code == 0 and not (gradeloop_home / "cache.db").exists()


def test_a_single_grade_says_what_the_judge_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    emulator.responder = met
    rubric, _ = files(tmp_path, JUDGE_RUBRIC, {"draft": "x"})
    draft = tmp_path / "d.md"
    draft.write_text("Kind words.")
    base = ("grade", str(draft), "--rubric", rubric, "--task", "t")
    base += ("--base-url", emulator.base_url, "--judge-model", "claude-opus-5-5")
    code, out, _ = run(capsys, *base)
    assert code == 0 and "judge: 1 call, " in out and " tokens, $0.0" in out
    code, out, _ = run(capsys, *base)
    assert code == 0 and "judge: answered from the verdict cache (no request, $0)" in out
    assert len(emulator.requests) == 1


def test_the_progress_bar_shows_on_a_terminal_unless_quiet(
    tmp_path: Path, emulator: Emulator
) -> None:
    from tests.support.cli_helpers import cli

    emulator.responder = met
    rubric, drafts = files(
        tmp_path, JUDGE_RUBRIC, *({"task": "t", "draft": f"draft {i}"} for i in range(3))
    )
    base = (
        "grade", "--drafts", drafts, "--rubric", rubric, "--base-url", emulator.base_url,
        "--judge-model", "claude-opus-5-5", "--no-cache",
    )  # fmt: skip
    shown = cli(*base, tty=True, env={"COLUMNS": "200"})
    assert shown.code == 0, shown.err
    last = [x for x in shown.err.replace("\r", "\n").splitlines() if "grading" in x][-1]
    for field in ("3/3", "accepted 3", "judge calls 3 (0 cached)", "$0.0", "0:00:0", "ETA"):
        assert field in last, (field, last)
    assert "tokens 0 " not in last and "tokens " in last  # the tokens the emulator counted
    quiet = cli(*base, "--quiet", tty=True, env={"COLUMNS": "200"})
    assert quiet.code == 0 and "judge calls" not in quiet.err
    piped = cli(*base, tty=False)
    assert piped.code == 0 and "judge calls" not in piped.err


def test_cache_ttl_makes_older_verdicts_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emulator: Emulator, gradeloop_home: Path
) -> None:
    import sqlite3

    emulator.responder = met
    rubric, drafts = files(
        tmp_path, JUDGE_RUBRIC, {"task": "t", "draft": "a"}, {"task": "t", "draft": "b"}
    )
    base = ("grade", "--drafts", drafts, "--rubric", rubric, "--base-url", emulator.base_url)
    run(capsys, *base)
    assert len(emulator.requests) == 2
    with sqlite3.connect(gradeloop_home / "cache.db") as conn:  # both stored two hours ago
        conn.execute("UPDATE replies SET created_at = created_at - 7200")
    conn.close()
    run(capsys, *base, "--cache-ttl", "3h")
    assert len(emulator.requests) == 2  # young enough: from the cache
    _, out, _ = run(capsys, *base, "--cache-ttl", "1h")
    assert len(emulator.requests) == 4 and "judge: 2 calls, 0 answered from the cache" in out
