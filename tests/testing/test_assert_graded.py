"""assert_graded and cassettes, below the pytest plugin."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import gradeloop
import gradeloop.testing
from gradeloop import AnthropicJudge, Rubric
from gradeloop.errors import InputError, JudgeRequiredError
from gradeloop.testing import Cassette, CassetteMiss, assert_graded, verdict_reply
from gradeloop.testing._assert import observe
from tests.support.emulator import Emulator
from tests.support.fakes import FakeJudge, verdict

RUBRIC = {
    "pass_score": 7,
    "criteria": [
        {
            "key": "short",
            "description": "At most 40 chars.",
            "checker": "length",
            "options": {"max_chars": 40},
        },
        {"key": "tone", "description": "Friendly.", "scale": "score", "threshold": 7},
        {"key": "accurate", "description": "No false claims."},
    ],
}
KEY = "sk-ant-api03-" + "S3cr3t" * 8


def test_an_accepted_draft_returns_its_evaluation() -> None:
    judge = FakeJudge(verdict(True, {"accurate": True}, [], {"tone": 9}))
    evaluation = assert_graded("Hello, friend!", RUBRIC, task="greet", judge=judge)
    assert evaluation.accepted and judge.seen[0]["task"] == "greet"


def test_a_rejected_draft_raises_a_table_naming_each_key() -> None:
    judge = FakeJudge(
        verdict(
            False,
            {"accurate": False},
            ["claims it cures colds"],
            {"tone": 4},
            reasoning="Cold, and one false claim.\nSecond line.",
        )
    )
    with pytest.raises(AssertionError) as info:
        assert_graded("x" * 60, RUBRIC, judge=judge)
    message = str(info.value)
    lines = message.splitlines()
    assert lines[0].startswith("draft not accepted: overall ")
    assert "(pass score 7)" in lines[0] and "failed: short, tone, accurate" in lines[0]
    header = next(line for line in lines if line.startswith("key"))
    assert re.split(r"\s{2,}", header) == ["key", "filled by", "met", "score/threshold", "issues"]
    rows = {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line) for line in lines[3:6]}
    assert rows["short"][:4] == ["short", "length", "NO", "-"]
    assert rows["tone"][:4] == ["tone", "judge", "NO", "4/7"]
    assert rows["accurate"][:4] == ["accurate", "judge", "NO", "-"]
    assert "  - claims it cures colds" in lines
    assert lines[-3:] == ["judge's reasoning:", "  Cold, and one false claim.", "  Second line."]


def test_code_only_rubrics_need_no_judge_and_say_so_without_reasoning(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    path.write_text(
        '[[criteria]]\nkey = "short"\ndescription = "short"\nchecker = "length"\n'
        "options = { max_chars = 5 }\n"
    )
    assert_graded("tiny", path)
    with pytest.raises(AssertionError) as info:
        assert_graded("far too long", str(path))
    assert "judge's reasoning" not in str(info.value)
    assert "short  length     NO" in str(info.value)


def test_judge_keys_without_a_judge_are_named() -> None:
    with pytest.raises(JudgeRequiredError, match="tone, accurate"):
        assert_graded("hi", RUBRIC)


def test_the_reference_reaches_context_checkers() -> None:
    rubric = {"criteria": [{"key": "same", "description": "d", "checker": "matches_reference"}]}
    assert_graded("the answer", rubric, reference="the answer")
    with pytest.raises(AssertionError):
        assert_graded("another answer", rubric, reference="the answer")


def test_it_is_exported_from_both_places_and_observed() -> None:
    assert gradeloop.assert_graded is gradeloop.testing.assert_graded is assert_graded
    seen: list[Any] = []
    stop = observe(seen.append)
    try:
        assert_graded("ok", Rubric.from_dict({"criteria": [RUBRIC["criteria"][0]]}))  # type: ignore[index]
    finally:
        stop()
    assert len(seen) == 1 and seen[0].accepted


# -- cassettes --------------------------------------------------------------------------

ANSWER = {
    "reasoning": "warm",
    "scores": {"tone": 9},
    "criteria_met": {"accurate": True},
    "passed": True,
    "issues": [],
}


def judge_on(emulator: Emulator, cassette: Cassette, **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(
        emulator.client(max_retries=0), model="claude-judge", cache=cassette, **kw
    )


def test_new_records_then_none_replays_without_a_request(
    emulator: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "cassettes" / "test_x.json"
    emulator.enqueue(verdict_reply(ANSWER))
    first = Cassette.load(path, "new")
    with first.describing("claude-judge", ["tone", "accurate"], "greet", "Hello!"):
        assert assert_graded("Hello!", RUBRIC, task="greet", judge=judge_on(emulator, first))
    assert first.save() == 1 and len(emulator.bodies) == 1
    data = json.loads(path.read_text())
    [(digest, entry)] = data["requests"].items()
    assert len(digest) == 64 and entry["keys"] == ["tone", "accurate"]
    assert entry["draft"] == "Hello!" and json.loads(entry["reply"]) == ANSWER

    replay = Cassette.load(path, "none")
    judge = judge_on(emulator, replay)
    assert assert_graded("Hello!", RUBRIC, task="greet", judge=judge).accepted
    assert len(emulator.bodies) == 1 and replay.hits == 1
    assert [c.cached for c in judge.calls] == [True]


def test_none_names_a_missing_request(emulator: Emulator, tmp_path: Path) -> None:
    cassette = Cassette.load(tmp_path / "c.json", "none")
    judge = judge_on(emulator, cassette)
    with (
        cassette.describing("claude-judge", ["tone"], "t", "A new draft"),
        pytest.raises(CassetteMiss) as info,
    ):
        judge.evaluate("t", "A new draft", Rubric.from_dict(RUBRIC).judge_criteria)
    assert "has no recorded judge reply for request" in str(info.value)
    assert "keys tone" in str(info.value) and "'A new draft'" in str(info.value)
    assert "--gradeloop-record=new" in str(info.value)
    assert emulator.bodies == []  # nothing was sent


def test_all_asks_again_and_overwrites(emulator: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    emulator.enqueue(verdict_reply(ANSWER), verdict_reply({**ANSWER, "reasoning": "again"}))
    for mode in ("new", "all"):
        cassette = Cassette.load(path, mode)  # type: ignore[arg-type]
        assert_graded("Hello!", RUBRIC, judge=judge_on(emulator, cassette))
        cassette.save()
    assert len(emulator.bodies) == 2
    [entry] = json.loads(path.read_text())["requests"].values()
    assert json.loads(entry["reply"])["reasoning"] == "again"


def test_secrets_never_reach_the_cassette(emulator: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    draft = f"key {KEY} at https://ada:hunter2@example.com/x"
    emulator.enqueue(verdict_reply({**ANSWER, "reasoning": f"it quotes {KEY}"}))
    cassette = Cassette.load(path, "new")
    judge = AnthropicJudge(emulator.client(api_key=KEY, max_retries=0), cache=cassette)
    with cassette.describing(judge.model, ["tone", "accurate"], f"task {KEY}", draft):
        judge.evaluate("t", draft, Rubric.from_dict(RUBRIC).judge_criteria)
    cassette.save()
    text = path.read_text()
    assert KEY not in text and "hunter2" not in text and "S3cr3t" not in text
    assert "[REDACTED]" in text
    assert emulator.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent


def test_two_writers_merge(emulator: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    emulator.enqueue(verdict_reply(ANSWER), verdict_reply(ANSWER))
    a, b = Cassette.load(path, "new"), Cassette.load(path, "new")
    assert_graded("one", RUBRIC, judge=judge_on(emulator, a))
    assert_graded("two", RUBRIC, judge=judge_on(emulator, b))
    a.save()
    b.save()  # loaded before a saved, still keeps a's entry
    assert len(json.loads(path.read_text())["requests"]) == 2


@pytest.mark.parametrize("content", ["not json", '{"requests": []}', '{"x": 1}'])
def test_a_broken_cassette_is_named(tmp_path: Path, content: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(InputError, match=r"c\.json"):
        Cassette.load(path)


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="none, new, all"):
        Cassette.load(tmp_path / "c.json", "sometimes")  # type: ignore[arg-type]


def test_the_scripted_helpers_load_lazily() -> None:
    import subprocess
    import sys

    code = (
        "import sys, gradeloop.testing._plugin\n"
        "assert 'anthropic' not in sys.modules, 'the plugin imported the SDK'\n"
        "from gradeloop.testing import ScriptedClient\n"
        "assert 'anthropic' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
