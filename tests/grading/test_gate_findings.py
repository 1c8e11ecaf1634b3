"""Issue 11's five findings, each pinned by name (each of these failed on the old main).

1. duplicate JSON keys passed; 2. loose types passed through parsed objects and
custom judges; 3. out-of-range scores were clamped into a pass; 4. the judge's own
``passed`` and its keys must agree with the gate; 5. the "best" return policy could
return a failing draft when a passing one existed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gradeloop import (
    AnthropicJudge,
    Criterion,
    HistoryStore,
    Rubric,
    Verdict,
    grade,
    run_loop,
)
from gradeloop.errors import JudgeError
from gradeloop.grading import Registry
from gradeloop.testing import ScriptedClient, text_reply, verdict_reply
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator
from tests.support.fakes import FakeGenerator, FakeJudge

MODES = ("native", "json", "auto")

PASS_FAIL = {"criteria": [{"key": "a", "description": "A is done."}]}
SCORED = {"criteria": [{"key": "s", "description": "S is good.", "scale": "score"}]}


def rubric(data: dict[str, Any]) -> Rubric:
    return Rubric.from_dict(data, registry=Registry(autoload=False))


def outcome(r: Rubric, judge: Any) -> str:
    """``"accepted"``, ``"rejected"`` (a verdict that fails) or ``"invalid"`` (a judge error)."""
    try:
        ev = grade("the draft", r, task="the task", judge=judge)
    except JudgeError as exc:
        assert exc.reason == "invalid", exc
        return "invalid"
    return "accepted" if ev.accepted else "rejected"


def scripted(mode: str, *texts: str) -> AnthropicJudge:
    client = ScriptedClient(*(text_reply(t) for t in texts))
    return AnthropicJudge(client=client, model="m", structured=mode)  # type: ignore[arg-type]


def parsed(value: Any) -> AnthropicJudge:
    reply = SimpleNamespace(parsed_output=value, stop_reason="end_turn", content=[], usage=None)
    return AnthropicJudge(client=ScriptedClient(reply), model="m", structured="native")


class ReturnsAnything:
    """A custom judge whose evaluate() returns what it was given."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        return self.value


GOOD = '{"reasoning":"r","criteria_met":{"a":true},"passed":true,"issues":[]}'


# -- 1. duplicate keys ------------------------------------------------------------------------

DUPLICATES = [
    '{"reasoning":"r","criteria_met":{"a":false,"a":true},"passed":true,"issues":[]}',
    '{"reasoning":"r","criteria_met":{"a":true},"passed":false,"passed":true,"issues":[]}',
    '{"reasoning":"r","criteria_met":{"a":false},"passed":true,"issues":[],'
    '"criteria_met":{"a":true}}',
    '{"reasoning":"r","reasoning":"r","criteria_met":{"a":true},"passed":true,"issues":[]}',
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", DUPLICATES)
def test_finding_1_a_duplicated_json_key_is_invalid_never_a_pass(mode: str, text: str) -> None:
    judge = scripted(mode, text, text)
    assert outcome(rubric(PASS_FAIL), judge) == "invalid"
    calls = len(judge.client.calls)
    assert calls == (2 if mode == "json" else 1)  # JSON mode repairs once, then gives up


@pytest.mark.parametrize("mode", MODES)
def test_finding_1_twin_the_same_reply_without_the_duplicate_passes(mode: str) -> None:
    assert outcome(rubric(PASS_FAIL), scripted(mode, GOOD)) == "accepted"


def test_finding_1_json_mode_repairs_a_duplicate_once_and_then_reads_the_repair() -> None:
    judge = scripted("json", DUPLICATES[0], GOOD)
    assert outcome(rubric(PASS_FAIL), judge) == "accepted"
    repair = judge.client.calls[1]["messages"][-1]["content"]
    assert "'a' appears twice" in repair


def test_finding_1_when_a_reply_has_text_the_text_is_read_not_a_lax_parse_of_it() -> None:
    # An SDK-side parse of duplicated keys keeps the last value; the text is the truth.
    lax = {"reasoning": "r", "criteria_met": {"a": True}, "passed": True, "issues": []}
    reply = SimpleNamespace(
        parsed_output=lax,
        stop_reason="end_turn",
        content=[SimpleNamespace(type="text", text=DUPLICATES[0])],
        usage=None,
    )
    judge = AnthropicJudge(client=ScriptedClient(reply), model="m", structured="native")
    assert outcome(rubric(PASS_FAIL), judge) == "invalid"


# -- 2. loose types ----------------------------------------------------------------------------

LOOSE = ["true", "yes", "on", 1, "1", 1.0, None, [True], {"value": True}]


def reply_with(met: Any = True, passed: Any = True) -> dict[str, Any]:
    return {"reasoning": "r", "criteria_met": {"a": met}, "passed": passed, "issues": []}


@pytest.mark.parametrize("loose", LOOSE)
def test_finding_2_loose_booleans_from_a_clients_parsed_object_are_invalid(loose: Any) -> None:
    r = rubric(PASS_FAIL)
    assert outcome(r, parsed(reply_with(met=loose))) == "invalid"
    assert outcome(r, parsed(reply_with(passed=loose))) == "invalid"
    assert outcome(r, parsed(reply_with())) == "accepted"  # the twin


@pytest.mark.parametrize("loose", LOOSE)
def test_finding_2_loose_booleans_from_a_custom_judges_dict_are_invalid(loose: Any) -> None:
    r = rubric(PASS_FAIL)
    assert outcome(r, ReturnsAnything(reply_with(met=loose))) == "invalid"
    assert outcome(r, ReturnsAnything(reply_with(passed=loose))) == "invalid"
    assert outcome(r, ReturnsAnything(reply_with())) == "accepted"  # the twin


@pytest.mark.parametrize("loose", ["true", "yes", "on", 1, "1"])
def test_finding_2_a_verdict_cannot_be_built_or_smuggled_with_loose_values(loose: Any) -> None:
    with pytest.raises(ValueError, match="valid boolean"):
        Verdict(reasoning="r", criteria_met={"a": loose}, passed=True, issues=[])
    smuggled = Verdict.model_construct(
        reasoning="r", criteria_met={"a": loose}, passed=True, issues=[], scores={}, feedback={}
    )
    assert outcome(rubric(PASS_FAIL), ReturnsAnything(smuggled)) == "invalid"
    changed = Verdict(reasoning="r", criteria_met={"a": True}, passed=True, issues=[])
    assert outcome(rubric(PASS_FAIL), ReturnsAnything(changed)) == "accepted"  # the twin
    changed.criteria_met["a"] = loose  # type: ignore[assignment]
    assert outcome(rubric(PASS_FAIL), ReturnsAnything(changed)) == "invalid"


@pytest.mark.parametrize("value", [None, "passed", 1, True, ["a"], ("x",), 3.5, object()])
def test_finding_2_a_custom_judge_returning_anything_else_fails_naming_the_type(
    value: Any,
) -> None:
    with pytest.raises(
        JudgeError, match=f"returned {type(value).__name__ if value is not None else 'null'}"
    ):
        grade("d", rubric(PASS_FAIL), judge=ReturnsAnything(value))


# -- 3. out-of-range scores ---------------------------------------------------------------------

OUT_OF_RANGE = [11, 100, 10**30, 0, -1]


def scored_reply(score: Any) -> dict[str, Any]:
    return {"reasoning": "r", "scores": {"s": score}, "passed": True, "issues": []}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("score", OUT_OF_RANGE)
def test_finding_3_an_out_of_range_score_in_text_is_invalid_never_clamped(
    mode: str, score: int
) -> None:
    text = verdict_reply(scored_reply(score)).content[0].text  # type: ignore[union-attr]
    assert outcome(rubric(SCORED), scripted(mode, text, text)) == "invalid"


@pytest.mark.parametrize("score", [*OUT_OF_RANGE, 7.5, 10.5, "9", True, float("nan")])
def test_finding_3_an_out_of_range_score_from_objects_and_custom_judges_is_invalid(
    score: Any,
) -> None:
    r = rubric(SCORED)
    assert outcome(r, parsed(scored_reply(score))) == "invalid"
    assert outcome(r, ReturnsAnything(scored_reply(score))) == "invalid"
    ready = Verdict.model_construct(
        reasoning="r", criteria_met={}, passed=True, issues=[], scores={"s": score}, feedback={}
    )
    assert outcome(r, ReturnsAnything(ready)) == "invalid"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("score", "expected"), [(10, "accepted"), (7, "accepted"), (6, "rejected")]
)
def test_finding_3_twin_scores_inside_1_to_10_decide_by_the_threshold(
    mode: str, score: int, expected: str
) -> None:
    text = verdict_reply(scored_reply(score)).content[0].text  # type: ignore[union-attr]
    assert outcome(rubric(SCORED), scripted(mode, text)) == expected


# -- 4. the judge's passed and its keys must agree ----------------------------------------------

MIXED = {
    "criteria": [
        {"key": "a", "description": "A is done."},
        {"key": "s", "description": "S is good.", "scale": "score"},
    ]
}


def mixed(met: bool, score: int, passed: bool) -> dict[str, Any]:
    return {
        "reasoning": "r",
        "scores": {"s": score},
        "criteria_met": {"a": met},
        "passed": passed,
        "issues": [],
    }


DISAGREEMENTS = [
    mixed(met=False, score=9, passed=True),  # the judge passes it, a key fails
    mixed(met=True, score=3, passed=True),  # the judge passes it, a score is too low
    mixed(met=True, score=9, passed=False),  # every key met, the judge does not pass it
]


def roads(data: dict[str, Any]) -> dict[str, Any]:
    text = verdict_reply(data).content[0].text  # type: ignore[union-attr]
    judges: dict[str, Any] = {mode: scripted(mode, text, text) for mode in MODES}
    judges["parsed object"] = parsed(data)
    judges["custom dict"] = ReturnsAnything(data)
    judges["custom Verdict"] = ReturnsAnything(Verdict(**data))
    return judges


@pytest.mark.parametrize("data", DISAGREEMENTS)
def test_finding_4_a_judge_that_disagrees_with_its_own_keys_never_passes(
    data: dict[str, Any],
) -> None:
    for road, judge in roads(data).items():
        ev = grade("d", rubric(MIXED), judge=judge)
        assert ev.accepted is False, road


def test_finding_4_every_key_met_but_passed_false_says_so_in_the_issues() -> None:
    for road, judge in roads(DISAGREEMENTS[2]).items():
        ev = grade("d", rubric(MIXED), judge=judge)
        assert any("passed=false" in i for i in ev.issues), road


def test_finding_4_twin_agreement_passes_on_every_road() -> None:
    for road, judge in roads(mixed(met=True, score=9, passed=True)).items():
        assert grade("d", rubric(MIXED), judge=judge).accepted is True, road


@pytest.mark.parametrize("loose", ["true", 1])
def test_finding_4_a_loose_passed_never_stands_in_for_true(loose: Any) -> None:
    data = {**mixed(met=True, score=9, passed=True), "passed": loose}
    for judge in (parsed(data), ReturnsAnything(data)):
        assert outcome(rubric(MIXED), judge) == "invalid"


# -- 5. the "best" return policy ------------------------------------------------------------------

TRAP = {
    "criteria": [
        {"key": "a", "description": "A is done.", "weight": 0.1},
        {"key": "s", "description": "S is good.", "scale": "score", "weight": 0.9, "threshold": 7},
    ]
}


def trap_verdicts() -> list[Verdict]:
    near = Verdict(
        reasoning="r", criteria_met={"a": False}, passed=False, issues=["a"], scores={"s": 10}
    )
    bare = Verdict(reasoning="r", criteria_met={"a": True}, passed=True, issues=[], scores={"s": 7})
    return [near, bare]


def test_finding_5_best_returns_the_accepted_draft_over_a_higher_scoring_failure() -> None:
    result = run_loop(
        "t", rubric(TRAP), generator=FakeGenerator(), judge=FakeJudge(*trap_verdicts())
    )
    first, second = (it.evaluation for it in result.history)
    assert first is not None and second is not None
    assert round(first.overall_score, 2) == 9.0 and not first.accepted
    assert round(second.overall_score, 2) == 7.3 and second.accepted
    assert result.stop_reason == "passed"
    assert result.passed is True and result.draft == "d1"


def test_finding_5_twin_with_no_accepted_draft_best_is_still_the_top_score() -> None:
    near, _ = trap_verdicts()
    low = near.model_copy(update={"scores": {"s": 5.0}})
    result = run_loop(
        "t", rubric(TRAP), generator=FakeGenerator(), judge=FakeJudge(near, low), max_rounds=2
    )
    assert result.passed is False and result.stop_reason == "max_rounds"
    assert result.draft == "d0"  # 9.0 beats 4.5


def test_finding_5_the_tool_driven_loop_finishes_on_the_accepted_output() -> None:
    from gradeloop.tools import ToolRunner

    with HistoryStore(":memory:") as store:
        runner = ToolRunner(
            generator=FakeGenerator(), judge=FakeJudge(*trap_verdicts()), store=store
        )
        criteria = TRAP["criteria"]
        out = runner.call("generate_initial_output", {"task": "t", "criteria": criteria})
        first = runner.call("evaluate_output", {"output": out["content"]})
        assert first["passed"] is False
        revised = runner.call("optimize_output", {"output": out["content"]})
        second = runner.call("evaluate_output", {"output": revised["content"]})
        assert second["passed"] is True and second["stop_reason"] == "passed"
        assert second["final_output_id"] == revised["output_id"]
        summary = store.list_loops()[0]
        assert summary.passed is True and summary.stop_reason == "passed"


def test_finding_5_gradeloop_optimize_prints_and_exits_on_the_accepted_draft(
    emulator: Emulator, tmp_path: Path
) -> None:
    rubric_file = tmp_path / "rubric.toml"
    rubric_file.write_text(
        '[[criteria]]\nkey = "a"\ndescription = "A is done."\nweight = 0.1\n\n'
        '[[criteria]]\nkey = "s"\ndescription = "S is good."\nscale = "score"\n'
        "weight = 0.9\nthreshold = 7\n",
        encoding="utf-8",
    )
    verdicts = [
        verdict_reply(
            {
                "reasoning": "r",
                "scores": {"s": 10},
                "criteria_met": {"a": False},
                "passed": False,
                "issues": ["a: do A"],
            }
        ),
        verdict_reply(
            {
                "reasoning": "r",
                "scores": {"s": 7},
                "criteria_met": {"a": True},
                "passed": True,
                "issues": [],
            }
        ),
    ]
    drafts = iter(["first draft\n", "second draft\n"])

    def model(body: dict[str, Any]) -> Any:
        return verdicts.pop(0) if "output_config" in body else text_reply(next(drafts))

    emulator.responder = model
    ran = cli(
        "optimize",
        "--rubric",
        str(rubric_file),
        "--task",
        "t",
        "--base-url",
        emulator.base_url,
        "--no-history",
    )
    assert ran.code == 0, ran.err
    assert ran.out == "second draft\n"
    assert "PASSED: passed after 2 rounds" in ran.err
