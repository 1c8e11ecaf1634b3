"""`gradeloop mcp`: the four tools over MCP, through a real client session on stdio."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from gradeloop import AnthropicGenerator, AnthropicJudge, HistoryStore
from gradeloop.cli import build_parser, main
from gradeloop.integrations.mcp_server import build_runner, build_server
from gradeloop.testing import text_reply, verdict_reply
from gradeloop.tools import TOOL_NAMES, tool_definitions
from tests.support.cli_helpers import ROOT
from tests.support.emulator import Emulator

SHORT = {
    "key": "short",
    "description": "At most 6 words.",
    "checker": "length",
    "options": {"max_words": 6},
}
JSON_OK = {"key": "json", "description": "The answer is JSON.", "checker": "json_valid"}
POLITE = {"key": "polite", "description": "The tone is polite."}

Actions = Callable[[ClientSession], Awaitable[Any]]


def in_session(env: dict[str, str], errlog: Path, actions: Actions) -> Any:
    """Start `python -m gradeloop mcp`, run ``actions`` in an initialized session."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gradeloop", "mcp"], env=env, cwd=str(ROOT)
    )

    async def go() -> Any:
        with errlog.open("w") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await actions(session)

    return asyncio.run(go())


def payload(result: Any) -> dict[str, Any]:
    """The JSON a tool answered with; text and structured content must agree."""
    data: dict[str, Any] = json.loads(result.content[0].text)
    assert result.structured_content == data
    assert result.is_error is ("error" in data)
    return data


def test_stdio_session_without_a_key_lists_the_tools_and_grades_code_only(
    tmp_path: Path, gradeloop_home: Path
) -> None:
    async def actions(s: ClientSession) -> dict[str, Any]:
        listed = await s.list_tools()
        return {
            "tools": {t.name: t.input_schema for t in listed.tools},
            "graded": payload(
                await s.call_tool(
                    "evaluate_output", {"output": '{"answer": 42}', "criteria": [JSON_OK]}
                )
            ),
            "typed": payload(await s.call_tool("evaluate_output", {"output": 5})),
            "judge": payload(
                await s.call_tool("evaluate_output", {"output": "Hi.", "criteria": [SHORT, POLITE]})
            ),
            "write": payload(
                await s.call_tool(
                    "generate_initial_output", {"task": "Say hi.", "criteria": [SHORT]}
                )
            ),
            "history": payload(await s.call_tool("get_optimization_history", {})),
        }

    got = in_session({"GRADELOOP_HOME": str(gradeloop_home)}, tmp_path / "err.txt", actions)
    assert list(got["tools"]) == list(TOOL_NAMES)
    expected = {d["name"]: d["input_schema"] for d in tool_definitions()}
    assert got["tools"] == expected  # the same schemas as the Anthropic definitions

    graded = got["graded"]  # a JSON-looking draft arrived as text, not as an object
    assert graded["passed"] is True and graded["criteria"][0]["name"] == "json"
    assert got["typed"]["error"]["message"] == "'output' must be a string, not a number"
    assert got["judge"]["error"]["type"] == "judge_required"
    assert "polite" in got["judge"]["error"]["message"]
    assert got["write"]["error"]["type"] == "model_not_configured"
    assert got["history"]["loop_id"] == graded["loop_id"]
    assert "waiting for a client" in (tmp_path / "err.txt").read_text()

    with HistoryStore(gradeloop_home / "history.db") as store:
        [summary] = store.list_loops()
    assert (summary.loop_id, summary.stop_reason, summary.passed) == (
        graded["loop_id"],
        "passed",
        True,
    )


def test_the_server_writes_and_judges_through_the_emulator(
    gradeloop_home: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process: the stdio transport is proved by the session test above.
    def model(body: dict[str, Any]) -> Any:
        if "output_config" in body:
            return verdict_reply(
                {
                    "reasoning": "says please",
                    "criteria_met": {"polite": True},
                    "passed": True,
                    "issues": [],
                }
            )
        return text_reply("Hello there, please sit.")

    emulator.responder = model
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    monkeypatch.setenv("GRADELOOP_MODEL", "writer-model")
    monkeypatch.setenv("GRADELOOP_JUDGE_MODEL", "judge-model")
    runner = build_runner()
    server = build_server(runner)

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        written = payload(
            await server.call_tool(
                "generate_initial_output", {"task": "Greet a guest.", "criteria": [SHORT, POLITE]}
            )
        )
        judged = payload(await server.call_tool("evaluate_output", {"output": written["content"]}))
        return written, judged

    try:
        written, judged = asyncio.run(go())
    finally:
        runner.close()
    assert written["content"] == "Hello there, please sit." and written["iteration"] == 1
    assert judged["passed"] is True and judged["loop_id"] == written["loop_id"]

    first, second = emulator.bodies
    assert first["model"] == "writer-model" and second["model"] == "judge-model"
    prompt = first["messages"][0]["content"]
    assert prompt.startswith("Greet a guest.") and "short: At most 6 words." in prompt
    with HistoryStore(gradeloop_home / "history.db") as store:
        history = store.get(written["loop_id"])
    assert history["improvement_trajectory"] == [10.0] and history["passed"] is True


def test_in_process_server_passes_raw_arguments_to_the_runner(tmp_path: Path) -> None:
    runner = build_runner(db=str(tmp_path / "h.db"))
    server = build_server(runner)

    async def go() -> list[dict[str, Any]]:
        calls = [
            ("evaluate_output", {"output": "a b c", "criteria": json.dumps([SHORT])}),
            ("get_optimization_history", {"loop_id": None}),
            ("evaluate_output", {"output": "x", "criteria": [{**SHORT, "checker": "nope"}]}),
        ]
        return [payload(await server.call_tool(name, args)) for name, args in calls]

    try:
        graded, history, unknown = asyncio.run(go())
    finally:
        runner.close()
    assert graded["passed"] is True  # criteria sent as JSON text, as some clients do
    assert history["loop_id"] == graded["loop_id"]
    assert unknown["error"]["type"] == "unknown_checker"


def test_build_runner_uses_no_model_without_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with build_runner(db=str(tmp_path / "a.db")) as bare:
        assert bare.generator is None and bare.judge is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with build_runner(db=str(tmp_path / "k.db")) as keyed:
        assert isinstance(keyed.generator, AnthropicGenerator)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("GRADELOOP_JUDGE_MODEL", "judge-model")
    with build_runner(
        base_url="http://127.0.0.1:9", db=str(tmp_path / "b.db"), structured="json"
    ) as configured:
        assert isinstance(configured.generator, AnthropicGenerator)
        assert isinstance(configured.judge, AnthropicJudge)
        assert configured.judge.model == "judge-model" and configured.judge.mode == "json"


def test_without_the_extra_the_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what a missing package looks like
    assert main(["mcp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradeloop: error: the MCP server needs the 'mcp' package")
    assert "pip install 'gradeloop[mcp]'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("--max-iterations", "--max-iterations must be 0 (no cap) or more, not -1"),
        ("--stagnation-rounds", "--stagnation-rounds must be 0 or more, not -1"),
    ],
)
def test_bad_options_exit_2_before_serving(
    option: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", option, "-1"]) == 2
    assert expected in capsys.readouterr().err


def test_importing_the_tools_and_the_server_module_loads_neither_mcp_nor_the_sdk() -> None:
    code = (
        "import sys, gradeloop, gradeloop.tools, gradeloop.integrations.mcp_server, gradeloop.cli; "
        "print(sorted({'mcp', 'anthropic'} & set(sys.modules)))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    assert ran.stdout.strip() == "[]"


def test_the_client_configurations_in_the_docs_parse_and_run_this_command() -> None:
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 2
    documented = {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "GRADELOOP_MODEL",
        "GRADELOOP_JUDGE_MODEL",
        "GRADELOOP_HOME",
    }
    for block in blocks:
        for server in json.loads(block)["mcpServers"].values():
            assert server["command"] == "gradeloop"
            args = build_parser().parse_args(server["args"])
            assert args.command == "mcp"
            assert set(server["env"]) <= documented
