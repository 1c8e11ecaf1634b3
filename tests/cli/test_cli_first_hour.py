"""The first hour on the command line (issue 40): what a new user met, each as a test.

The commands run in this process against the emulators; each test names the stumble
it guards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


# -- grade --drafts: why each draft was not accepted, under the table ---------------------

REASONS_RUBRIC = """\
pass_score = 9.5

[[criteria]]
key = "short"
description = "At most 5 words."
checker = "length"
options = { max_words = 5 }

[[criteria]]
key = "tone"
description = "Polite."
scale = "score"
threshold = 5

[[criteria]]
key = "cited"
description = "Cites a source."
"""


def _verdict(tone: int, cited: bool, issues: list[str]) -> Any:
    from gradeloop.testing import verdict_reply

    return verdict_reply(
        {"reasoning": "r", "scores": {"tone": tone}, "criteria_met": {"cited": cited},
         "passed": True, "issues": issues}
    )  # fmt: skip


def test_grade_drafts_says_why_each_draft_was_not_accepted(
    emulator: Emulator, tmp_path: Path
) -> None:
    from tests.support.emulator import HTTPError

    answers = {
        "fine words": _verdict(10, True, []),
        "far too many words for the short key here": _verdict(10, True, []),
        "uncited": _verdict(10, False, []),  # a key failed with no issue text at all
        "rude": _verdict(2, True, ["tone: curt and dismissive"]),
        "the judge dies": HTTPError(500, "upstream died", headers={"x-should-retry": "false"}),
        "nearly": _verdict(8, True, []),  # every key met, the pass score not reached
    }

    def answer(body: dict[str, Any]) -> Any:
        draft = body["messages"][0]["content"].split("<draft>\n")[1].split("\n</draft>")[0]
        return answers[draft]

    emulator.responder = answer
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(REASONS_RUBRIC)
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text("".join(json.dumps({"id": f"d{n}", "task": "t", "draft": d}) + "\n"
                              for n, d in enumerate(answers)))  # fmt: skip
    ran = cli(
        "grade", "--drafts", str(drafts), "--rubric", str(rubric),
        "--base-url", emulator.base_url, "--no-cache", "--no-history",
    )  # fmt: skip
    assert ran.code == 1, ran.err
    lines = ran.out.splitlines()
    start = lines.index("why not accepted:")
    reasons = dict(line.strip().split(": ", 1) for line in lines[start + 1 : start + 6])
    assert set(reasons) == {"d1", "d2", "d3", "d4", "d5"}  # d0 was accepted
    assert reasons["d1"].startswith("short: ")
    assert reasons["d2"] == "cited: not met; the judge gave no reason"
    assert reasons["d3"] == "tone: curt and dismissive"
    assert reasons["d4"].startswith("the judge failed: ") and "HTTP 500" in reasons["d4"]
    assert "pass_score" in reasons["d5"]
    one = cli(
        "grade", "-", "--rubric", str(rubric), "--task", "t", "--base-url", emulator.base_url,
        "--no-cache", "--no-history", stdin="uncited",
    )  # fmt: skip
    assert "  - cited: not met; the judge gave no reason" in one.out


# -- a .json draft: a transcript, or text only when clearly not a message list ------------

JSON_CHECK = """\
[[criteria]]
key = "says_hi"
description = "Says hi."
checker = "contains"
options = { values = ["hi"] }
"""


def _grade_json(tmp_path: Path, content: str) -> Any:
    rubric = tmp_path / "r.toml"
    rubric.write_text(JSON_CHECK)
    draft = tmp_path / "draft.json"
    draft.write_text(content, encoding="utf-8")
    return cli("grade", str(draft), "--rubric", str(rubric), "--no-history"), draft


def test_json_meant_as_messages_that_cannot_be_read_is_an_error_naming_the_problem(
    tmp_path: Path,
) -> None:
    cases = {
        '[{"role": "user", "content": "hi"},': "not valid JSON: Expecting value at line 1",
        '{"messages": [{"role": "user", "content": "hi"}': "not valid JSON: Expecting",
        "[]": "an empty JSON list is a transcript with no messages",
        '{"messages": "hi"}': "'messages' must be a list of messages, not a string",
        '{"role": "user", "content": "hi"}': "this is one message; a transcript is a list",
        # read as a transcript (item 1 is a message), whose reader names the message
        '[{"content": "hi"}, {"role": "assistant", "content": "hi"}]': "message 0 has no 'role'",
    }
    for content, problem in cases.items():
        ran, draft = _grade_json(tmp_path, content)
        assert ran.code == 2, (content, ran.out, ran.err)
        [line] = ran.err.splitlines()
        assert line.startswith(f"gradeloop: error: {draft}") and problem in line, (content, line)
        assert f"give it on stdin: `gradeloop grade - < {draft}`" in line


def test_json_that_clearly_is_not_a_message_list_stays_text(tmp_path: Path) -> None:
    for content in ('{"greeting": "hi"}', '["hi", "there"]', '[{"word": "hi"}]', "{hi]"):
        ran, _ = _grade_json(tmp_path, content)
        assert ran.code == 0, (content, ran.err)  # graded as text: the raw JSON holds "hi"
    ran, _ = _grade_json(
        tmp_path, '[{"role": "user", "content": "x"}, {"role": "assistant", "content": "hi"}]'
    )
    assert ran.code == 0 and "says_hi" in ran.out  # a transcript: read, not an error
    # LangChain's message dicts are a transcript too (read, never graded as raw text)
    ran, _ = _grade_json(
        tmp_path, '[{"type": "human", "content": "x"}, {"type": "ai", "content": "hi"}]'
    )
    assert ran.code == 0 and "says_hi" in ran.out, (ran.out, ran.err)


# -- the smaller items --------------------------------------------------------------------


def test_a_checker_typo_gets_a_did_you_mean(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "sentence_length"\n')
    ran = cli("grade", "-", "--rubric", str(rubric), stdin="x")
    assert ran.code == 2
    assert "unknown checker 'sentence_length'; did you mean 'sentence_len'?" in ran.err
    rubric.write_text('[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "zzz"\n')
    assert "did you mean" not in cli("grade", "-", "--rubric", str(rubric), stdin="x").err


def test_checkers_shows_whole_first_sentences() -> None:
    ran = cli("checkers", "--json")
    for c in json.loads(ran.out)["checkers"]:
        if c["plugin"] == "builtin":
            assert c["description"].endswith("."), c  # never cut mid-sentence
            assert "\n" not in c["description"]


def test_prefer_checks_its_files_before_asking_for_a_model(tmp_path: Path) -> None:
    a = tmp_path / "a.md"
    a.write_text("Dear guest, welcome.")
    missing = cli("prefer", str(a), str(tmp_path / "nope.md"), "--rubric", RUBRIC)
    assert missing.code == 2 and "draft B file not found" in missing.err, missing.err
    same = cli("prefer", str(a), str(a), "--rubric", RUBRIC, "--no-history")  # no model set
    assert same.code == 0, same.err
    assert "no model is configured" not in same.err and "tie" in same.out
    other = tmp_path / "b.md"
    other.write_text("Hello.")
    different = cli("prefer", str(a), str(other), "--rubric", RUBRIC, "--no-history")
    assert different.code == 2 and "no model is configured" in different.err


def test_identical_drafts_tie_without_a_judge_in_the_library_too() -> None:
    import pytest

    from gradeloop.errors import JudgeRequiredError
    from gradeloop.judging import compare_drafts

    rubric = {"criteria": [{"key": "polite", "description": "Polite."}]}
    pref = compare_drafts("Hello.", "Hello.", rubric)  # no judge: none is needed
    assert pref.by_key == {"polite": "tie"} and pref.winner == "tie"
    with pytest.raises(JudgeRequiredError):
        compare_drafts("Hello.", "Hi.", rubric)


def test_a_judge_url_that_is_not_http_is_named(emulator: Emulator) -> None:
    ran = cli("grade", DRAFT, "--rubric", RUBRIC, "--judge-model",
              "openai-compatible:qwen@ftp://localhost:8000/v1")  # fmt: skip
    assert ran.code == 2 and "is ftp://, not http(s)" in ran.err, ran.err
    vertex = cli("grade", DRAFT, "--rubric", RUBRIC, "--judge-model", "claude-x@20240620",
                 "--base-url", emulator.base_url, "--code-only")  # fmt: skip
    assert vertex.code == 1, vertex.err  # an '@' in a model id is still a model id


def test_a_jury_table_with_one_judge_warns(emulator: Emulator, tmp_path: Path) -> None:
    from tests.cli.test_cli_optimize import judged

    rubric = tmp_path / "r.toml"
    one = 'judge_models = ["anthropic:claude-opus-5-5"]\n'
    rubric.write_text(
        one + 'jury = { policy = "majority", quorum = 1 }\n' + Path(RUBRIC).read_text()
    )
    emulator.responder = lambda body: judged(True)
    ran = cli("grade", DRAFT, "--rubric", str(rubric), "--task", "t",
              "--base-url", emulator.base_url, "--no-history", "--no-cache")  # fmt: skip
    assert "rubric's jury table (policy, quorum) is ignored" in ran.err, ran.err
    assert "this run has 1" in ran.err
    rubric.write_text(one + Path(RUBRIC).read_text())
    quiet = cli("grade", DRAFT, "--rubric", str(rubric), "--task", "t",
                "--base-url", emulator.base_url, "--no-history", "--no-cache")  # fmt: skip
    assert "jury table" not in quiet.err


def test_samples_0_is_refused_even_with_code_only() -> None:
    ran = cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--samples", "0")
    assert ran.code == 2 and "argument --samples: '0': must be at least 1" in ran.err


def test_a_fractional_threshold_on_the_judges_scale_is_noted(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "tone"\ndescription = "Warm."\nscale = "score"\nthreshold = 7.5\n'
    )
    ran = cli("grade", DRAFT, "--rubric", str(rubric), "--code-only", "--no-history")
    [line] = [ln for ln in ran.err.splitlines() if "threshold 7.5" in ln]
    assert line.startswith("gradeloop: warning: ") and "works as 8" in line
    assert "write threshold = 8" in line
    rubric.write_text(rubric.read_text().replace("7.5", "8"))
    assert "threshold" not in cli("grade", DRAFT, "--rubric", str(rubric), "--code-only").err
