"""examples/agent_driver.py: a model drives the loop through the tools (against the emulator)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gradeloop import AnthropicGenerator, AnthropicJudge, HistoryStore
from gradeloop.testing import text_reply, verdict_reply
from gradeloop.tools import TOOL_NAMES, ToolRunner
from tests.support.cli_helpers import ROOT
from tests.support.emulator import Emulator

SCRIPT = ROOT / "examples" / "agent_driver.py"
SHORT = {
    "key": "short",
    "description": "At most 8 words.",
    "checker": "length",
    "options": {"max_words": 8},
}
POLITE = {"key": "polite", "description": "The tone is polite."}
CRITERIA = [SHORT, POLITE]
TASK = "Greet a guest at the door."


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_driver", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_driver"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


driver = _load()


def tool_use(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    """A raw Messages-API reply asking for one tool (the emulator sends dicts as they are)."""
    return {
        "id": f"msg_agent_{n}",
        "type": "message",
        "role": "assistant",
        "model": "agent-model",
        "content": [
            {"type": "text", "text": f"Calling {name}."},
            {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": arguments},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 20},
    }


def last_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results in the request's last user turn, parsed."""
    content = body["messages"][-1]["content"]
    if not isinstance(content, list):
        return []
    return [json.loads(b["content"]) for b in content if b.get("type") == "tool_result"]


class Agent:
    """Plays the driving model: generate, evaluate, revise on the issues, evaluate, report."""

    def __init__(self) -> None:
        self.turn = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        self.turn += 1
        [previous] = last_results(body) or [{}]
        if self.turn == 1:
            return tool_use("generate_initial_output", {"task": TASK, "criteria": CRITERIA}, 1)
        if "iterations" in previous:  # the history: report
            return text_reply(f"Final output: {previous['iterations'][-1]['content']}")
        if "content" in previous:  # a generation: evaluate it
            return tool_use("evaluate_output", {"output": previous["content"]}, self.turn)
        if previous.get("passed") is False:
            return tool_use(
                "optimize_output",
                {"output": self.last_output(body), "feedback": previous["issues"]},
                self.turn,
            )
        return tool_use("get_optimization_history", {}, self.turn)

    @staticmethod
    def last_output(body: dict[str, Any]) -> str:
        for message in reversed(body["messages"]):
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("name") == "evaluate_output":
                    return str(block["input"]["output"])
        raise AssertionError("no evaluate_output call to revise")


def model(agent: Agent) -> Any:
    drafts = iter(["Hey you, get in here now.", "Hello, please do come in."])
    verdicts = iter(
        [
            verdict_reply(
                {
                    "reasoning": "curt",
                    "criteria_met": {"polite": False},
                    "passed": False,
                    "issues": ["polite: say please"],
                }
            ),
            verdict_reply(
                {
                    "reasoning": "says please",
                    "criteria_met": {"polite": True},
                    "passed": True,
                    "issues": [],
                }
            ),
        ]
    )

    def respond(body: dict[str, Any]) -> Any:
        if "tools" in body:
            return agent(body)
        if "output_config" in body:
            return next(verdicts)
        return text_reply(next(drafts))

    return respond


def test_the_model_drives_one_linked_loop_through_tool_results(emulator: Emulator) -> None:
    emulator.responder = model(Agent())
    client = emulator.client()
    with HistoryStore(":memory:") as store:
        runner = ToolRunner(AnthropicGenerator(client), AnthropicJudge(client), store)
        result = driver.drive(client, TASK, CRITERIA, runner=runner, model="agent-model")
        [summary] = store.list_loops()
        history = store.get(summary.loop_id)

    assert result.stop == "end_turn" and result.turns == 6
    assert result.answer == "Final output: Hello, please do come in."
    assert [c.name for c in result.calls] == [
        "generate_initial_output",
        "evaluate_output",
        "optimize_output",
        "evaluate_output",
        "get_optimization_history",
    ]
    assert result.loop_ids == [summary.loop_id]  # every call landed in one loop
    assert (summary.rounds, summary.stop_reason, summary.passed) == (2, "passed", True)
    assert history["improvement_trajectory"] == [5.0, 10.0]
    assert history["iterations"][0]["feedback"] == "- polite: say please"

    agent_bodies = [b for b in emulator.bodies if "tools" in b]
    assert len(agent_bodies) == 6
    assert [t["name"] for t in agent_bodies[0]["tools"]] == list(TOOL_NAMES)
    assert agent_bodies[0]["model"] == "agent-model" and "gradeloop" in agent_bodies[0]["system"]
    for n, (call, body) in enumerate(zip(result.calls, agent_bodies[1:], strict=True), start=1):
        sent, answer = body["messages"][-2:]
        assert sent["role"] == "assistant" and sent["content"][1]["id"] == f"toolu_{n}"
        [block] = answer["content"]
        assert block["type"] == "tool_result" and block["tool_use_id"] == f"toolu_{n}"
        assert json.loads(block["content"]) == call.result  # the runner's JSON, as it is
        assert "is_error" not in block


def test_the_turn_cap_ends_a_model_that_never_stops(emulator: Emulator) -> None:
    calls = iter(range(1, 100))
    emulator.responder = lambda body: tool_use("get_optimization_history", {}, next(calls))
    client = emulator.client()
    with ToolRunner(store=":memory:") as runner:
        result = driver.drive(client, TASK, CRITERIA, runner=runner, max_turns=3)
    assert (result.stop, result.turns, len(result.calls)) == ("max_turns", 3, 3)
    assert result.answer == "" and len(emulator.bodies) == 3
    last = emulator.bodies[-1]["messages"][-1]["content"][0]
    assert last["is_error"] is True  # an empty store: the error object goes back to the model
    assert json.loads(last["content"])["error"]["type"] == "loop_not_found"


def test_as_a_script(
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    emulator.responder = model(Agent())
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"criteria": CRITERIA}), encoding="utf-8")
    home = tmp_path / "home"
    monkeypatch.setenv("GRADELOOP_HOME", str(home))
    # the script's own main(), in this process; --base-url needs no key
    code = driver.main(["--task", TASK, "--rubric", str(rubric), "--base-url", emulator.base_url])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "Final output: Hello, please do come in.\n"
    assert "[end_turn after 6 turn(s), 5 tool call(s); loops: loop_" in err
    with HistoryStore(home / "history.db") as store:
        [summary] = store.list_loops()
    assert summary.passed is True and summary.stop_reason == "passed"


def test_as_a_script_without_a_model_says_how_to_configure_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"criteria": CRITERIA}), encoding="utf-8")
    assert driver.main(["--task", TASK, "--rubric", str(rubric)]) == 2
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in err and "--base-url URL" in err
    flags = {a for action in driver.parser()._actions for a in action.option_strings}
    assert "--base-url" in flags  # every flag the message names exists


def test_the_quick_start_in_the_docs_runs(emulator: Emulator, monkeypatch: Any) -> None:
    text = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    snippet = text.split("```python\n", 1)[1].split("```", 1)[0]
    replies = iter(
        [
            tool_use("evaluate_output", {"output": "Hi there.", "criteria": [SHORT]}, 1),
            text_reply("It passes."),
        ]
    )
    emulator.responder = lambda body: next(replies)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    scope: dict[str, Any] = {}
    exec(compile(snippet, "docs/tools.md", "exec"), scope)
    answer = scope["messages"][-2]["content"][0]  # the user turn of tool results
    assert json.loads(answer["content"])["passed"] is True
    assert len(emulator.bodies) == 2 and scope["reply"].stop_reason == "end_turn"


def test_as_a_script_an_api_error_is_one_line_and_exit_2(
    emulator: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.emulator import HTTPError

    emulator.responder = lambda body: HTTPError(
        529,
        "Overloaded\nTraceback (most recent call last): ...",
        headers={"x-should-retry": "false"},
    )
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"criteria": CRITERIA}), encoding="utf-8")
    code = driver.main(["--task", TASK, "--rubric", str(rubric), "--base-url", emulator.base_url])
    err = capsys.readouterr().err
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("agent_driver: the model's API call failed: ") and "529" in line
    assert "Traceback" not in err
