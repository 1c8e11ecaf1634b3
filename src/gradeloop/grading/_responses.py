"""OpenAI Responses API items: the calls, their outputs and the other items of a run.

A Responses transcript is a list of items (``response.output`` and the inputs sent
back): ``message`` items (read like chat messages), calls (``function_call``,
``custom_tool_call``, ``mcp_call`` and the built-in tools' ``web_search_call``,
``shell_call``...), their outputs (``function_call_output``...) and items that are
neither (``reasoning``). Every item type of openai 3.63 is known here; an unknown
one that looks like a call is refused by the caller, never skipped.

A built-in tool's call is named for its tool (``web_search``, ``code_interpreter``),
its arguments are what the item says the tool was asked (``action``, ``code``,
``queries``), and what the tool returned, when the item holds it, is its result.
``custom_tool_call``'s free-form text is the argument ``input``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._turns import ToolCall, ToolResult, arguments, error, id_of, is_map, kind, name_of, shown

__all__ = [
    "ASSISTANT_ITEMS",
    "CALL_ITEMS",
    "INPUT_ITEMS",
    "OUTPUT_ITEMS",
    "item_call",
    "item_output",
]

#: Built-in tools' call items: the tool's name, and where its arguments are.
_BUILT_IN: dict[str, tuple[str, str | tuple[str, ...]]] = {
    "web_search_call": ("web_search", "action"),
    "computer_call": ("computer", "action"),
    "local_shell_call": ("local_shell", "action"),
    "shell_call": ("shell", "action"),
    "apply_patch_call": ("apply_patch", "operation"),
    "tool_search_call": ("tool_search", "arguments"),
    "file_search_call": ("file_search", ("queries",)),
    "code_interpreter_call": ("code_interpreter", ("code",)),
    "program": ("program", ("code",)),
    "image_generation_call": ("image_generation", ()),
}
#: Items that are a call (an approval request too: the model asked to call the tool).
CALL_ITEMS = frozenset(
    ("function_call", "custom_tool_call", "mcp_call", "mcp_approval_request", *_BUILT_IN)
)
#: Items that are a call's output (the tool's side of the conversation).
OUTPUT_ITEMS = frozenset(
    (
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "tool_search_output",
        "program_output",
    )
)
#: Items of the model's own that are neither text nor calls.
ASSISTANT_ITEMS = frozenset(("reasoning", "compaction", "mcp_list_tools"))
#: Items a caller sends that are neither messages nor outputs.
INPUT_ITEMS = frozenset(
    ("mcp_approval_response", "additional_tools", "configuration_update", "compaction_trigger")
)


def item_call(
    index: int, item: Mapping[str, Any], where: str, names: Mapping[str, str]
) -> tuple[ToolCall | None, ToolResult | None]:
    """A call item read: the call (None for an ``mcp_call`` whose approval request was
    already read as the call) and the result the item holds, if any."""
    kind_ = item["type"]
    call_id = id_of(item.get("call_id")) or id_of(item.get("id"))
    if kind_ in _BUILT_IN:
        tool, place = _BUILT_IN[kind_]
        call = ToolCall(tool, _built_in_args(index, item, where, place), index, call_id)
        return call, _embedded_result(index, item, call)
    name = name_of(item.get("name"))
    if name is None:
        raise error(index, f"{where} has no tool 'name'")
    if kind_ == "custom_tool_call":
        text = item.get("input")
        if not isinstance(text, str):
            raise error(index, f"{where} ({name}) has 'input' that is {kind(text)}; give text")
        return ToolCall(name, {"input": text}, index, call_id), None
    call = ToolCall(name, arguments(index, where, name, item.get("arguments")), index, call_id)
    if kind_ != "mcp_call":
        return call, None
    result = _embedded_result(index, item, call)
    if id_of(item.get("approval_request_id")) in names:  # its request was the call
        return None, result
    return call, result


def item_output(index: int, item: Mapping[str, Any], names: Mapping[str, str]) -> ToolResult:
    """An output item read as the result of the call it names."""
    call_id = id_of(item.get("call_id")) or id_of(item.get("id"))
    kind_ = item["type"]
    if kind_ == "tool_search_output":
        tools = item.get("tools")
        listed = [t.get("name") for t in tools if is_map(t)] if isinstance(tools, list) else []
        text = "tools: " + ", ".join(n for n in listed if isinstance(n, str))
    else:
        text = shown(item.get("result") if kind_ == "program_output" else item.get("output"))
    failed = item.get("status") == "failed"
    return ToolResult(text, index, call_id, names.get(call_id or ""), failed)


def _built_in_args(
    index: int, item: Mapping[str, Any], where: str, place: str | tuple[str, ...]
) -> dict[str, Any]:
    if isinstance(place, tuple):
        return {key: item[key] for key in place if item.get(key) is not None}
    # (an SDK object's dump holds every field: the ones not given are null, not asked)
    value = item.get(place)
    if value is None and place == "action" and isinstance(item.get("actions"), list):
        return {"actions": item["actions"]}  # a computer call's batch of actions
    if value is None:
        return {}
    if not is_map(value):
        raise error(index, f"{where} has '{place}' that is {kind(value)}, not an object")
    return {key: v for key, v in value.items() if v is not None}


def _embedded_result(index: int, item: Mapping[str, Any], call: ToolCall) -> ToolResult | None:
    """What a built-in or MCP call item says its tool returned (None when nothing)."""
    kind_ = item["type"]
    if kind_ == "mcp_call":
        failed = item.get("error") is not None
        value = item.get("error") if failed else item.get("output")
    elif kind_ == "image_generation_call":
        failed, value = item.get("error") is not None, item.get("error")
        value = value if failed else ("[image]" if item.get("result") else None)
    else:
        failed = item.get("status") == "failed"
        value = item.get("results") if kind_ == "file_search_call" else item.get("outputs")
    if value is None and not failed:
        return None
    return ToolResult(shown(value), index, call.id, call.name, failed)
