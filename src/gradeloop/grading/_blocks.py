"""A message's content list, read block by block, whatever API wrote it.

One list may hold the blocks of several shapes; each is read by its ``type``:

* text: ``text``, ``input_text``, ``output_text`` (and a ``refusal``'s words);
* calls (an assistant's only): Anthropic's ``tool_use`` / ``server_tool_use`` /
  ``mcp_tool_use``; LangChain's ``tool_call``, ``server_tool_call`` and, with
  arguments that could not be read, ``invalid_tool_call`` / ``tool_call_chunk``; the
  Vercel AI SDK's ``tool-call``, ``tool-invocation`` (v4), ``tool-NAME`` and
  ``dynamic-tool`` (v5, a call and its result in one part); a Responses call item;
* results: Anthropic's ``tool_result`` and the server tools' ``*_tool_result``
  (``web_search_tool_result``, ``mcp_tool_result``...), shown with their content;
  LangChain's ``server_tool_result``; Vercel's ``tool-result``; a Responses output;
* anything else (images, thinking, documents) is kept by its type as ``other``,
  unless its type looks like a call (:func:`~._turns.looks_like_call`): that is an
  error naming it, so no call is ever skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._responses import CALL_ITEMS, OUTPUT_ITEMS, item_call, item_output
from ._turns import (
    ToolCall,
    ToolResult,
    arguments,
    compact_json,
    error,
    id_of,
    is_map,
    kind,
    looks_like_call,
    name_of,
    shown,
)

__all__ = ["Parts", "read_content", "vercel_invocation"]

TEXT_PARTS = frozenset(("text", "input_text", "output_text"))
#: Anthropic's call blocks (client, server and MCP tools).
ANTHROPIC_CALLS = frozenset(("tool_use", "server_tool_use", "mcp_tool_use"))
#: LangChain's standard call blocks, with parsed ``args``.
LANGCHAIN_CALLS = frozenset(("tool_call", "server_tool_call"))
#: LangChain's blocks of calls whose arguments are text, perhaps unreadable.
LANGCHAIN_RAW_CALLS = frozenset(("invalid_tool_call", "tool_call_chunk", "server_tool_call_chunk"))


class Parts:
    """What a content list holds. ``wrapped`` are calls found inside LangChain's
    ``non_standard`` blocks: the same calls are usually also given as standard blocks."""

    __slots__ = ("calls", "other", "results", "texts", "wrapped")

    def __init__(self) -> None:  # (made for every message read: plain lists, no factories)
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.wrapped: list[ToolCall] = []
        self.results: list[ToolResult] = []
        self.other: list[str] = []


def read_content(
    index: int, role: str, content: Any, names: dict[str, str], parts: Parts | None = None
) -> Parts:
    """Read ``content`` (a string, null or a list of blocks) into ``parts``. Call ids
    are added to ``names`` as calls are read, so a server tool's result in the same
    message is shown with its tool's name."""
    parts = Parts() if parts is None else parts
    if content is None:
        return parts
    if isinstance(content, str):
        parts.texts.append(content)
        return parts
    if not isinstance(content, list):
        raise error(index, f"has 'content' that is {kind(content)}; give a string or a list")
    for n, block in enumerate(content):
        block_type = block.get("type") if is_map(block) else None
        if not isinstance(block_type, str) or not block_type:
            raise error(index, f"content block {n} is not an object with a 'type'")
        _block(index, role, n, block_type, block, names, parts)
    return parts


def _block(
    index: int,
    role: str,
    n: int,
    t: str,
    block: Mapping[str, Any],
    names: dict[str, str],
    parts: Parts,
) -> None:
    if t in TEXT_PARTS:
        text = block.get("text")
        if not isinstance(text, str):
            raise error(index, f"content block {n} ({t}) has no string 'text'")
        parts.texts.append(text)
    elif t == "refusal" and isinstance(block.get("refusal"), str):
        parts.texts.append(block["refusal"])
    elif _is_call(t, block):
        if role != "assistant":
            raise error(index, f"is a {role!r} message with a {t} block; only assistants call")
        _call_block(index, n, t, block, names, parts)
    elif t == "tool_result":
        if role in ("assistant", "tool"):  # "tool": one result inside another's content
            raise error(index, f"has a tool_result block where none can be (in {role!r})")
        parts.results.append(_tool_result(index, block, names))
    elif t in OUTPUT_ITEMS:
        parts.results.append(item_output(index, block, names))
    elif t.endswith("_tool_result") or t in ("server_tool_result", "tool-result"):
        parts.results.append(_server_result(index, n, t, block, names))
    elif t == "non_standard" and is_map(block.get("value")):
        _non_standard(index, role, n, block["value"], names, parts)
    elif looks_like_call(t):
        raise error(
            index,
            f"content block {n} has type {t!r}, which looks like a tool call but is not "
            "a shape gradeloop reads; give it as a tool_use block (Anthropic) or in "
            "'tool_calls' (OpenAI chat), or report the shape",
        )
    else:
        parts.other.append(t)


def _is_call(t: str, block: Mapping[str, Any]) -> bool:
    return (
        t in ANTHROPIC_CALLS
        or t in LANGCHAIN_CALLS
        or t in LANGCHAIN_RAW_CALLS
        or t in CALL_ITEMS
        or t in ("tool-call", "tool-invocation", "dynamic-tool")
        or (t.startswith("tool-") and "toolCallId" in block and "state" in block)
    )


def _call_block(
    index: int, n: int, t: str, block: Mapping[str, Any], names: dict[str, str], parts: Parts
) -> None:
    where = f"{t} block {n}"
    result: ToolResult | None = None
    if t in ANTHROPIC_CALLS:
        call = _named_call(index, where, block, "name", "input", block.get("id"))
    elif t in LANGCHAIN_CALLS:
        call = _named_call(index, where, block, "name", "args", block.get("id"))
    elif t in LANGCHAIN_RAW_CALLS:
        call = raw_call(index, where, block)
    elif t in CALL_ITEMS:
        found, result = item_call(index, block, where, names)
        if found is None:
            parts.results.extend([result] if result else [])
            return
        call = found
    elif t == "tool-call":  # the Vercel AI SDK: v5 writes 'input', v4 'args'
        given = "input" if "input" in block else "args"
        call = _named_call(index, where, block, "toolName", given, block.get("toolCallId"))
    else:
        call, result = vercel_invocation(index, where, t, block)
    if call.id is not None:
        names[call.id] = call.name
    parts.calls.append(call)
    if result is not None:
        parts.results.append(result)


def _named_call(
    index: int, where: str, block: Mapping[str, Any], name_key: str, args_key: str, ident: Any
) -> ToolCall:
    name = name_of(block.get(name_key))
    if name is None:
        raise error(index, f"{where} has no tool {name_key!r}")
    args = block.get(args_key)
    if args is None:
        args = {}
    if not is_map(args):
        raise error(index, f"{where} ({name}) has {args_key!r} that is {kind(args)}, not an object")
    # JSON data or not, the messages' JSON copy (Transcript) says, naming the message
    return ToolCall(name, dict(args), index, id_of(ident))


def raw_call(index: int, where: str, block: Mapping[str, Any]) -> ToolCall:
    """A call whose arguments are text that may not be JSON (LangChain's invalid calls
    and call chunks): read as a call with ``error`` set when they cannot be read."""
    name = name_of(block.get("name"))
    if name is None:
        raise error(
            index,
            f"{where} is a call without a tool name (LangChain invalid_tool_calls); "
            "it cannot be checked against any tool",
        )
    raw, problem = block.get("args"), block.get("error")
    ident = id_of(block.get("id"))
    try:
        args = arguments(index, where, name, raw)
    except ValueError:  # a TranscriptError too: the arguments are what is invalid here
        shown_raw = raw if isinstance(raw, str) else compact_json(raw)
        reason = f"invalid arguments {shown_raw[:80]!r}"
        if isinstance(problem, str) and problem:
            reason += f": {problem}"
        return ToolCall(name, {}, index, ident, error=reason)
    if isinstance(problem, str) and problem:
        return ToolCall(name, args, index, ident, error=problem)
    return ToolCall(name, args, index, ident)


def vercel_invocation(
    index: int, where: str, t: str, block: Mapping[str, Any]
) -> tuple[ToolCall, ToolResult | None]:
    """A Vercel AI SDK tool invocation: v4's ``toolInvocations`` entries and
    ``tool-invocation`` parts (``state`` partial-call / call / result, ``args``,
    ``result``), v5's ``tool-NAME`` / ``dynamic-tool`` parts (``state``
    input-streaming ... output-available / output-error / output-denied, ``input``,
    ``output``, ``errorText``). The call, and its result once there is one."""
    if t == "tool-invocation":
        inner = block.get("toolInvocation")
        if not is_map(inner):
            raise error(index, f"{where} has no 'toolInvocation' object")
        block, t = inner, "toolInvocations"
    ident = block.get("toolCallId")
    if t.startswith("tool-"):
        name = t[len("tool-") :]
        call = _named_call(index, where, {"n": name, "a": block.get("input")}, "n", "a", ident)
    else:
        given = "input" if "input" in block else "args"
        call = _named_call(index, where, block, "toolName", given, ident)
    state = block.get("state")
    if state in ("result", "output-available"):
        content = block.get("result" if state == "result" else "output")
        return call, ToolResult(shown(content), index, call.id, call.name)
    if state == "output-error":
        return call, ToolResult(shown(block.get("errorText")), index, call.id, call.name, True)
    if state == "output-denied":
        return call, ToolResult("the call was denied", index, call.id, call.name, True)
    return call, None


def _tool_result(index: int, block: Mapping[str, Any], names: dict[str, str]) -> ToolResult:
    call_id = id_of(block.get("tool_use_id"))
    inner = read_content(index, "tool", block.get("content"), names)
    text = "\n".join(inner.texts)
    if inner.other:
        text = "\n".join([text, *(f"[{k}]" for k in inner.other)]).strip("\n")
    is_error = block.get("is_error") is True
    return ToolResult(text, index, call_id, names.get(call_id or ""), is_error)


def _server_result(
    index: int, n: int, t: str, block: Mapping[str, Any], names: dict[str, str]
) -> ToolResult:
    """A server tool's result (Anthropic's ``*_tool_result``, LangChain's
    ``server_tool_result``) or a Vercel ``tool-result``, shown with its content."""
    if t == "tool-result":
        call_id = id_of(block.get("toolCallId"))
        name = name_of(block.get("toolName")) or names.get(call_id or "")
        if "output" in block:  # v5: {"type": "text" | "json" | "error-text" ..., "value"}
            text, failed = _vercel_output(block["output"])
        else:
            text, failed = shown(block.get("result")), block.get("isError") is True
        return ToolResult(text, index, call_id, name, failed)
    if t == "server_tool_result":
        call_id = id_of(block.get("tool_call_id"))
        failed = block.get("status") == "error"
        return ToolResult(
            shown(block.get("output")), index, call_id, names.get(call_id or ""), failed
        )
    call_id = id_of(block.get("tool_use_id"))
    content = block.get("content")
    inner_type = content.get("type") if is_map(content) else None
    failed = block.get("is_error") is True or (
        isinstance(inner_type, str) and inner_type.endswith("_error")
    )
    return ToolResult(shown(content), index, call_id, names.get(call_id or ""), failed)


def _vercel_output(output: Any) -> tuple[str, bool]:
    if not is_map(output):
        return shown(output), False
    kind_, value = output.get("type"), output.get("value")
    text = value if isinstance(value, str) else compact_json(value)
    if kind_ == "execution-denied":
        reason = output.get("reason")
        return "execution denied" + (f": {reason}" if isinstance(reason, str) else ""), True
    if kind_ == "content":
        return shown(value), False
    return text, kind_ in ("error-text", "error-json")


def _non_standard(
    index: int, role: str, n: int, value: Mapping[str, Any], names: dict[str, str], parts: Parts
) -> None:
    """LangChain's ``non_standard`` block: a provider's own block kept whole. A call in
    it is read (it is usually given again as a standard block: the two are one call)."""
    inner_type = value.get("type")
    if not isinstance(inner_type, str) or not inner_type:
        parts.other.append("non_standard")
        return
    inner = Parts()
    _block(index, role, n, inner_type, value, names, inner)
    parts.texts.extend(inner.texts)
    parts.wrapped.extend(inner.calls + inner.wrapped)
    parts.results.extend(inner.results)
    parts.other.extend(inner.other)
