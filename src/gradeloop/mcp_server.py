"""gradeloop as an MCP server: the four tools of :mod:`gradeloop.tools`, over stdio.

Run it with ``gradeloop mcp`` (or call :func:`serve`). It is configured by the
environment: ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_BASE_URL`` for a local server)
for the writer and the judge, ``GRADELOOP_MODEL`` / ``GRADELOOP_JUDGE_MODEL`` for
the models, ``GRADELOOP_HOME`` for the history database. With no model configured,
evaluations whose criteria are all code-filled still work.

Each tool answers with the same JSON as :class:`~gradeloop.tools.ToolRunner`: as
text (the JSON document) and as structured content; an error object is flagged
``isError``. The listed input schemas are :data:`~gradeloop.tools.TOOL_DEFINITIONS`'.

The ``mcp`` package is an optional extra (``pip install 'gradeloop[mcp]'``) and is
imported only when a server is built, so ``import gradeloop`` never needs it.
"""

# No `from __future__ import annotations` here: the MCP SDK reads the tool
# functions' annotations at registration, and they name classes imported locally.

import importlib
import json
import os
from typing import Annotated, Any, Literal

from pydantic import PlainValidator

from .errors import ConfigError
from .tools import ToolRunner, tool_definitions

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "build_runner", "build_server", "require_mcp", "serve"]

SERVER_NAME = "gradeloop"
INSTRUCTIONS = (
    "gradeloop grades text against named criteria (some checked by code, some by an LLM "
    "judge) and improves it. Call generate_initial_output with the task and criteria; "
    "evaluate_output on its content; while it has not passed, optimize_output with the "
    "output and the evaluation's issues, then evaluate the revision. Stop when an "
    "evaluation passes or carries a stop_reason, and use its final_output_id. "
    "get_optimization_history shows a loop's whole history."
)
INSTALL_HINT = "pip install 'gradeloop[mcp]'"


def _unchecked(value: Any) -> Any:
    return value


# A text argument as the client sent it. Annotated as exactly `str`, so the SDK does
# not parse a draft that happens to be JSON into an object; validated by nothing, so
# a wrong type reaches the runner and comes back as its error object.
Text = Annotated[str, PlainValidator(_unchecked)]


def require_mcp() -> None:
    """Raise :class:`ConfigError` with the install command if ``mcp`` is missing."""
    try:
        importlib.import_module("mcp")
        importlib.import_module("mcp.server.mcpserver")
    except ImportError as exc:
        raise ConfigError(
            f"the MCP server needs the 'mcp' package ({exc}); install it with: {INSTALL_HINT}"
        ) from None


def _configured() -> bool:
    # gradeloop.model_configured's test, without importing the SDK (about two seconds
    # of start-up) for a server that will only ever grade in code.
    names = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
    return any(os.environ.get(name, "").strip() for name in names)


def build_runner(
    *,
    base_url: str | None = None,
    model: str | None = None,
    judge_model: str | None = None,
    structured: Literal["auto", "native", "json"] = "auto",
    db: str | None = None,
    max_iterations: int | None = 3,
    stagnation_rounds: int = 2,
) -> ToolRunner:
    """A runner from the arguments and the environment; no model when none is configured."""
    generator = judge = None
    if base_url or _configured():
        from .models._anthropic import AnthropicGenerator, AnthropicJudge, make_client

        client = make_client(base_url=base_url)
        generator = AnthropicGenerator(client, model=model)
        judge = AnthropicJudge(client, model=judge_model, structured=structured)
    return ToolRunner(
        generator,
        judge,
        db,
        max_iterations=max_iterations,
        stagnation_rounds=stagnation_rounds,
        config={"surface": "mcp", "base_url": base_url or os.environ.get("ANTHROPIC_BASE_URL")},
    )


def build_server(runner: ToolRunner) -> Any:
    """An ``MCPServer`` exposing the four tools, each answered by ``runner``."""
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import CallToolResult, TextContent

    def answer(name: str, **arguments: Any) -> CallToolResult:
        # "" and None stand for "not given" (a parameter's default).
        given = {k: v for k, v in arguments.items() if v is not None and v != ""}
        result = runner.call(name, given)
        text = json.dumps(result, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=result,
            is_error="error" in result,
        )

    def generate_initial_output(task: Text = "", criteria: Any = None) -> CallToolResult:
        return answer("generate_initial_output", task=task, criteria=criteria)

    def evaluate_output(output: Text = "", criteria: Any = None) -> CallToolResult:
        return answer("evaluate_output", output=output, criteria=criteria)

    def optimize_output(
        output: Text = "", feedback: Any = None, criteria: Any = None
    ) -> CallToolResult:
        return answer("optimize_output", output=output, feedback=feedback, criteria=criteria)

    def get_optimization_history(loop_id: Text = "") -> CallToolResult:
        return answer("get_optimization_history", loop_id=loop_id)

    functions = {
        f.__name__: f
        for f in (
            generate_initial_output,
            evaluate_output,
            optimize_output,
            get_optimization_history,
        )
    }
    tools = []
    for definition in tool_definitions(runner.registry):
        name = definition["name"]
        tool = Tool.from_function(functions[name], name=name, description=definition["description"])
        # List the same input schema the Anthropic definitions carry.
        tools.append(tool.model_copy(update={"parameters": definition["input_schema"]}))
    return MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, tools=tools, log_level="WARNING")


def serve(**options: Any) -> None:
    """Run the server on stdio until the client closes it. ``options`` go to
    :func:`build_runner`."""
    require_mcp()
    runner = build_runner(**options)
    try:
        build_server(runner).run()
    finally:
        runner.close()
