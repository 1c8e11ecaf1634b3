"""gradeloop.tools: the four tool definitions, and ToolRunner with plain fakes."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gradeloop import HistoryStore, NotAnAnswer
from gradeloop.errors import JudgeError
from gradeloop.tools import TOOL_DEFINITIONS, TOOL_NAMES, ToolRunner, tool_definitions
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

SHORT = {
    "key": "short",
    "description": "At most 6 words.",
    "checker": "length",
    "options": {"max_words": 6},
}
POLITE = {"key": "polite", "description": "The tone is polite."}
CODE_ONLY = [SHORT]
MIXED = [SHORT, POLITE]

# Seed 003's example: three scored judge criteria, weights 0.3/0.4/0.3.
SEED = [
    {"key": "clarity", "description": "Clear.", "scale": "score", "weight": 0.3},
    {"key": "persuasiveness", "description": "Persuasive.", "scale": "score", "weight": 0.4},
    {"key": "technical_accuracy", "description": "Accurate.", "scale": "score", "weight": 0.3},
]
GENERATION_KEYS = {"output_id", "content", "iteration", "generation_time_ms", "loop_id"}


@pytest.fixture
def store() -> Iterator[HistoryStore]:
    with HistoryStore(":memory:") as s:
        yield s


def runner(
    store: HistoryStore,
    texts: list[str] | None = None,
    *judged: Any,
    judge: bool = True,
    **kwargs: Any,
) -> ToolRunner:
    gen = FakeGenerator(texts or ["one two three four five six seven eight", "one two three"])
    return ToolRunner(gen, FakeJudge(*judged) if judge else None, store, **kwargs)


def error(result: dict[str, Any]) -> tuple[str, str]:
    assert set(result) == {"error"}, result
    assert set(result["error"]) == {"type", "message"}
    return result["error"]["type"], result["error"]["message"]


# -- the definitions -------------------------------------------------------------------


def test_four_definitions_in_the_anthropic_format_and_valid_json_schema() -> None:
    assert TOOL_NAMES == (
        "generate_initial_output",
        "evaluate_output",
        "optimize_output",
        "get_optimization_history",
    )
    for d in TOOL_DEFINITIONS:
        assert set(d) == {"name", "description", "input_schema"}  # not strict: see docs
        assert "Returns JSON" in d["description"]
        Draft202012Validator.check_schema(d["input_schema"])
        assert d["input_schema"]["type"] == "object"
    required = {d["name"]: d["input_schema"].get("required", []) for d in TOOL_DEFINITIONS}
    assert required == {
        "generate_initial_output": ["task", "criteria"],
        "evaluate_output": ["output"],
        "optimize_output": ["output"],
        "get_optimization_history": [],
    }


def _validator(name: str) -> Draft202012Validator:
    schema = next(d["input_schema"] for d in TOOL_DEFINITIONS if d["name"] == name)
    return Draft202012Validator(schema)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("generate_initial_output", {"task": "Write it.", "criteria": MIXED + SEED}),
        ("evaluate_output", {"output": "text", "criteria": [SHORT]}),
        ("evaluate_output", {"output": "text"}),
        ("optimize_output", {"output": "text", "feedback": "- fix a"}),
        ("optimize_output", {"output": "text", "feedback": ["fix a", "fix b"], "criteria": MIXED}),
        ("get_optimization_history", {}),
        ("get_optimization_history", {"loop_id": "loop_abc"}),
    ],
)
def test_example_arguments_validate(name: str, arguments: dict[str, Any]) -> None:
    _validator(name).validate(arguments)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("generate_initial_output", {"task": "Write it."}),
        ("generate_initial_output", {"task": "x", "criteria": [{"key": "a", "descripton": "d"}]}),
        ("generate_initial_output", {"task": "x", "criteria": [{**POLITE, "scale": "stars"}]}),
        ("evaluate_output", {"output": "text", "criteria": []}),
        ("optimize_output", {"output": "text", "feedback": 3}),
        ("get_optimization_history", {"loop": "x"}),
    ],
)
def test_bad_arguments_do_not_validate(name: str, arguments: dict[str, Any]) -> None:
    assert not _validator(name).is_valid(arguments)


def test_tool_definitions_lists_the_registered_checkers_once_on_a_fresh_copy() -> None:
    before = copy.deepcopy(TOOL_DEFINITIONS)
    defs = tool_definitions()
    checker = [
        d["input_schema"]["properties"]
        .get("criteria", {})
        .get("items", {})
        .get("properties", {})
        .get("checker", {})
        .get("description", "")
        for d in defs
    ]
    assert "length (" in checker[0] and "max_words" in checker[0]
    assert "length (" not in checker[1] and "listed in generate_initial_output" in checker[1]
    defs[1]["input_schema"]["properties"]["criteria"]["items"]["required"].append("weight")
    assert before == TOOL_DEFINITIONS  # the constant is untouched
    for d in defs:
        Draft202012Validator.check_schema(d["input_schema"])


# -- the four tools: shapes ------------------------------------------------------------


def test_generate_returns_the_seed_generation_json_and_shows_every_criterion(
    store: HistoryStore,
) -> None:
    r = runner(store)
    out = r.call("generate_initial_output", {"task": "Say hello.", "criteria": MIXED})
    assert set(out) == GENERATION_KEYS
    assert out["iteration"] == 1 and out["content"].startswith("one two")
    assert isinstance(out["generation_time_ms"], float) and out["output_id"].startswith("out_")
    prompt = r.generator.prompts[0]  # type: ignore[union-attr]
    assert prompt["task"].startswith("Say hello.")
    assert "short: At most 6 words." in prompt["task"]  # code-filled keys too
    assert "polite: The tone is polite." in prompt["task"]


def test_seed_example_through_the_tools_linked_into_one_history(store: HistoryStore) -> None:
    r = runner(
        store,
        ["draft one", "draft two"],
        verdict(
            False,
            {},
            issues=["Add more emotional appeal"],
            scores={"clarity": 8, "persuasiveness": 6, "technical_accuracy": 9},
        ),
        verdict(True, {}, scores={"clarity": 8, "persuasiveness": 10, "technical_accuracy": 8}),
        max_iterations=None,
    )
    g = r.call(
        "generate_initial_output",
        {"task": "Write a product description for a wireless headphone", "criteria": SEED},
    )
    e1 = r.call("evaluate_output", {"output": g["content"]})
    assert set(e1) == {
        "output_id",
        "criteria",
        "overall_score",
        "passed",
        "issues",
        "loop_id",
        "iteration",
    }
    assert e1["criteria"][1] == {
        "name": "persuasiveness",
        "weight": 0.4,
        "score": 6.0,
        "passed": False,
        "filled_by": "judge",
        "status": "failed",
        "issues": ["scored 6, needs 7"],
    }
    assert (e1["overall_score"], e1["passed"]) == (7.5, False)
    assert "improvement_from_previous" not in e1  # nothing before it
    o = r.call("optimize_output", {"output": g["content"], "feedback": e1["issues"]})
    assert set(o) == GENERATION_KEYS and o["iteration"] == 2
    e2 = r.call("evaluate_output", {"output": o["content"]})
    assert (e2["overall_score"], e2["passed"], e2["improvement_from_previous"]) == (8.8, True, 1.3)
    assert {g["loop_id"], e1["loop_id"], o["loop_id"], e2["loop_id"]} == {g["loop_id"]}
    assert (e2["stop_reason"], e2["final_output_id"]) == ("passed", o["output_id"])

    history = r.call("get_optimization_history", {})
    assert history["loop_id"] == g["loop_id"]
    assert history["improvement_trajectory"] == [7.5, 8.8]
    assert [i["output_id"] for i in history["iterations"]] == [g["output_id"], o["output_id"]]
    bullets = "- Add more emotional appeal\n- persuasiveness: scored 6, needs 7"
    assert history["iterations"][0]["feedback"] == bullets
    assert history["final_output_id"] == o["output_id"] and history["status"] == "finished"
    assert r.call("get_optimization_history", {"loop_id": g["loop_id"][:9]}) == history

    [summary] = store.list_loops()  # what `gradeloop history` lists
    assert (summary.loop_id, summary.rounds, summary.stop_reason) == (g["loop_id"], 2, "passed")
    records = store.iterations(g["loop_id"])
    assert [(x["source"], x["parent_id"]) for x in records] == [
        ("generated", None),
        ("revised", g["output_id"]),
    ]
    assert records[1]["revision_feedback"] == bullets
    assert r.generator.prompts[1]["draft"] == "draft one"  # type: ignore[union-attr]
    assert r.generator.prompts[1]["issues"] == e1["issues"]  # type: ignore[union-attr]


def test_evaluation_links_by_text_despite_line_endings_and_outer_whitespace(
    store: HistoryStore,
) -> None:
    r = runner(store, ["line one\nline two"])
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    e = r.call("evaluate_output", {"output": "  line one\r\nline two\n\n"})
    assert (e["output_id"], e["loop_id"]) == (g["output_id"], g["loop_id"])
    other = r.call("evaluate_output", {"output": "line one\nline 2", "criteria": CODE_ONLY})
    assert other["loop_id"] != g["loop_id"]  # different text: a loop of its own
    assert store.iterations(other["loop_id"])[0]["source"] == "external"


def test_text_never_seen_needs_criteria(store: HistoryStore) -> None:
    kind, message = error(runner(store).call("evaluate_output", {"output": "hello"}))
    assert kind == "invalid_arguments"
    assert "'criteria' is required" in message and "matches no output" in message
    assert store.list_loops() == []


def test_criteria_default_to_the_loop_and_may_be_overridden(store: HistoryStore) -> None:
    r = runner(store, ["one two three four five six seven eight"])
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    assert r.call("evaluate_output", {"output": g["content"]})["passed"] is False
    loose = [{**SHORT, "options": {"max_words": 20}}]
    again = r.call("evaluate_output", {"output": g["content"], "criteria": loose})
    assert again["passed"] is True and again["output_id"] == g["output_id"]


def test_a_reevaluation_is_answered_but_the_first_is_what_is_recorded(
    store: HistoryStore,
) -> None:
    r = runner(store)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    r.call("evaluate_output", {"output": g["content"]})
    loose = [{**SHORT, "options": {"max_words": 20}}]
    again = r.call("evaluate_output", {"output": g["content"], "criteria": loose})
    assert again["passed"] is True and "stop_reason" not in again  # it does not end the loop
    [record] = store.iterations(g["loop_id"])
    assert record["evaluation"]["passed"] is False
    assert store.get(g["loop_id"])["status"] == "running"
    revised = r.call("optimize_output", {"output": g["content"]})  # on the first issues
    assert revised["iteration"] == 2


def test_a_generated_output_shows_as_pending_until_evaluated(store: HistoryStore) -> None:
    r = runner(store)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    history = r.call("get_optimization_history", {"loop_id": g["loop_id"]})
    assert history["status"] == "running"
    assert history["iterations"] == [
        {
            "output_id": g["output_id"],
            "content": g["content"],
            "evaluation": {"overall_score": None, "passed": False},
            "pending": True,
        }
    ]
    assert history["final_output_id"] == g["output_id"]
    assert store.iterations(g["loop_id"]) == []  # nothing recorded before its fate is known


# -- feedback --------------------------------------------------------------------------


def test_feedback_may_be_omitted_after_an_evaluation(store: HistoryStore) -> None:
    r = runner(store)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    e = r.call("evaluate_output", {"output": g["content"]})
    o = r.call("optimize_output", {"output": g["content"]})
    assert o["iteration"] == 2
    assert r.generator.prompts[1]["issues"] == e["issues"]  # type: ignore[union-attr]


def test_feedback_is_required_for_an_output_never_evaluated(store: HistoryStore) -> None:
    r = runner(store)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    kind, message = error(r.call("optimize_output", {"output": g["content"]}))
    assert kind == "invalid_arguments"
    assert "never evaluated" in message and "evaluate_output" in message


def test_bullet_text_feedback_becomes_issues_and_an_unjudged_parent_is_recorded(
    store: HistoryStore,
) -> None:
    r = runner(store)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    o = r.call("optimize_output", {"output": g["content"], "feedback": "- cut words\n* be brief"})
    assert r.generator.prompts[1]["issues"] == ["cut words", "be brief"]  # type: ignore[union-attr]
    [parent] = store.iterations(g["loop_id"])
    assert parent["evaluation"] is None and parent["feedback"] == "- cut words\n- be brief"
    r.call("optimize_output", {"output": o["content"], "feedback": "Make it shorter."})
    assert r.generator.prompts[2]["issues"] == ["Make it shorter."]  # type: ignore[union-attr]


# -- loop endings ----------------------------------------------------------------------


def test_a_passed_loop_refuses_revisions_and_an_open_one_accepts_them(
    store: HistoryStore,
) -> None:
    r = runner(store, ["one two", "one two three four five six seven eight"])
    passed = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    assert r.call("evaluate_output", {"output": passed["content"]})["stop_reason"] == "passed"
    kind, message = error(
        r.call("optimize_output", {"output": passed["content"], "feedback": "more"})
    )
    assert kind == "loop_finished" and "is over (passed)" in message
    assert passed["output_id"] in message

    failing = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    e = r.call("evaluate_output", {"output": failing["content"]})
    assert "stop_reason" not in e
    assert "error" not in r.call("optimize_output", {"output": failing["content"]})


def test_the_iteration_cap_ends_the_loop_on_the_best_output(store: HistoryStore) -> None:
    words = ["a " * 9, "a " * 8, "a " * 10]
    r = runner(store, words, max_iterations=3, stagnation_rounds=0)
    out = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    for _ in range(2):
        assert "stop_reason" not in r.call("evaluate_output", {"output": out["content"]})
        out = r.call("optimize_output", {"output": out["content"]})
    last = r.call("evaluate_output", {"output": out["content"]})
    assert last["iteration"] == 3 and last["stop_reason"] == "max_rounds"
    kind, message = error(r.call("optimize_output", {"output": out["content"]}))
    assert kind == "loop_finished" and "(max_rounds)" in message
    [summary] = store.list_loops()
    assert (summary.stop_reason, summary.passed, summary.rounds) == ("max_rounds", False, 3)


def test_the_cap_refuses_a_revision_past_it_even_before_evaluation(store: HistoryStore) -> None:
    r = runner(store, max_iterations=2)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    o = r.call("optimize_output", {"output": g["content"], "feedback": "shorter"})
    kind, message = error(r.call("optimize_output", {"output": o["content"], "feedback": "x"}))
    assert kind == "loop_finished" and "cap of 2 iterations" in message


def test_no_cap_lets_revisions_go_on(store: HistoryStore) -> None:
    r = runner(store, [f"v{i} " * 9 for i in range(5)], max_iterations=None, stagnation_rounds=0)
    out = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    for _ in range(4):
        out = r.call("optimize_output", {"output": out["content"], "feedback": "shorter"})
    assert out["iteration"] == 5


def test_an_unchanged_revision_is_stagnation(store: HistoryStore) -> None:
    same = "a b c d e f g h"
    r = runner(store, [same, same], max_iterations=None)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    r.call("evaluate_output", {"output": g["content"]})
    o = r.call("optimize_output", {"output": g["content"]})
    e = r.call("evaluate_output", {"output": o["content"]})
    assert e["output_id"] == o["output_id"]  # the same text links to the latest output
    assert e["stop_reason"] == "stagnation"


def test_scores_that_stop_improving_are_stagnation(store: HistoryStore) -> None:
    flat = [verdict(False, {}, issues=["meh"], scores={"clarity": 5})] * 3
    r = runner(
        store, ["x one", "y two", "z three"], *flat, max_iterations=None, stagnation_rounds=2
    )
    crit = [SEED[0]]
    out = r.call("generate_initial_output", {"task": "t", "criteria": crit})
    reasons = []
    for i in range(3):
        reasons.append(r.call("evaluate_output", {"output": out["content"]}).get("stop_reason"))
        if i < 2:
            out = r.call("optimize_output", {"output": out["content"]})
    assert reasons == [None, None, "stagnation"]


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("generate_initial_output", {"task": "t"}, "generate_initial_output needs 'criteria'"),
        ("generate_initial_output", "task", "takes a JSON object of arguments"),
        (
            "generate_initial_output",
            {"task": 5, "criteria": MIXED},
            "'task' must be a string, not a number",
        ),
        ("generate_initial_output", {"task": "  ", "criteria": MIXED}, "'task' is empty"),
        (
            "evaluate_output",
            {"text": "x"},
            "unknown argument 'text' for evaluate_output; it takes: output, criteria",
        ),
        ("evaluate_output", {"output": "x", "criteria": {"key": "a"}}, "non-empty array"),
        ("evaluate_output", {"output": "x", "criteria": "not json"}, "not a string"),
        (
            "optimize_output",
            {"output": "x", "feedback": 2},
            "'feedback' must be a string or an array",
        ),
        ("optimize_output", {"output": "x", "feedback": [" "]}, "'feedback' is empty"),
        ("get_optimization_history", {"loop_id": 7}, "'loop_id' must be a string"),
    ],
)
def test_bad_arguments_come_back_as_error_objects(
    store: HistoryStore, name: str, arguments: Any, expected: str
) -> None:
    kind, message = error(runner(store).call(name, arguments))
    assert kind == "invalid_arguments" and expected in message


@pytest.mark.parametrize(
    ("criteria", "kind", "expected"),
    [
        ([], "invalid_arguments", "'criteria' must be a non-empty array"),
        (
            ["short"],
            "invalid_criteria",
            "criteria[0] must be an object {key, description, ...}, not a string",
        ),
        (
            [{**SHORT, "checker": 3}],
            "invalid_criteria",
            "criterion 'short': 'checker' must be a checker's name (a string), not a number",
        ),
        ([SHORT, SHORT], "invalid_criteria", "duplicate key 'short'"),
        ([{**POLITE, "weight": -1}], "invalid_criteria", "weight must be a number >= 0"),
    ],
)
def test_malformed_criteria_are_named(
    store: HistoryStore, criteria: Any, kind: str, expected: str
) -> None:
    got = error(runner(store).call("evaluate_output", {"output": "a", "criteria": criteria}))
    assert got[0] == kind and expected in got[1]


def test_feedback_items_must_be_strings(store: HistoryStore) -> None:
    r = runner(store)
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    kind, message = error(r.call("optimize_output", {"output": g["content"], "feedback": ["a", 1]}))
    assert kind == "invalid_arguments" and "one item is not a string" in message
    assert "error" not in r.call("optimize_output", {"output": g["content"], "feedback": ["a"]})


def test_an_evaluation_without_issues_needs_feedback_to_revise(store: HistoryStore) -> None:
    # The judge failed the key and named nothing to fix.
    r = runner(store, None, verdict(False, {"polite": False}, issues=[]))
    g = r.call("generate_initial_output", {"task": "t", "criteria": [POLITE]})
    e = r.call("evaluate_output", {"output": g["content"]})
    assert (e["passed"], e["issues"], "stop_reason" in e) == (False, [], False)
    kind, message = error(r.call("optimize_output", {"output": g["content"]}))
    assert kind == "invalid_arguments" and "listed no issues" in message
    assert "error" not in r.call("optimize_output", {"output": g["content"], "feedback": "x"})


def test_criteria_as_json_text_are_accepted(store: HistoryStore) -> None:
    result = runner(store).call(
        "evaluate_output", {"output": "a b", "criteria": json.dumps(CODE_ONLY)}
    )
    assert result["passed"] is True


def test_an_unknown_criterion_field_is_named_with_a_suggestion(store: HistoryStore) -> None:
    bad = [{"key": "polite", "descripton": "x"}]
    kind, message = error(runner(store).call("evaluate_output", {"output": "a", "criteria": bad}))
    assert kind == "invalid_criteria"
    assert (
        message == "criterion 'polite': unknown criterion field 'descripton'; did you mean "
        "'description'?"
    )


def test_an_unknown_checker_lists_the_known_ones(store: HistoryStore) -> None:
    bad = [{**SHORT, "checker": "lenght"}]
    kind, message = error(runner(store).call("evaluate_output", {"output": "a", "criteria": bad}))
    assert kind == "unknown_checker"
    assert message.startswith(
        "criterion 'short': unknown checker 'lenght'. Did you mean 'length'? Known checkers: "
    )
    assert "length, " in message and "sentence_len" in message
    assert message.endswith("omit 'checker' to have the LLM judge fill this criterion.")
    assert "error" not in runner(store).call(
        "evaluate_output", {"output": "a", "criteria": [SHORT]}
    )


def test_bad_checker_options_are_reported(store: HistoryStore) -> None:
    bad = [{**SHORT, "options": {"max_wrds": 3}}]
    kind, message = error(runner(store).call("evaluate_output", {"output": "a", "criteria": bad}))
    assert kind == "invalid_criteria" and "criterion 'short'" in message and "max_wrds" in message


def test_judge_criteria_with_no_judge_name_the_keys_and_code_only_works(
    store: HistoryStore,
) -> None:
    r = runner(store, judge=False)
    kind, message = error(r.call("evaluate_output", {"output": "a b", "criteria": MIXED}))
    assert kind == "judge_required"
    assert "filled by the LLM judge and no judge model is configured: polite." in message
    assert "code-filled criteria work without a key" in message and "ANTHROPIC_API_KEY" in message
    assert store.list_loops() == []
    assert r.call("evaluate_output", {"output": "a b", "criteria": CODE_ONLY})["passed"] is True


def test_a_judge_failure_is_an_error_object_and_records_nothing(store: HistoryStore) -> None:
    failure = JudgeError("the model declined to judge", reason="refusal")
    r = runner(store, None, failure, verdict(True, {"polite": True}))
    g = r.call("generate_initial_output", {"task": "t", "criteria": [POLITE]})
    kind, message = error(r.call("evaluate_output", {"output": g["content"]}))
    assert kind == "judge_failed"
    assert "(refusal): the model declined to judge" in message and "again to retry" in message
    assert store.iterations(g["loop_id"]) == []
    retry = r.call("evaluate_output", {"output": g["content"]})  # the twin: it recovers
    assert retry["passed"] is True and retry["output_id"] == g["output_id"]


def test_a_judge_returning_garbage_fails_closed(store: HistoryStore) -> None:
    r = runner(store, None, {"not": "a verdict"})  # type: ignore[arg-type]
    kind, message = error(r.call("evaluate_output", {"output": "x", "criteria": [POLITE]}))
    assert kind == "judge_failed" and "verdict is invalid" in message


def test_no_generator_says_how_to_configure_one(store: HistoryStore) -> None:
    r = ToolRunner(None, None, store)
    for name, arguments in [
        ("generate_initial_output", {"task": "t", "criteria": CODE_ONLY}),
        ("optimize_output", {"output": "x", "feedback": "y", "criteria": CODE_ONLY}),
    ]:
        kind, message = error(r.call(name, arguments))
        assert kind == "model_not_configured"
        assert "ANTHROPIC_API_KEY" in message and "code-filled criteria works without" in message
    assert store.list_loops() == []


class Refuses:
    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        raise NotAnAnswer("the model declined to write this", reason="refusal")


class Silent:
    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> Any:
        return None


@pytest.mark.parametrize(
    ("generator", "expected"),
    [
        (Refuses(), "the writer failed: the model declined to write this"),
        (Silent(), "the writer returned no text"),
    ],
)
def test_a_writer_failure_is_an_error_object(
    store: HistoryStore, generator: Any, expected: str
) -> None:
    r = ToolRunner(generator, None, store)
    kind, message = error(r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY}))
    assert kind == "generation_failed" and expected in message
    revise = {"output": "text of its own", "feedback": "shorter", "criteria": CODE_ONLY}
    assert error(r.call("optimize_output", revise))[0] == "generation_failed"
    assert store.list_loops() == []  # a failed call leaves no loop behind


def test_unknown_tool_and_unknown_loop(store: HistoryStore) -> None:
    r = runner(store)
    kind, message = error(r.call("delete_everything", {}))
    assert kind == "unknown_tool" and "generate_initial_output, evaluate_output" in message
    kind, message = error(r.call("get_optimization_history", {}))
    assert kind == "loop_not_found" and "call generate_initial_output to start one" in message
    g = r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY})
    kind, message = error(r.call("get_optimization_history", {"loop_id": "loop_nope"}))
    assert kind == "loop_not_found" and "'loop_nope'" in message
    assert "Omit loop_id for the most recent loop" in message
    assert r.call("get_optimization_history", {"loop_id": g["loop_id"]})["loop_id"] == g["loop_id"]


def test_a_closed_store_is_a_history_error(store: HistoryStore) -> None:
    r = runner(store)
    store.close()
    kind, message = error(r.call("generate_initial_output", {"task": "t", "criteria": CODE_ONLY}))
    assert kind == "history_error" and "is closed" in message


def test_an_unexpected_exception_is_an_internal_error_object(
    store: HistoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = runner(store)

    def broken(loop_id: str | None) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(r.ledger, "history", broken)
    kind, message = error(r.call("get_optimization_history", {}))
    assert (kind, message) == (
        "internal_error",
        "get_optimization_history failed: RuntimeError: disk on fire",
    )


# -- tool_result blocks, construction ---------------------------------------------------


def test_tool_result_answers_dict_and_sdk_blocks(store: HistoryStore) -> None:
    r = runner(store)
    ok = r.tool_result(
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "evaluate_output",
            "input": {"output": "a b", "criteria": CODE_ONLY},
        }
    )
    assert ok["type"] == "tool_result" and ok["tool_use_id"] == "toolu_1"
    assert "is_error" not in ok and json.loads(ok["content"])["passed"] is True
    block = SimpleNamespace(type="tool_use", id="toolu_2", name="nope", input={})
    bad = r.tool_result(block)
    assert bad["is_error"] is True and json.loads(bad["content"])["error"]["type"] == "unknown_tool"


def test_settings_are_checked_and_an_owned_store_is_closed(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="max_iterations must be at least 1"):
        ToolRunner(max_iterations=0)
    with pytest.raises(ValueError, match="stagnation_rounds must be >= 0"):
        ToolRunner(stagnation_rounds=-1)
    with ToolRunner(store=tmp_path / "h.db") as r:
        assert r.call("evaluate_output", {"output": "a", "criteria": CODE_ONLY})["passed"]
    assert "is closed" in error(r.call("get_optimization_history", {}))[1]
