"""gradeloop.graph on the real langgraph: seed 002's Tier-2 assertions, call-for-call
agreement with optimize()/run_loop(), judge failures, streaming, history, composition."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from gradeloop import (
    AnthropicGenerator,
    AnthropicJudge,
    HistoryStore,
    Rubric,
    Verdict,
    optimize,
    run_loop,
)
from gradeloop.errors import ConfigError, InputError, JudgeError, JudgeRequiredError
from gradeloop.grading import Registry
from gradeloop.graph import NODES, GraphState, build_graph, final_result
from gradeloop.testing import text_reply, verdict_reply
from tests.support.cli_helpers import ROOT
from tests.support.emulator import Emulator
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

KEYS = ("api_cited", "code_runs", "errors_named", "sentence_len", "no_invention")
ISSUES = ("add caveats", "cite section")
Script = list[Verdict | BaseException]


@pytest.fixture
def rubric() -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": k, "description": f"{k} holds"} for k in KEYS]},
        registry=Registry(autoload=False),
    )


def fail(met: dict[str, bool] | None = None) -> Verdict:
    return verdict(False, dict.fromkeys(KEYS, False) if met is None else met, ISSUES)


def claim(met: dict[str, bool]) -> Verdict:
    """A verdict that claims a pass; ``met`` is its evidence."""
    return verdict(True, met, ())


def ok() -> Verdict:
    return claim(dict.fromkeys(KEYS, True))


class Ran:
    """One graph run on fresh fakes: the final state and what the fakes saw."""

    def __init__(self, rubric: Rubric, script: Script, **kw: Any) -> None:
        self.calls: list[str] = []
        self.gen = FakeGenerator(calls=self.calls)
        self.judge = FakeJudge(*script, calls=self.calls)
        graph = build_graph(rubric, generator=self.gen, judge=self.judge, **kw)
        self.updates = [chunk for chunk in graph.stream({"task": "t"}, stream_mode="updates")]
        self.nodes = [node for chunk in self.updates for node in chunk]
        self.state: dict[str, Any] = {}
        for chunk in self.updates:
            for update in chunk.values():
                self.state.update(update)

    @property
    def result(self) -> tuple[str, bool]:
        return final_result(self.state)


# -- seed 002, Tier 2, on the real library ---------------------------------------------


def test_a_first_round_pass_stops_the_graph(rubric: Rubric) -> None:
    ran = Ran(rubric, [ok(), ok(), ok(), ok()])  # four scripted, one legitimately used
    assert ran.calls == ["generate", "evaluate"]
    assert ran.nodes == ["setup", "generate", "evaluate"]
    assert ran.result == ("d0", True)
    assert ran.state["stop_reason"] == "passed" and ran.state["passed"] is True


def test_the_cap_at_3_returns_the_last_judged_draft(rubric: Rubric) -> None:
    ran = Ran(rubric, [fail()] * 8)
    assert ran.calls == ["generate", "evaluate"] * 3
    assert ran.nodes == ["setup"] + ["generate", "evaluate"] * 3
    assert ran.state["rounds"] == 3 and ran.state["stop_reason"] == "max_rounds"
    assert ran.result == ("d2", False)
    assert ran.judge.seen[-1]["draft"] == "d2"  # the returned draft is the one judged last


def test_feedback_is_bullet_text_and_the_revision_gets_the_previous_draft(
    rubric: Rubric,
) -> None:
    ran = Ran(rubric, [fail(), ok()])
    first_evaluation = ran.updates[2]["evaluate"]
    assert first_evaluation["feedback"] == "- add caveats\n- cite section"
    assert "['add caveats'" not in first_evaluation["feedback"]
    revision = ran.gen.prompts[1]
    assert revision["draft"] == "d0" and revision["issues"] == list(ISSUES)
    assert ran.result == ("d1", True) and ran.state["feedback"] == ""


def test_feedback_reaches_the_real_generators_prompt_as_bullets(
    emulator: Emulator, rubric: Rubric
) -> None:
    wire_fail = verdict_reply(
        {
            "reasoning": "r",
            "criteria_met": dict.fromkeys(KEYS, False),
            "passed": False,
            "issues": list(ISSUES),
        }
    )
    wire_pass = verdict_reply(
        {"reasoning": "r", "criteria_met": dict.fromkeys(KEYS, True), "passed": True, "issues": []}
    )
    emulator.enqueue(text_reply("draft zero"), wire_fail, text_reply("draft one"), wire_pass)
    client = emulator.client()
    graph = build_graph(rubric, generator=AnthropicGenerator(client), judge=AnthropicJudge(client))
    assert final_result(graph.invoke({"task": "Write the guide."})) == ("draft one", True)
    bodies = emulator.bodies
    assert ["output_config" in b for b in bodies] == [False, True, False, True]
    revision = bodies[2]["messages"][0]["content"]
    assert "draft zero" in revision and "- add caveats\n- cite section" in revision
    assert "['add caveats'" not in revision
    for key in KEYS:  # the generator sees every criterion
        assert f"{key}: {key} holds" in bodies[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "met", [{}, {"api_cited": True}, dict.fromkeys(KEYS, True) | {"no_invention": False}]
)
def test_the_claim_without_the_evidence_never_passes(rubric: Rubric, met: dict[str, bool]) -> None:
    ran = Ran(rubric, [claim(met)] * 3)
    assert ran.result == ("d2", False) and ran.state["passed"] is False
    assert ran.calls == ["generate", "evaluate"] * 3


def test_a_real_pass_passes_at_cap_1(rubric: Rubric) -> None:
    # the twin of the three above: a gate of `return False` fails here
    assert Ran(rubric, [ok()], max_rounds=1).result == ("d0", True)


@pytest.mark.parametrize("cap", [0, -1, 1, 3])
def test_the_cap_halts_at_every_value(rubric: Rubric, cap: int) -> None:
    ran = Ran(rubric, [fail()] * 9, max_rounds=cap)
    assert ran.result[1] is False and ran.state["stop_reason"] == "max_rounds"
    assert len(ran.calls) == max(1, 2 * cap)
    assert ("evaluate" in ran.calls) is (cap >= 1)


def test_a_high_cap_is_not_cut_short_by_the_step_limit(rubric: Rubric) -> None:
    # 2 * 20 + 1 steps: more than the 25 that older LangGraph versions allowed by default
    ran = Ran(rubric, [fail()] * 20, max_rounds=20)
    assert ran.state["rounds"] == 20 and ran.result == ("d19", False)


def test_only_the_task_is_needed_and_the_state_is_fully_declared(rubric: Rubric) -> None:
    final = build_graph(rubric, generator=FakeGenerator(), judge=FakeJudge(ok())).invoke(
        {"task": "t"}
    )
    assert set(final) == set(GraphState.__annotations__)  # setup fills every key
    assert json.loads(json.dumps(final, allow_nan=False)) == final  # JSON-ready
    assert final["evaluation"]["passed"] is True and final["trajectory"] == [10.0]


def test_invoking_without_a_task_names_the_input(rubric: Rubric) -> None:
    graph = build_graph(rubric, generator=FakeGenerator(), judge=FakeJudge(ok()))
    with pytest.raises(InputError, match=r"invoke the graph with \{'task': '<the task text>'\}"):
        graph.invoke({})


def test_a_thread_invoked_again_with_new_input_starts_a_clean_run(rubric: Rubric) -> None:
    calls: list[str] = []
    graph = build_graph(
        rubric,
        generator=FakeGenerator(calls=calls),
        judge=FakeJudge(fail(), fail(), fail(), ok(), calls=calls),
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "reused"}}
    first = graph.invoke({"task": "one"}, config)
    second = graph.invoke({"task": "two"}, config)
    assert first["stop_reason"] == "max_rounds" and first["rounds"] == 3
    # the stale rounds=3 would otherwise end the second run at once, unjudged
    assert second["rounds"] == 1 and second["stop_reason"] == "passed"
    assert second["loop_id"] != first["loop_id"]
    assert calls == ["generate", "evaluate"] * 4


# -- the same calls as optimize() and run_loop() ------------------------------------------

SCRIPTS: dict[str, Callable[[], Script]] = {
    "all fail": lambda: [fail()] * 3,
    "pass in round 1": lambda: [ok()],
    "pass in round 2": lambda: [fail(), ok()],
    "empty evidence": lambda: [claim({})] * 3,
    "judge fails first": lambda: [JudgeError("refused", reason="refusal"), ok()],
    "judge fails, then passes": lambda: [fail(), RuntimeError("HTTP 529"), ok()],
    "judge fails last": lambda: [fail(), fail(), JudgeError("cut", reason="max_tokens")],
    "two judge failures": lambda: [fail(), RuntimeError("down"), RuntimeError("down"), ok()],
}


@pytest.mark.parametrize("name", list(SCRIPTS))
@pytest.mark.parametrize("cap", [1, 3, 5])
def test_the_graph_matches_optimize_and_run_loop_call_for_call(
    rubric: Rubric, name: str, cap: int
) -> None:
    ran = Ran(rubric, SCRIPTS[name](), max_rounds=cap)
    calls: list[str] = []
    gen, judge = FakeGenerator(calls=calls), FakeJudge(*SCRIPTS[name](), calls=calls)
    assert ran.result == optimize("t", rubric, generator=gen, judge=judge, max_rounds=cap)
    assert ran.calls == calls
    assert ran.gen.prompts == gen.prompts and ran.judge.seen == judge.seen
    result = run_loop(
        "t",
        rubric,
        generator=FakeGenerator(),
        judge=FakeJudge(*SCRIPTS[name]()),
        max_rounds=cap,
        stagnation_rounds=0,
        return_policy="last",
        similarity=None,
        reuse_identical=False,
    )
    assert (ran.state["stop_reason"], ran.state["rounds"]) == (result.stop_reason, result.rounds)
    assert [round(s, 2) for s in ran.state["trajectory"]] == result.improvement_trajectory


# -- judge failures --------------------------------------------------------------------


def test_a_judge_failure_in_round_one_stops_with_nothing_judged(rubric: Rubric) -> None:
    ran = Ran(rubric, [JudgeError("the judge refused", reason="refusal"), ok()])
    assert ran.calls == ["generate", "evaluate"]
    assert ran.result == ("d0", False) and ran.state["stop_reason"] == "evaluator_failed"
    assert ran.state["judge_error"] == "refusal: the judge refused"
    assert ran.state["evaluation"] is None


def test_a_later_judge_failure_revises_on_the_last_valid_issues(rubric: Rubric) -> None:
    ran = Ran(rubric, [fail(), RuntimeError("HTTP 529 overloaded"), ok()])
    assert ran.result == ("d2", True)
    assert ran.gen.prompts[2]["issues"] == list(ISSUES)  # not the API error
    assert "529" not in str(ran.gen.prompts[2])


def test_a_run_ending_on_a_judge_failure_returns_the_last_judged_draft(rubric: Rubric) -> None:
    ran = Ran(rubric, [fail(), fail(), JudgeError("cut off", reason="max_tokens")])
    assert ran.state["stop_reason"] == "max_rounds"
    assert ran.result == ("d1", False)  # d2 was never judged
    assert ran.state["output_id"] == ran.state["judged_output_id"]
    assert ran.state["evaluation"]["output_id"] == ran.state["output_id"]


def test_two_judge_failures_in_a_row_stop_the_graph(rubric: Rubric) -> None:
    script: Script = [fail(), RuntimeError("down"), RuntimeError("down"), ok()]
    ran = Ran(rubric, script, max_rounds=5)
    assert ran.state["stop_reason"] == "evaluator_failed" and ran.result == ("d0", False)
    assert len(ran.calls) == 6
    more = Ran(
        rubric,
        [fail(), RuntimeError("down"), RuntimeError("down"), ok()],
        max_rounds=5,
        max_judge_failures=3,
    )
    assert more.result == ("d3", True)  # the twin: a higher limit keeps revising


def test_judge_errors_raise_lets_the_error_out(rubric: Rubric) -> None:
    with pytest.raises(JudgeError, match="the judge raised RuntimeError: down"):
        Ran(rubric, [fail(), RuntimeError("down"), ok()], judge_errors="raise")
    assert Ran(rubric, [fail(), ok()], judge_errors="raise").result == ("d1", True)


# -- streaming ---------------------------------------------------------------------------


def test_streaming_yields_the_nodes_in_order_and_each_rounds_score() -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {"key": "clarity", "description": "Clear.", "scale": "score", "weight": 0.3},
                {
                    "key": "persuasiveness",
                    "description": "Persuasive.",
                    "scale": "score",
                    "weight": 0.4,
                },
                {"key": "accuracy", "description": "Accurate.", "scale": "score", "weight": 0.3},
            ]
        },
        registry=Registry(autoload=False),
    )

    def scored(c: float, p: float, a: float) -> Verdict:
        return verdict(
            True, {}, ("more emotion",), scores={"clarity": c, "persuasiveness": p, "accuracy": a}
        )

    graph = build_graph(
        rubric, generator=FakeGenerator(), judge=FakeJudge(scored(8, 6, 9), scored(8, 10, 8))
    )
    modes = list(graph.stream({"task": "headphones"}, stream_mode=["updates", "custom"]))
    nodes = [next(iter(data)) for mode, data in modes if mode == "updates"]
    assert nodes == ["setup", "generate", "evaluate", "generate", "evaluate"]
    assert tuple(nodes[:3]) == NODES
    rounds = [data for mode, data in modes if mode == "custom"]
    assert [(r["round"], r["score"], r["passed"]) for r in rounds] == [
        (1, 7.5, False),
        (2, 8.8, True),
    ]
    assert rounds[0]["failed_keys"] == ["persuasiveness"]
    assert [r["stop_reason"] for r in rounds] == [None, "passed"]
    # each round event comes before that round's evaluate update
    order = [mode if mode == "custom" else next(iter(data)) for mode, data in modes]
    assert order.index("custom") == order.index("evaluate") - 1


# -- rubric, settings, the optional extra ------------------------------------------------


def test_code_filled_keys_never_reach_the_judge_but_reach_the_generator() -> None:
    reg = Registry(autoload=False)
    reg.add("short", lambda text: len(text) < 100)
    mixed = Rubric.from_dict(
        {
            "criteria": [
                {"key": "tone", "description": "The tone is warm."},
                {"key": "brief", "description": "Under 100 characters.", "checker": "short"},
            ]
        },
        registry=reg,
    )
    gen, judge = FakeGenerator(), FakeJudge(verdict(True, {"tone": True}))
    final = build_graph(mixed, generator=gen, judge=judge, registry=reg).invoke(
        {"task": "write it"}
    )
    assert final_result(final) == ("d0", True)
    assert "Under 100 characters." in gen.prompts[0]["task"]
    assert judge.seen[0]["task"] == "write it" and judge.seen[0]["keys"] == ["tone"]


def test_a_rubric_filled_by_code_alone_needs_no_judge() -> None:
    reg = Registry(autoload=False)
    reg.add("has_title", lambda text: text.startswith("#"))
    only_code = Rubric.from_dict(
        {
            "criteria": [
                {"key": "title", "description": "Starts with a heading.", "checker": "has_title"}
            ]
        },
        registry=reg,
    )
    gen = FakeGenerator(["no title", "# Title"])
    final = build_graph(only_code, generator=gen, judge=None, registry=reg).invoke({"task": "t"})
    assert final_result(final) == ("# Title", True)
    assert gen.prompts[1]["issues"] == ["title: does not meet: Starts with a heading."]


def test_judge_keys_without_a_judge_fail_at_build_time(rubric: Rubric) -> None:
    with pytest.raises(JudgeRequiredError, match="api_cited, code_runs"):
        build_graph(rubric, generator=FakeGenerator(), judge=None)


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"max_rounds": "3"}, "max_rounds must be an integer, not '3'"),
        ({"max_rounds": True}, "max_rounds must be an integer, not True"),
        ({"max_judge_failures": 0}, "max_judge_failures must be an integer >= 1, not 0"),
        ({"judge_errors": "ignore"}, "judge_errors must be 'revise' or 'raise', not 'ignore'"),
    ],
)
def test_bad_settings_are_named(rubric: Rubric, kw: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InputError) as info:
        build_graph(rubric, generator=FakeGenerator(), judge=FakeJudge(), **kw)
    assert str(info.value) == fragment


def test_without_langgraph_the_error_names_the_extra(
    rubric: Rubric, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.graph", None)  # makes the import fail
    with pytest.raises(ConfigError, match=r"pip install 'gradeloop\[langgraph\]'"):
        build_graph(rubric, generator=FakeGenerator(), judge=FakeJudge())


def test_gradeloop_graph_imports_without_langgraph() -> None:
    code = (
        "import sys; sys.modules['langgraph'] = None\n"
        "import gradeloop.graph, gradeloop.cli\n"
        "assert not any(m.startswith('langgraph.') for m in sys.modules)\n"
        "print(gradeloop.graph.NODES)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "('setup', 'generate', 'evaluate')"


# -- history and composition -------------------------------------------------------------


def test_graph_runs_are_recorded_like_run_loop(rubric: Rubric, tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        graph = build_graph(
            rubric,
            generator=FakeGenerator(),
            judge=FakeJudge(fail(), RuntimeError("down"), fail()),
            store=store,
            config={"note": "graph test"},
        )
        final = graph.invoke({"task": "write the guide"})
        data = store.get(final["loop_id"])
        records = store.iterations(final["loop_id"])
        settings = store.loop_settings(final["loop_id"])
        loop = run_loop(
            "t",
            rubric,
            generator=FakeGenerator(),
            judge=FakeJudge(fail()),
            max_rounds=1,
            store=store,
        )
        loop_records = store.iterations(loop.loop_id)
    assert data["status"] == "finished" and data["stop_reason"] == "max_rounds"
    assert data["final_output_id"] == final["output_id"] == records[2]["output_id"]
    assert [r["content"] for r in records] == ["d0", "d1", "d2"]
    assert records[1]["judge_error"] == "api_error: the judge raised RuntimeError: down"
    assert [r["feedback"] for r in records] == ["- add caveats\n- cite section"] * 3
    assert set(records[0]) == set(loop_records[0])  # the same record shape as run_loop's
    assert settings["config"]["engine"] == "graph" and settings["config"]["note"] == "graph test"


def test_the_graph_composes_into_a_bigger_graph(rubric: Rubric) -> None:
    class Pipeline(TypedDict, total=False):
        task: str
        draft: str
        passed: bool
        shipped: str

    def plan(state: Pipeline) -> dict[str, Any]:
        return {"task": f"{state['task']} (with examples)"}

    def ship(state: Pipeline) -> dict[str, Any]:
        return {"shipped": state["draft"] if state["passed"] else ""}

    judge = FakeJudge(fail(), ok())
    loop = build_graph(rubric, generator=FakeGenerator(), judge=judge)
    outer = StateGraph(Pipeline)
    outer.add_node("plan", plan)
    outer.add_node("optimize", loop)
    outer.add_node("ship", ship)
    outer.add_edge(START, "plan")
    outer.add_edge("plan", "optimize")
    outer.add_edge("optimize", "ship")
    outer.add_edge("ship", END)
    final = outer.compile(checkpointer=InMemorySaver()).invoke(
        {"task": "guide"}, {"configurable": {"thread_id": "pipeline"}}
    )
    assert final == {
        "task": "guide (with examples)",
        "draft": "d1",
        "passed": True,
        "shipped": "d1",
    }
    assert judge.seen[0]["task"] == "guide (with examples)"
