"""``Transcript``: an agent's messages as a draft, with its tool calls and final text.

A transcript is read once, when it is made (:mod:`._messages` reads each message);
after that every checker reads the same :class:`ToolCall` list and the judge the
same rendering (:mod:`._render`). The messages themselves are kept exactly as given
(as JSON), so the history stores them losslessly and ``.messages`` hands back a
fresh copy each time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from pydantic import BaseModel

from ..errors import InputError, TranscriptError
from ._files import read_utf8
from ._langchain import langchain_form
from ._messages import ROLES, ToolCall, ToolResult, Turn, read_messages
from ._render import RESULT_LIMIT, render
from ._responses import ASSISTANT_ITEMS, CALL_ITEMS, OUTPUT_ITEMS
from ._turns import is_map, strict_loads

__all__ = [
    "Draft",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "Turn",
    "as_transcript",
    "draft_parts",
    "judge_text",
    "loads",
    "looks_like_messages",
]


class Transcript:
    """An agent's conversation: OpenAI chat or Responses, Anthropic, LangChain or
    Vercel AI SDK messages, as dicts or as the SDKs' own objects (any pydantic model
    is read as its ``model_dump(mode="json")``), one shape or several mixed.

    >>> t = Transcript.from_messages([
    ...     {"role": "user", "content": "Where is order A1?"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1",
    ...      "type": "function", "function": {"name": "lookup_order",
    ...      "arguments": '{"order_id": "A1"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
    ...     {"role": "assistant", "content": "Order A1 has shipped."},
    ... ])
    >>> t.tool_calls
    [ToolCall(name='lookup_order', args={'order_id': 'A1'}, message_index=1, id='c1')]
    >>> t.final_text
    'Order A1 has shipped.'

    Malformed messages (arguments that are not JSON, a call without a name, an
    unknown role) raise :class:`~gradeloop.errors.TranscriptError` naming the
    message index. Give it to :func:`~gradeloop.grade` (and the other graders) as
    the draft or the reference: text checkers read :attr:`final_text`, the
    trajectory checkers the tool calls, the judge :meth:`render`.
    """

    __slots__ = ("_calls", "_final", "_json", "_rendered", "_results", "_steps", "_turns")

    def __init__(self, messages: Sequence[Any], *, source: str = "") -> None:
        if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
            raise TranscriptError(
                f"messages must be a list of message objects, not {type(messages).__name__}",
                source=source,
            )
        text, plain = _dumps(messages, source)
        try:
            turns = read_messages(messages if plain is None else plain)
        except TranscriptError as exc:
            if not source:
                raise
            raise TranscriptError(str(exc), index=exc.index, source=source) from None
        self._json = text
        self._turns = tuple(turns)
        self._calls = tuple(c for t in turns for c in t.tool_calls)
        self._results = tuple(r for t in turns for r in t.tool_results)
        self._steps = sum(1 for t in turns if t.role == "assistant")
        self._final = next(
            (t.text for t in reversed(turns) if t.role == "assistant" and t.text), ""
        )
        self._rendered: str | None = None

    @classmethod
    def from_messages(cls, messages: Sequence[Any], *, source: str = "") -> Transcript:
        """Read a list of messages: dicts or SDK objects, of any shape the class reads.

        ``source`` names where they came from in error messages (a file, a line).
        """
        return cls(messages, source=source)

    @classmethod
    def from_json(cls, data: Any, *, source: str = "") -> Transcript:
        """Read parsed JSON: a list of messages, or an object with a ``"messages"`` list
        (a LangGraph state's dict form, an agentevals ``outputs``)."""
        if isinstance(data, Mapping):
            if "messages" not in data:
                raise TranscriptError(
                    "an object holding a transcript needs a 'messages' list", source=source
                )
            data = data["messages"]
        return cls(data, source=source)

    @classmethod
    def load(cls, path: str | Path) -> Transcript:
        """Read a JSON file holding a message list or ``{"messages": [...]}``. A key
        written twice in one object is an error (JSON readers keep the last value)."""
        return loads(read_utf8(path, "transcript"), source=str(path))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages as given (a fresh copy, JSON data)."""
        value: list[dict[str, Any]] = json.loads(self._json)
        return value

    @property
    def turns(self) -> tuple[Turn, ...]:
        """Each message read: role, text, the tool calls and results it holds."""
        return self._turns

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call, in the order made (a message's calls in their order)."""
        return list(self._calls)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The same calls as :attr:`tool_calls`, as the transcript's own tuple: no
        copy is made (a list is built, and every call in it touched, on each read of
        ``tool_calls``), so it is what a checker that runs on every draft reads."""
        return self._calls

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result, in order."""
        return list(self._results)

    @property
    def final_text(self) -> str:
        """The last assistant text (``""`` when the agent never wrote any)."""
        return self._final

    @property
    def assistant_turns(self) -> int:
        """How many assistant messages there are (what ``step_count`` counts)."""
        return self._steps

    def render(self, *, result_limit: int = RESULT_LIMIT) -> str:
        """The compact text the judge sees: one numbered line per message, its calls
        and results under it, each tool result cut at ``result_limit`` characters."""
        if result_limit != RESULT_LIMIT:
            return render(self._turns, len(self._calls), result_limit=result_limit)
        if self._rendered is None:  # the judge's view: made once, asked for per request
            self._rendered = render(self._turns, len(self._calls), result_limit=RESULT_LIMIT)
        return self._rendered

    def to_json(self) -> dict[str, Any]:
        """``{"messages": [...]}``: what the history stores and :meth:`from_json` reads."""
        return {"messages": self.messages}

    def __len__(self) -> int:
        return len(self._turns)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Transcript):
            return NotImplemented
        return self._json == other._json

    def __hash__(self) -> int:
        return hash(self._json)

    def __repr__(self) -> str:
        return f"<Transcript: {len(self._turns)} messages, {len(self._calls)} tool calls>"


Draft: TypeAlias = str | Transcript | Sequence[Any]
"""What the graders take as a draft or a reference: text, or an agent's messages."""


def as_transcript(value: Any, *, what: str = "draft") -> Transcript | None:
    """``value`` as a Transcript; None for text. A list of messages (or a mapping with
    ``"messages"``) is read, naming ``what`` in its errors; anything else is a TypeError."""
    if isinstance(value, str):
        return None
    if isinstance(value, Transcript):
        return value
    if isinstance(value, Mapping):
        return Transcript.from_json(value, source=what)
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        return Transcript(value, source=what)
    raise TypeError(
        f"{what} must be a string, a Transcript or a list of message dicts, "
        f"not {type(value).__name__}"
    )


def draft_parts(draft: Any, *, what: str = "draft") -> tuple[str, Transcript | None]:
    """``(the text text checkers read, the transcript or None)`` of a draft."""
    if isinstance(draft, str):
        return draft, None
    if isinstance(draft, Transcript):
        return draft.final_text, draft
    transcript = as_transcript(draft, what=what)
    assert transcript is not None
    return transcript.final_text, transcript


def judge_text(draft: Any) -> str:
    """What the judge is shown of a draft: the text, or the transcript rendered."""
    if isinstance(draft, str):
        return draft
    transcript = as_transcript(draft)
    assert transcript is not None
    return transcript.render()


def loads(text: str, *, source: str) -> Transcript:
    """A transcript from JSON text (a file's), strictly: a key written twice in one
    object is an error naming it, never the last value kept."""
    try:
        data = strict_loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"transcript file {source} is not JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    except RecursionError:
        raise InputError(f"transcript file {source} is nested too deeply to read") from None
    except ValueError as exc:
        raise InputError(f"transcript file {source} is ambiguous: {exc}; write it once") from None
    return Transcript.from_json(data, source=source)


def looks_like_messages(data: Any) -> bool:
    """Whether parsed JSON is meant as a transcript: ``{"messages": [...]}``, or a
    non-empty list of objects one of which is a message of a shape that is read
    (a ``role``, a Responses item, a LangChain message). Such data is read as a
    transcript, its errors named; other JSON is data for the JSON checkers."""
    if is_map(data):
        return isinstance(data.get("messages"), list)
    if not isinstance(data, list) or not data or not all(is_map(m) for m in data):
        return False
    return any(_message_shaped(m) for m in data)


def _message_shaped(message: Any) -> bool:
    if message.get("role") in ROLES:
        return True
    t = message.get("type")
    if isinstance(t, str) and (t in CALL_ITEMS or t in OUTPUT_ITEMS or t in ASSISTANT_ITEMS):
        return True
    return langchain_form(message) is not None


def _dumps(messages: Sequence[Any], source: str) -> tuple[str, Any]:
    """The messages as JSON text, and as JSON data when some were objects (SDK
    objects and other pydantic models, made JSON with ``model_dump(mode="json")``;
    None when they were JSON data already and are read as given)."""
    converted = False

    def jsonable(value: Any) -> Any:
        nonlocal converted
        if isinstance(value, BaseModel):
            converted = True
            return value.model_dump(mode="json", warnings=False)
        raise TypeError(f"a {type(value).__name__} is not JSON data")

    try:
        text = json.dumps(list(messages), ensure_ascii=False, allow_nan=False, default=jsonable)
        return text, (json.loads(text) if converted else None)
    except (TypeError, ValueError, RecursionError):
        pass
    for index, message in enumerate(messages):  # only to name the message at fault
        try:
            json.dumps(message, allow_nan=False, default=jsonable)
        except (TypeError, ValueError, RecursionError) as exc:
            raise TranscriptError(
                f"message {index} holds a value that is not JSON data ({exc})",
                index=index,
                source=source,
            ) from None
    raise TranscriptError("the messages are not JSON data", source=source)
