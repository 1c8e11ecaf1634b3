"""Reading a chat-completions reply: why it stopped first, then its text and usage.

The OpenAI-compatible twin of :mod:`gradeloop.models._reply`, with the same
failure types, so a judge or generator on an open-model server fails the way it
fails on the Messages API:

==================================  ==========================================
what the reply says                 outcome
==================================  ==========================================
``message.refusal`` set             ``declined`` (``reason="refusal"``)
``finish_reason == "content_filter"`` ``declined`` (``reason="refusal"``)
``finish_reason == "length"``       ``max_tokens`` (``reason="max_tokens"``)
``tool_calls`` / ``function_call``  ``no text block`` (gradeloop offers no tools)
no choices, or empty content        ``no text block`` (``reason="no_text"``)
anything else with content          the content is the answer
==================================  ==========================================

``finish_reason`` values other than these (local servers send ``"eos"`` or
nothing) are read as finished when there is content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import NotAnAnswer

__all__ = ["ChatReply", "chat_reply", "chat_text"]


@dataclass(frozen=True)
class ChatReply:
    """A chat completion seen through the Messages-API names the usage records read.

    ``usage`` uses the Anthropic field names: ``input_tokens`` is the prompt less
    its cached part, ``cache_read_input_tokens`` the cached part (servers report it
    in ``prompt_tokens_details.cached_tokens``), ``output_tokens`` the completion.
    """

    model: str | None
    stop_reason: str | None
    usage: dict[str, int] = field(default_factory=dict)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def chat_reply(completion: Any) -> ChatReply:
    """The model, finish reason and usage of a chat completion (zeros where absent)."""
    choices = _get(completion, "choices") or []
    finish = _get(choices[0], "finish_reason") if choices else None
    raw = _get(completion, "usage")
    usage: dict[str, int] = {}
    if raw is not None:
        prompt = _int(_get(raw, "prompt_tokens"))
        details = _get(raw, "prompt_tokens_details")
        cached = min(_int(_get(details, "cached_tokens")) if details is not None else 0, prompt)
        usage = {
            "input_tokens": prompt - cached,
            "output_tokens": _int(_get(raw, "completion_tokens")),
            "cache_read_input_tokens": cached,
        }
    model = _get(completion, "model")
    return ChatReply(model if isinstance(model, str) else None, finish, usage)


def chat_text(completion: Any) -> str:
    """The answer text of a chat completion, or raise :class:`NotAnAnswer`."""
    choices = _get(completion, "choices") or []
    if not choices:
        raise NotAnAnswer(
            "no text block in the reply: it has no choices; the server produced no answer",
            reason="no_text",
        )
    choice = choices[0]
    message = _get(choice, "message")
    finish = _get(choice, "finish_reason")
    refusal = _get(message, "refusal") if message is not None else None
    if isinstance(refusal, str) and refusal.strip():
        raise NotAnAnswer(
            f"the model declined to answer (refusal: {refusal.strip()})", reason="refusal"
        )
    if finish == "content_filter":
        raise NotAnAnswer(
            "the model declined to answer: the server's content filter stopped the reply "
            "(finish_reason=content_filter)",
            reason="refusal",
        )
    if finish == "length":
        cut = _get(message, "content") if message is not None else None
        raise NotAnAnswer(
            "the reply was cut off at max_tokens before it was finished (finish_reason="
            "length); raise max_tokens or split the task into smaller pieces",
            reason="max_tokens",
            text=cut if isinstance(cut, str) and cut.strip() else None,
        )
    if finish in ("tool_calls", "function_call"):
        raise NotAnAnswer(
            f"no text block holds a finished answer: the model asked to call a tool "
            f"({finish}), and gradeloop offers none",
            reason="no_text",
        )
    content = _get(message, "content") if message is not None else None
    if not isinstance(content, str) or not content.strip():
        raise NotAnAnswer(
            f"no text block in the reply: the message content is empty (finish_reason="
            f"{finish!r}); the model produced no answer text",
            reason="no_text",
        )
    return content
