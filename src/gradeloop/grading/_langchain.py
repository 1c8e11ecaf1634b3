"""LangChain messages, read directly in each of their dict forms.

LangChain's own converter to OpenAI dicts (``convert_to_openai_messages``) drops an
``AIMessage``'s ``invalid_tool_calls``: a call made with arguments that did not parse
would vanish, and ``tool_not_called`` pass. So LangChain messages are read here as
they are, calls and invalid calls alike, in the forms they are stored in:

* ``message.model_dump()`` (what :class:`~gradeloop.Transcript` makes of a message
  object): ``{"type": "ai", "content": ..., "tool_calls": [...],
  "invalid_tool_calls": [...]}``;
* ``messages_to_dict(messages)``: ``{"type": "ai", "data": {...}}``;
* ``langchain_core.load.dumpd(message)`` (LangSmith, LangGraph checkpoints):
  ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._blocks import read_content
from ._chat import function_call, langchain_calls, merge_calls, openai_calls, tool_message
from ._turns import ToolCall, Turn, error, is_map, looks_like_call

__all__ = ["LANGCHAIN_TYPES", "langchain_form", "read_langchain"]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_ROLES |= {"function": "function", "chat": "chat"}
#: A message's ``type`` (chunks are typed by their class name) and its class name.
LANGCHAIN_TYPES = {
    **{t: t for t in _ROLES},
    **{f"{c}MessageChunk": t for c, t in (("Human", "human"), ("AI", "ai"), ("System", "system"))},
    **{f"{c}MessageChunk": t for c, t in (("Tool", "tool"), ("Function", "function"))},
    "ChatMessageChunk": "chat",
}
_CLASSES = {
    f"{c}Message": t
    for c, t in (("Human", "human"), ("AI", "ai"), ("System", "system"), ("Tool", "tool"))
} | {"FunctionMessage": "function", "ChatMessage": "chat"}
_CLASSES |= {f"{c}Chunk": t for c, t in _CLASSES.items()}
#: The call-like keys LangChain's messages have, all read (chunks: in tool_calls).
_KNOWN = frozenset(("tool_calls", "invalid_tool_calls", "tool_call_chunks", "tool_call_id"))


def langchain_form(message: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """``(type, the message's fields)`` when ``message`` is a LangChain message in one
    of its dict forms, else None."""
    t = message.get("type")
    if t == "constructor" and message.get("lc") == 1:
        path, kwargs = message.get("id"), message.get("kwargs")
        cls = path[-1] if isinstance(path, list) and path else None
        if isinstance(cls, str) and cls in _CLASSES and is_map(kwargs):
            return _CLASSES[cls], kwargs
        return None
    if not isinstance(t, str) or t not in LANGCHAIN_TYPES:
        return None
    data = message.get("data")
    if "content" not in message and is_map(data):  # messages_to_dict
        return LANGCHAIN_TYPES[t], data
    return LANGCHAIN_TYPES[t], message


def read_langchain(
    index: int, t: str, message: Mapping[str, Any], names: dict[str, str], roles: tuple[str, ...]
) -> Turn:
    """One LangChain message read."""
    role = _ROLES[t]
    if role == "chat":  # a ChatMessage names its own role
        role = message.get("role")  # type: ignore[assignment]
        if role not in roles:
            raise error(index, f"is a LangChain ChatMessage with an unknown role {role!r}")
    for key in message:
        if key not in _KNOWN and looks_like_call(key):
            raise error(index, f"has a key {key!r} that looks like tool calls and is not read")
    parts = read_content(index, role, message.get("content"), names)
    listed: list[ToolCall] = []
    valid, invalid = message.get("tool_calls"), message.get("invalid_tool_calls")
    if valid or invalid:
        if role != "assistant":
            raise error(
                index, f"is a LangChain {t!r} message with tool calls; only AI messages call"
            )
        listed = langchain_calls(index, valid, invalid)
    elif role == "assistant":
        listed = _legacy(index, message.get("additional_kwargs"))
    calls = merge_calls(index, parts, listed, names)
    text = "\n".join(parts.texts)
    results = parts.results
    if role in ("tool", "function"):
        results = [*results, tool_message(index, role, message, text, names)]
        text = ""
    return Turn(index, role, text, tuple(calls), tuple(results), tuple(parts.other))


def _legacy(index: int, extra: Any) -> list[ToolCall]:
    """Calls an old serialisation left only in ``additional_kwargs`` (OpenAI's raw
    ``tool_calls`` / ``function_call``), which LangChain now parses into
    ``tool_calls`` when the message is made."""
    if not is_map(extra):
        return []
    if extra.get("tool_calls"):
        return openai_calls(index, extra["tool_calls"])
    if extra.get("function_call"):
        return [function_call(index, extra["function_call"], "'function_call'", None)]
    return []
