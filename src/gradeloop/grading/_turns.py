"""What a transcript's messages are read into, and the small rules every reader shares.

:class:`ToolCall`, :class:`ToolResult` and :class:`Turn` are the read form of a
message, whatever its shape (OpenAI chat or Responses, Anthropic, LangChain, the
Vercel AI SDK). The helpers here (errors naming the message, arguments read as
strict JSON, what looks like a call) are the ones every shape's reader uses, so an
error reads the same whichever shape it came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..errors import TranscriptError

__all__ = [
    "ToolCall",
    "ToolResult",
    "Turn",
    "arguments",
    "compact_json",
    "error",
    "id_of",
    "is_map",
    "kind",
    "looks_like_call",
    "name_of",
    "shown",
    "strict_loads",
]


@dataclass(frozen=True, repr=False)
class ToolCall:
    """One tool call an agent made: the tool's ``name``, its parsed ``args`` (a dict),
    the index of the message that holds it, and the call's ``id`` when it has one.

    ``error`` is set on a call the agent made with arguments that could not be read
    (LangChain's ``invalid_tool_calls``): it still counts as a call of ``name``, with
    ``args`` empty, so ``tool_not_called`` fails on it.
    """

    name: str
    args: dict[str, Any]
    message_index: int
    id: str | None = None
    error: str | None = field(default=None, kw_only=True)

    def __str__(self) -> str:
        if self.error is not None:
            return f"{self.name}(<{self.error}>)"
        return f"{self.name}({compact_json(self.args)})"

    def __repr__(self) -> str:
        shown = f"name={self.name!r}, args={self.args!r}, message_index={self.message_index!r}"
        shown += f", id={self.id!r}"
        if self.error is not None:
            shown += f", error={self.error!r}"
        return f"ToolCall({shown})"


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
    A model response given as OpenAI Responses items (a reasoning item, a message,
    function calls) is one turn, at the index of its first item.
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


def arguments(index: int, where: str, name: str, raw: Any) -> dict[str, Any]:
    """A call's arguments: a JSON string holding an object (an object is taken as is;
    an empty string or null is no arguments)."""
    label = f"{where} ({name})"
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if is_map(raw):
        return dict(raw)
    if not isinstance(raw, str):
        raise error(index, f"{label} has 'arguments' that is {kind(raw)}; give a JSON string")
    try:
        value = strict_loads(raw)
    except json.JSONDecodeError as exc:
        raise error(
            index, f"{label} has arguments that are not JSON: {exc.msg} at column {exc.colno}"
        ) from None
    except RecursionError:
        raise error(index, f"{label} has arguments nested too deeply to read") from None
    except ValueError as exc:
        raise error(index, f"{label} has arguments that are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise error(index, f"{label} has arguments that are {kind(value)}, not a JSON object")
    return value


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


def strict_loads(text: str) -> Any:
    """``json.loads`` that refuses a key written twice in one object (Python would keep
    the last value) and ``NaN``/``Infinity``: a ``ValueError`` naming the key, or a
    ``json.JSONDecodeError`` (a ``ValueError`` too) for text that is not JSON."""
    return _DECODER.decode(text)


#: Names that say "a tool call" in the shapes we know of, and in the ones we do not:
#: a key or block type holding one of these, and not read, is refused, never skipped.
_CALL_WORDS = ("call", "invocation", "tool_use", "tooluse", "function")


def looks_like_call(name: str) -> bool:
    """Whether a key or a block type reads as a tool call (``toolCalls``,
    ``function_calls``, ``tool-call``, ``web_search_call``)."""
    low = name.lower().replace("-", "_")
    return any(word in low for word in _CALL_WORDS)


def is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # a dict first: isinstance against the Mapping ABC costs more than the rest of a read
    return type(value) is dict or isinstance(value, Mapping)


def id_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def name_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def error(index: int, what: str) -> TranscriptError:
    return TranscriptError(f"message {index} {what}", index=index)


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names = {dict: "an object", list: "a list", str: "a string", type(None): "null"}
    return names.get(type(value), f"a {type(value).__name__}")


#: Keys of a tool result's blocks that hold nothing a reader can use (opaque tokens
#: the API hands back so the model can read the result again).
_OPAQUE = frozenset(("encrypted_content", "encrypted_index", "signature", "cache_control"))
#: Blocks shown by their type alone: media, whose bytes a judge cannot read as text.
_MEDIA = frozenset(
    (
        "image",
        "input_image",
        "image_url",
        "input_file",
        "file",
        "audio",
        "input_audio",
        "video",
        "computer_screenshot",
        "container_upload",
    )
)


def shown(value: Any) -> str:
    """A tool result's content as text for the judge: text blocks as their text, a
    text document as its text, media as ``[image]``, any other object as compact JSON
    without its opaque tokens (a web search's ``encrypted_content``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(filter(None, (shown(v) for v in value)))
    if not is_map(value):
        return compact_json(value)
    block_type = value.get("type")
    if block_type in _MEDIA:
        return f"[{block_type}]"
    source = value.get("source")
    if block_type == "document" and is_map(source) and source.get("type") == "text":
        return shown(source.get("data"))
    kept = {k: v for k, v in value.items() if k not in _OPAQUE and v is not None and k != "type"}
    texts = [v for v in kept.values() if isinstance(v, str)]
    if len(kept) == 1 and texts:  # {"type": "text", "text": ...}, {"type": "logs", "logs": ...}
        return texts[0]
    if block_type is not None:
        kept = {"type": block_type, **kept}
    return compact_json(kept)
