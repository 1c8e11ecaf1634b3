"""The message-level call lists: OpenAI chat's ``tool_calls`` and ``function_call``,
LangChain's ``tool_calls`` / ``invalid_tool_calls``, the Vercel AI SDK's
``toolInvocations``; and how calls given twice in one message become one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._blocks import Parts, raw_call, vercel_invocation
from ._turns import ToolCall, ToolResult, arguments, error, id_of, is_map, kind, name_of

__all__ = ["function_call", "invocations", "langchain_calls", "merge_calls", "openai_calls"]


def openai_calls(index: int, raw: Any) -> list[ToolCall]:
    """``tool_calls``: OpenAI's ``function`` and ``custom`` calls (and a LangChain
    ``tool_call`` dict, which a hand-built message may hold)."""
    if not isinstance(raw, list):
        raise error(index, f"has 'tool_calls' that is {kind(raw)}, not a list")
    calls = []
    for n, call in enumerate(raw):
        where = f"tool call {n}"
        if not is_map(call):
            raise error(index, f"{where} is {kind(call)}, not an object")
        call_type = call.get("type", "function")
        if call_type == "tool_call":
            calls.extend(langchain_calls(index, [call], []))
        elif call_type == "custom":
            calls.append(_custom(index, where, call.get("custom"), id_of(call.get("id"))))
        elif call_type != "function":
            raise error(
                index, f"{where} has type {call_type!r}; 'function' and 'custom' calls are read"
            )
        else:
            fn = call.get("function")
            if not is_map(fn):
                raise error(
                    index,
                    f"{where} has no 'function' object; OpenAI tool calls look like "
                    '{"type": "function", "function": {"name": ..., "arguments": "{...}"}} '
                    '(a LangChain tool call says "type": "tool_call")',
                )
            calls.append(function_call(index, fn, where, id_of(call.get("id"))))
    return calls


def function_call(index: int, function: Any, where: str, call_id: str | None) -> ToolCall:
    """``{"name": ..., "arguments": "{...}"}``: a tool call's function, or the legacy
    ``function_call``."""
    if not is_map(function):
        raise error(index, f"{where} is {kind(function)}, not an object")
    name = name_of(function.get("name"))
    if name is None:
        raise error(index, f"{where} has no function 'name'")
    return ToolCall(name, arguments(index, where, name, function.get("arguments")), index, call_id)


def _custom(index: int, where: str, custom: Any, call_id: str | None) -> ToolCall:
    """A custom tool's call: free-form text, read as the argument ``input``."""
    if not is_map(custom):
        raise error(index, f"{where} (custom) has no 'custom' object with 'name' and 'input'")
    name = name_of(custom.get("name"))
    if name is None:
        raise error(index, f"{where} (custom) has no tool 'name'")
    text = custom.get("input")
    if not isinstance(text, str):
        raise error(index, f"{where} ({name}) has 'input' that is {kind(text)}; give text")
    return ToolCall(name, {"input": text}, index, call_id)


def langchain_calls(index: int, valid: Any, invalid: Any) -> list[ToolCall]:
    """LangChain's ``tool_calls`` (``{"name", "args", "id"}``) and ``invalid_tool_calls``
    (``args`` text that did not parse; read as calls with ``error`` set)."""
    calls: list[ToolCall] = []
    for key, listed in (("tool_calls", valid), ("invalid_tool_calls", invalid)):
        if listed is None:
            continue
        if not isinstance(listed, list):
            raise error(index, f"has {key!r} that is {kind(listed)}, not a list")
        for n, call in enumerate(listed):
            where = f"{key} {n}"
            if not is_map(call):
                raise error(index, f"{where} is {kind(call)}, not an object")
            if key == "invalid_tool_calls":
                calls.append(raw_call(index, where, call))
                continue
            name = name_of(call.get("name"))
            if name is None:
                raise error(index, f"{where} has no tool 'name'")
            args = call.get("args", {})
            if not is_map(args):
                raise error(index, f"{where} ({name}) has 'args' that is {kind(args)}")
            calls.append(ToolCall(name, dict(args), index, id_of(call.get("id"))))
    return calls


def invocations(index: int, raw: Any) -> tuple[list[ToolCall], list[ToolResult]]:
    """The Vercel AI SDK v4's ``toolInvocations``: each a call, with its result once
    its ``state`` is ``result``."""
    if not isinstance(raw, list):
        raise error(index, f"has 'toolInvocations' that is {kind(raw)}, not a list")
    calls, results = [], []
    for n, entry in enumerate(raw):
        if not is_map(entry):
            raise error(index, f"toolInvocations {n} is {kind(entry)}, not an object")
        call, result = vercel_invocation(index, f"toolInvocations {n}", "toolInvocations", entry)
        calls.append(call)
        results.extend([result] if result else [])
    return calls, results


def merge_calls(
    index: int, parts: Parts, listed: list[ToolCall], names: dict[str, str]
) -> list[ToolCall]:
    """A message's calls: its content's, then the ones given only in a list beside it.

    LangChain keeps a message's calls both in its content (Anthropic's ``tool_use``)
    and in ``tool_calls``; the Vercel AI SDK v4 both in ``parts`` and in
    ``toolInvocations``. A call whose id was already read from another place in the
    same message is that call, given twice; two tools under one id are an error.
    (The content's calls are in ``names`` already: each is added as it is read.)
    """
    calls = list(parts.calls)
    seen: dict[str, ToolCall] = {c.id: c for c in calls if c.id is not None}
    for extra in (parts.wrapped, listed):
        added = []
        for call in extra:
            same = seen.get(call.id) if call.id is not None else None
            if same is None:
                added.append(call)
            elif same.name != call.name:
                raise error(
                    index,
                    f"gives the call id {call.id!r} to two tools, {same.name} and {call.name}",
                )
        calls.extend(added)
        seen.update((c.id, c) for c in added if c.id is not None)
        names.update((c.id, c.name) for c in added if c.id is not None)
    return calls


def tool_message(
    index: int, role: str, message: Mapping[str, Any], text: str, names: Mapping[str, str]
) -> ToolResult:
    """A ``role="tool"`` (or legacy ``"function"``) message: one call's result."""
    call_id = id_of(message.get("tool_call_id"))
    name = name_of(message.get("name")) or names.get(call_id or "")
    if role == "function" and not name:
        raise error(index, "is a 'function' message without the function's 'name'")
    failed = message.get("status") == "error"  # LangChain's ToolMessage
    return ToolResult(text, index, call_id, name, failed)
