"""Reading an agent's messages into :class:`Turn` s, whatever shape each is in.

A list may mix shapes (LangChain's dict form beside hand-written fixtures); each
message is read by what it is:

* a chat message (it has a ``role``): OpenAI chat (``content`` a string, null or a
  list of parts; an assistant's ``tool_calls``, the legacy ``function_call``;
  ``role="tool"`` messages are results), Anthropic messages (``content`` blocks:
  ``text``, ``tool_use``, ``tool_result``, the server tools' results), an Anthropic
  ``Message`` or an OpenAI Responses ``message`` item, a Vercel AI SDK message
  (``parts``, ``toolInvocations``). Content blocks: :mod:`._blocks`;
* an OpenAI Responses item (``function_call``, ``function_call_output``,
  ``reasoning``...): :mod:`._responses`. A model response's items (reasoning, text,
  parallel calls) are one turn, as an assistant message with its calls is;
* a LangChain message in its dict forms: :mod:`._langchain`.

Anything that cannot be read is a :class:`~gradeloop.errors.TranscriptError` naming
the message index; nothing is skipped silently - a key or block that looks like a
call and is not read is an error too - so a checker never passes on a call it could
not see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ._blocks import read_content
from ._chat import function_call, invocations, merge_calls, openai_calls, tool_message
from ._langchain import langchain_form, read_langchain
from ._responses import (
    ASSISTANT_ITEMS,
    CALL_ITEMS,
    INPUT_ITEMS,
    OUTPUT_ITEMS,
    item_call,
    item_output,
)
from ._turns import ToolCall, ToolResult, Turn, compact_json, error, is_map, kind, looks_like_call

__all__ = ["ROLES", "ToolCall", "ToolResult", "Turn", "compact_json", "read_messages"]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_ROLES = frozenset(ROLES)
_RESULT_ROLES = frozenset(("tool", "function"))
#: The call-like keys of a chat message that are read (all others are refused), and
#: the usual keys, which need no look (a message's keys are looked at on every read).
_PLAIN_KEYS = frozenset(
    (
        *("tool_calls", "tool_call_id", "function_call", "toolInvocations"),
        *("role", "content", "name", "id", "type", "parts", "refusal", "audio", "annotations"),
    )
)


def read_messages(messages: Sequence[Any]) -> list[Turn]:
    """Every message read, in order; a model response given as several Responses
    items is one assistant turn, at the index of its first item."""
    names: dict[str, str] = {}  # call id -> tool name, for results that give only the id
    turns: list[Turn] = []
    joinable = False  # the last turn is a Responses output a next output item joins
    for index, message in enumerate(messages):
        turn, output = _read(index, message, names)
        if output and joinable:
            turns[-1] = _join(turns[-1], turn)
        else:
            turns.append(turn)
        joinable = output
    return turns


def _read(index: int, message: Any, names: dict[str, str]) -> tuple[Turn, bool]:
    """The message read, and whether it is a Responses item of the model's output."""
    if not is_map(message):
        raise error(index, f"is {kind(message)}; each message is an object with a 'role'")
    role, t = message.get("role"), message.get("type")
    if role is not None and (t is None or t == "message"):
        turn = _read_chat(index, role, message, names)
        return turn, t == "message" and role == "assistant"
    if isinstance(t, str) and (t in CALL_ITEMS or t in ASSISTANT_ITEMS):
        return _assistant_item(index, t, message, names), True
    if isinstance(t, str) and t in OUTPUT_ITEMS:
        return Turn(index, "tool", "", tool_results=(item_output(index, message, names),)), False
    if isinstance(t, str) and t in INPUT_ITEMS:
        return Turn(
            index, "user" if t == "mcp_approval_response" else "system", "", other=(t,)
        ), False
    found = langchain_form(message)
    if found is not None:
        return read_langchain(index, found[0], found[1], names, ROLES), False
    raise _unread(index, message, t)


def _read_chat(index: int, role: Any, message: Mapping[str, Any], names: dict[str, str]) -> Turn:
    if type(role) is not str or role not in _ROLES:
        raise error(index, f"has an unknown role {role!r}; expected one of: " + ", ".join(ROLES))
    for key in message:
        if key not in _PLAIN_KEYS and looks_like_call(key):
            raise error(
                index,
                f"has a key {key!r} that looks like tool calls and is not read; give "
                "calls as 'tool_calls' (OpenAI chat) or tool_use blocks (Anthropic)",
            )
    parts = read_content(index, role, message.get("content"), names)
    if message.get("parts") is not None:  # the Vercel AI SDK's UI messages
        text_given = len(parts.texts)
        read_content(index, role, message["parts"], names, parts)
        if text_given and len(parts.texts) > text_given:  # v4: 'content' is the parts' text
            del parts.texts[:text_given]
    calls, results = parts.calls, parts.results
    if "tool_calls" in message or "function_call" in message or "toolInvocations" in message:
        listed, extra = _listed_calls(index, role, message)
        calls = merge_calls(index, parts, listed, names)
        results += extra
    elif parts.wrapped:
        calls = merge_calls(index, parts, [], names)
    text = "\n".join(parts.texts)
    if not text and isinstance(message.get("refusal"), str):  # OpenAI chat's refusal
        text = message["refusal"]
    if role in _RESULT_ROLES and (text or not results):
        results.append(tool_message(index, role, message, text, names))
        text = ""
    return Turn(index, role, text, tuple(calls), tuple(results), tuple(parts.other))


_LISTS = ("tool_calls", "function_call", "toolInvocations")


def _listed_calls(
    index: int, role: str, message: Mapping[str, Any]
) -> tuple[list[ToolCall], list[ToolResult]]:
    """The calls a chat message lists beside its content, and Vercel's results."""
    listed: list[ToolCall] = []
    results: list[ToolResult] = []
    for key in _LISTS:
        value = message.get(key)
        if value is None:
            continue
        if role != "assistant":
            raise error(index, f"is a {role!r} message with {key!r}; only assistants call")
        if key == "tool_calls":
            listed += openai_calls(index, value)
        elif key == "function_call":
            listed.append(function_call(index, value, "'function_call'", None))
        else:
            found, results = invocations(index, value)
            listed += found
    return listed, results


def _assistant_item(index: int, t: str, item: Mapping[str, Any], names: dict[str, str]) -> Turn:
    """A Responses item of the model's: a call (with what its tool returned, for the
    built-in tools) or another item (``reasoning``)."""
    if t in ASSISTANT_ITEMS:
        return Turn(index, "assistant", "", other=(t,))
    call, result = item_call(index, item, t, names)
    if call is None:  # an MCP call whose approval request was the call
        return Turn(index, "assistant", "", (), (result,) if result else ())
    if call.id is not None:
        names[call.id] = call.name
    return Turn(index, "assistant", "", (call,), (result,) if result else ())


def _join(first: Turn, more: Turn) -> Turn:
    """Two Responses items of one model response as one turn."""
    at = first.index
    calls = tuple(replace(c, message_index=at) for c in more.tool_calls)
    results = tuple(replace(r, message_index=at) for r in more.tool_results)
    text = "\n".join(t for t in (first.text, more.text) if t)
    return Turn(
        at,
        "assistant",
        text,
        first.tool_calls + calls,
        first.tool_results + results,
        first.other + more.other,
    )


def _unread(index: int, message: Mapping[str, Any], t: Any) -> Exception:
    """The error for a message of no shape we read, with the fix for the usual ones."""
    if t == "item_reference":
        return error(
            index,
            "is a Responses item_reference: it names an earlier item by id, which cannot "
            "be checked; give the items themselves (response.output)",
        )
    if "choices" in message:
        return error(index, "is a whole chat completion; give completion.choices[0].message")
    if t == "response" or ("output" in message and "object" in message):
        return error(index, "is a whole Responses response; give its items (response.output)")
    if isinstance(t, str) and looks_like_call(t):
        return error(
            index,
            f"has type {t!r}, which looks like a tool call but is not a shape gradeloop reads",
        )
    if t is not None:
        return error(index, f"has type {t!r} and no 'role'; give one of: " + ", ".join(ROLES))
    return error(index, "has no 'role'; give one of: " + ", ".join(ROLES))
