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
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import PlainValidator

from ..errors import ConfigError
from ..grading._jsonout import dumps, finite
from ..tools import ToolRunner, tool_definitions

__all__ = [
    "INSTRUCTIONS",
    "SERVER_NAME",
    "build_runner",
    "build_server",
    "check_line",
    "require_mcp",
    "run_stdio",
    "serve",
]

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
    # gradeloop.models.model_configured's test, without importing the SDK (about two seconds
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
    allow_dirs: Sequence[str] = (),
) -> ToolRunner:
    """A runner from the arguments and the environment; no model when none is configured.

    A client's criteria may name files (``schema_file``) only inside ``allow_dirs``;
    with none given, file options are refused."""
    generator = judge = None
    if base_url or _configured():
        from ..models._anthropic import AnthropicGenerator, AnthropicJudge, make_client

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
        file_dirs=tuple(allow_dirs),
    )


def build_server(runner: ToolRunner) -> Any:
    """An ``MCPServer`` exposing the four tools, each answered by ``runner``."""
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import CallToolResult, TextContent

    def answer(name: str, arguments: Any) -> CallToolResult:
        # "" and None stand for "not given" (a parameter's default).
        given = arguments
        if isinstance(arguments, dict):
            given = {k: v for k, v in arguments.items() if v is not None and v != ""}
        result = finite(runner.call(name, given))
        text = dumps(result, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=result,
            is_error="error" in result,
        )

    # These functions give each tool its name and description; a call never reaches
    # them: _RawTool hands the client's arguments to the runner as they came, so an
    # unknown one is reported (the SDK's argument model would drop it).
    def generate_initial_output(task: Text = "", criteria: Any = None) -> CallToolResult:
        raise NotImplementedError

    def evaluate_output(output: Text = "", criteria: Any = None) -> CallToolResult:
        raise NotImplementedError

    def optimize_output(
        output: Text = "", feedback: Any = None, criteria: Any = None
    ) -> CallToolResult:
        raise NotImplementedError

    def get_optimization_history(loop_id: Text = "") -> CallToolResult:
        raise NotImplementedError

    class _RawTool(Tool):
        async def run(self, arguments: Any, context: Any, convert_result: bool = False) -> Any:
            import anyio

            return await anyio.to_thread.run_sync(answer, self.name, arguments)

    functions = {
        f.__name__: f
        for f in (
            generate_initial_output,
            evaluate_output,
            optimize_output,
            get_optimization_history,
        )
    }
    tools: list[Tool] = []
    for definition in tool_definitions(runner.registry):
        name = definition["name"]
        tool = Tool.from_function(functions[name], name=name, description=definition["description"])
        # List the same input schema the Anthropic definitions carry.
        fields = {**dict(tool), "parameters": definition["input_schema"]}
        tools.append(_RawTool.model_construct(**fields))
    from .. import __version__

    return MCPServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=__version__,  # what a client shows for the server, beside its name
        tools=tools,
        log_level="WARNING",
    )


def serve(**options: Any) -> None:
    """Run the server on stdio until the client closes it. ``options`` go to
    :func:`build_runner`. Every request that carries an id gets an answer, a
    malformed one included (see :func:`check_line`)."""
    require_mcp()
    import anyio

    runner = build_runner(**options)
    try:
        anyio.run(run_stdio, build_server(runner))
    finally:
        runner.close()


# -- a stdio transport that answers every request ---------------------------------------
#
# The mcp library's stdio transport (mcp/server/stdio.py, 2.3) validates each line as
# a JSON-RPC 2.0 message and hands a failure to its dispatcher, which logs it at debug
# level and drops it: a request with no "method", "jsonrpc": "1.0", string "params",
# or a lone surrogate escape (\ud800) in a tool's arguments then never gets an answer,
# and the client waits forever. gradeloop puts a check in front of the library.

_ONE_PER_LINE = "send one JSON-RPC 2.0 message per line"


def check_line(line: str) -> list[dict[str, Any]] | None:
    """What to do with one line from the client.

    None: the mcp library can take it as it is. Otherwise the JSON-RPC error responses
    to send instead, one per request id found (``"id": null`` when no id can be read,
    as JSON-RPC 2.0 asks); an empty list for a blank line.
    """
    import mcp_types as types

    text = line.strip()
    if not text:
        return []
    try:
        message = json.loads(text)
    except RecursionError:
        why = "the message is nested too deeply to read; send less deeply nested arguments"
        return [_error(None, types.PARSE_ERROR, why)]
    except ValueError:
        return [_error(None, types.PARSE_ERROR, f"the line is not JSON; {_ONE_PER_LINE}")]
    if isinstance(message, dict) and "id" in message and not _is_id(message["id"]):
        # MCP ids are strings or integers, never null; the library would take such a
        # request for a notification and never answer it
        why = f"the id must be a string or an integer, not {ascii(message['id'])[:40]}"
        return [_error(None, types.INVALID_REQUEST, why)]
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        return None
    except ValueError:  # pydantic's ValidationError: not a message the library reads
        pass
    if isinstance(message, list):
        why = f"batches are not supported; {_ONE_PER_LINE}"
        ids = [m.get("id") for m in message if isinstance(m, dict) and _is_id(m.get("id"))]
        return [_error(i, types.INVALID_REQUEST, why) for i in ids] or [
            _error(None, types.INVALID_REQUEST, why)
        ]
    request_id = message.get("id") if isinstance(message, dict) else None
    return [_error(request_id, types.INVALID_REQUEST, _problem(message, text))]


def _is_id(value: Any) -> bool:
    if isinstance(value, str):
        return _encodable(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: it cannot go back on the wire
        return False
    return True


def _problem(message: Any, text: str) -> str:
    """Why a parsed message is not one the server can take, in one sentence."""
    if not isinstance(message, dict):
        return f"a JSON-RPC message is an object, not {type(message).__name__}"
    if message.get("jsonrpc") != "2.0":
        return f'"jsonrpc" must be "2.0", not {ascii(message.get("jsonrpc"))[:40]}'
    if "method" not in message and "result" not in message and "error" not in message:
        return 'the request has no "method"'
    if "params" in message and not isinstance(message["params"], dict):
        return f'"params" must be an object, not {type(message["params"]).__name__}'
    if not _encodable(text) or not _encodable(json.dumps(message, ensure_ascii=False)):
        return "the message holds a lone UTF-16 surrogate (such as \\ud800); send valid Unicode"
    return "not a valid JSON-RPC 2.0 message (check its id, method and params)"


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id if _is_id(request_id) else None,
        "error": {"code": code, "message": message},
    }


async def run_stdio(server: Any) -> None:
    """Serve ``server`` (from :func:`build_server`) on this process's stdin/stdout, the
    library's stdio transport behind :func:`check_line`."""
    import io
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    # What MCPServer.run_stdio_async does, with the checked lines as stdin.
    lowlevel = server._lowlevel_server
    source = anyio.wrap_file(
        io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="\n")
    )
    guard = _CheckedLines(source)
    async with stdio_server(stdin=guard) as (read_stream, write_stream):  # type: ignore[arg-type]
        guard.attach(write_stream)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


class _CheckedLines:
    """The client's lines for the library: valid ones as they came; for any other, its
    error responses go out on the server's own write stream (so frames never tear)."""

    def __init__(self, source: Any) -> None:
        import anyio

        self._source = source
        self._out: Any = None
        self._ready = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        self._out = write_stream
        self._ready.set()

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        async for line in self._source:
            answers = check_line(line)
            if answers is None:
                yield line
                continue
            if answers:
                await self._ready.wait()
            for answer in answers:
                error = types.JSONRPCError.model_validate(answer)
                await self._out.send(SessionMessage(error))
