"""Reading one chat message, in OpenAI's or Anthropic's shape, into a :class:`Turn`.

Both shapes are read message by message (a list may mix them, as LangChain's dict
form and hand-written fixtures do):

* OpenAI chat: ``role`` in system / developer / user / assistant / tool (and the
  legacy ``function``); ``content`` a string, null or a list of parts; an assistant's
  ``tool_calls[].function.{name, arguments}`` with ``arguments`` a JSON string (the
  legacy ``function_call`` too); a ``role="tool"`` message is a call's result.
* Anthropic messages: ``role`` user / assistant; ``content`` a string or a list of
  blocks: ``text``, ``tool_use{id, name, input}`` (also ``server_tool_use`` and
  ``mcp_tool_use``), ``tool_result{tool_use_id, content, is_error}``; other blocks
  (images, documents, thinking...) are kept but are not text.

Anything that cannot be read is a :class:`~gradeloop.errors.TranscriptError` naming
the message index; nothing is skipped silently, so a checker never passes on a call
it could not see.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TranscriptError

__all__ = ["ROLES", "ToolCall", "ToolResult", "Turn", "read_message"]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
#: Content blocks that are a tool call (Anthropic's client, server and MCP tools).
CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
TEXT_PARTS = ("text", "input_text", "output_text")


@dataclass(frozen=True)
class ToolCall:
    """One tool call an agent made: the tool's ``name``, its parsed ``args`` (a dict),
    the index of the message that holds it, and the call's ``id`` when it has one."""

    name: str
    args: dict[str, Any]
    message_index: int
    id: str | None = None

    def __str__(self) -> str:
        return f"{self.name}({compact_json(self.args)})"


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned: its text, the message it is in, the call it answers."""

    content: str
    message_index: int
    call_id: str | None = None
    name: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class Turn:
    """One message, read: its role, its text, the calls it makes, the results it holds.

    ``other`` names the blocks that are neither text nor tools (``image``, ``thinking``).
    """

    index: int
    role: str
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    other: tuple[str, ...] = ()


def compact_json(value: Any) -> str:
    """One line of JSON, keys in their given order, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def read_message(index: int, message: Any, names: Mapping[str, str]) -> Turn:
    """Read message ``index``. ``names`` maps call ids seen so far to tool names, so a
    result that carries only its call's id is shown with the tool's name."""
    if not _is_map(message):
        hint = "each message is an object with a 'role'"
        if hasattr(message, "content") and hasattr(message, "type"):  # a LangChain message
            hint = (
                "convert LangChain messages to dicts first: "
                "langchain_core.messages.convert_to_openai_messages(messages)"
            )
        raise _error(index, f"is {_kind(message)}; {hint}")
    role = message.get("role")
    if role is None:
        raise _error(index, "has no 'role'; give one of: " + ", ".join(ROLES))
    if role not in ROLES:
        raise _error(index, f"has an unknown role {role!r}; expected one of: " + ", ".join(ROLES))
    text, calls, results, other = _content(index, role, message.get("content"), names)
    if message.get("tool_calls") is not None:
        if role != "assistant":
            raise _error(index, f"is a {role!r} message with 'tool_calls'; only assistants call")
        calls += _openai_calls(index, message["tool_calls"])
    if message.get("function_call") is not None:
        calls.append(_function(index, message["function_call"], "'function_call'", None))
    if role in ("tool", "function"):
        results.append(_tool_message(index, role, message, text, names))
        text = ""
    return Turn(index, role, text, tuple(calls), tuple(results), tuple(other))


def _content(
    index: int, role: str, content: Any, names: Mapping[str, str]
) -> tuple[str, list[ToolCall], list[ToolResult], list[str]]:
    if content is None:
        return "", [], [], []
    if isinstance(content, str):
        return content, [], [], []
    if not isinstance(content, list):
        raise _error(index, f"has 'content' that is {_kind(content)}; give a string or a list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    other: list[str] = []
    for n, block in enumerate(content):
        kind = block.get("type") if _is_map(block) else None
        if not isinstance(kind, str) or not kind:
            raise _error(index, f"content block {n} is not an object with a 'type'")
        if kind in TEXT_PARTS:
            texts.append(_text_of(index, n, block))
        elif kind in CALL_BLOCKS:
            if role != "assistant":
                raise _error(
                    index, f"is a {role!r} message with a {kind} block; only assistants call"
                )
            calls.append(_tool_use(index, n, block))
        elif kind == "tool_result":
            if role in ("assistant", "tool"):  # "tool": one result inside another's content
                raise _error(index, f"has a tool_result block where none can be (in {role!r})")
            results.append(_tool_result(index, n, block, names))
        else:
            other.append(kind)
    return "\n".join(texts), calls, results, other


def _text_of(index: int, n: int, block: Mapping[str, Any]) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise _error(index, f"content block {n} ({block.get('type')}) has no string 'text'")
    return text


def _tool_use(index: int, n: int, block: Mapping[str, Any]) -> ToolCall:
    where = f"{block['type']} block {n}"
    name = block.get("name")
    if not isinstance(name, str) or not name:
        raise _error(index, f"{where} has no tool 'name'")
    args = block.get("input", {})
    if not _is_map(args):
        raise _error(index, f"{where} ({name}) has 'input' that is {_kind(args)}, not an object")
    # JSON data or not, the messages' JSON copy (Transcript) says, naming the message
    return ToolCall(name, dict(args), index, _id(block.get("id")))


def _tool_result(
    index: int, n: int, block: Mapping[str, Any], names: Mapping[str, str]
) -> ToolResult:
    call_id = _id(block.get("tool_use_id"))
    text, _, _, other = _content(index, "tool", block.get("content"), names)
    if other:
        text = "\n".join([text, *(f"[{k}]" for k in other)]).strip("\n")
    is_error = block.get("is_error") is True
    return ToolResult(text, index, call_id, names.get(call_id or ""), is_error)


def _openai_calls(index: int, raw: Any) -> list[ToolCall]:
    if not isinstance(raw, list):
        raise _error(index, f"has 'tool_calls' that is {_kind(raw)}, not a list")
    calls = []
    for n, call in enumerate(raw):
        where = f"tool call {n}"
        if not _is_map(call):
            raise _error(index, f"{where} is {_kind(call)}, not an object")
        kind = call.get("type", "function")
        if kind != "function":
            raise _error(index, f"{where} has type {kind!r}; only 'function' calls can be read")
        function = call.get("function")
        if not _is_map(function):
            raise _error(
                index,
                f"{where} has no 'function' object; OpenAI tool calls look like "
                '{"type": "function", "function": {"name": ..., "arguments": "{...}"}} '
                "(LangChain messages: convert them with convert_to_openai_messages)",
            )
        calls.append(_function(index, function, where, _id(call.get("id"))))
    return calls


def _function(index: int, function: Any, where: str, call_id: str | None) -> ToolCall:
    if not _is_map(function):
        raise _error(index, f"{where} is {_kind(function)}, not an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise _error(index, f"{where} has no function 'name'")
    return ToolCall(name, _arguments(index, where, name, function.get("arguments")), index, call_id)


def _arguments(index: int, where: str, name: str, raw: Any) -> dict[str, Any]:
    """A call's arguments: a JSON string holding an object (an object is taken as is;
    an empty string or null is no arguments)."""
    label = f"{where} ({name})"
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if _is_map(raw):
        return dict(raw)
    if not isinstance(raw, str):
        raise _error(index, f"{label} has 'arguments' that is {_kind(raw)}; give a JSON string")
    try:
        value = _DECODER.decode(raw)
    except json.JSONDecodeError as exc:
        raise _error(
            index, f"{label} has arguments that are not JSON: {exc.msg} at column {exc.colno}"
        ) from None
    except RecursionError:
        raise _error(index, f"{label} has arguments nested too deeply to read") from None
    except ValueError as exc:
        raise _error(index, f"{label} has arguments that are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _error(index, f"{label} has arguments that are {_kind(value)}, not a JSON object")
    return value


def _tool_message(
    index: int, role: str, message: Mapping[str, Any], text: str, names: Mapping[str, str]
) -> ToolResult:
    call_id = _id(message.get("tool_call_id"))
    name = message.get("name")
    if not isinstance(name, str) or not name:
        name = names.get(call_id or "")
    if role == "function" and not name:
        raise _error(index, "is a 'function' message without the function's 'name'")
    return ToolResult(text, index, call_id, name)


def _no_duplicates(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def _is_map(value: Any) -> bool:
    # a dict first: isinstance against the Mapping ABC costs more than the rest of a read
    return type(value) is dict or isinstance(value, Mapping)


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _error(index: int, what: str) -> TranscriptError:
    return TranscriptError(f"message {index} {what}", index=index)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names = {dict: "an object", list: "a list", str: "a string", type(None): "null"}
    return names.get(type(value), f"a {type(value).__name__}")
