"""Reading a Messages-API reply safely: why it stopped first, then its text.

A reply is only a finished answer when it stopped for a finishing reason *and*
holds a text block. Everything else raises :class:`~gradeloop.errors.NotAnAnswer`
with a message a person can act on:

==================================  ==========================================
``stop_reason``                     outcome
==================================  ==========================================
``end_turn``, ``stop_sequence``,    the first non-blank ``text`` block, found
missing (hand-made fakes)           by ``block.type`` and never by position
``refusal``                         ``declined`` + category and explanation
``max_tokens``                      ``max_tokens`` + how to fix it
``model_context_window_exceeded``   treated as truncation (``reason="max_tokens"``)
``pause_turn``                      a server-tool turn that was paused: the text
                                    so far is not final (``reason="no_text"``)
``tool_use`` and unknown reasons    not an answer (``reason="no_text"``): gradeloop
                                    offers no tools, so the turn is unfinished
==================================  ==========================================
"""

from __future__ import annotations

from typing import Any

from ..errors import NotAnAnswer

__all__ = ["FINISHED", "UNREADABLE", "first_text", "unreadable"]

#: Stop reasons after which the text in a reply is the whole answer. ``None`` is
#: here because simple fakes often leave the field out.
FINISHED = frozenset({"end_turn", "stop_sequence", None})


#: What an SDK raises while reading a server's answer that is not an API response at
#: all (an HTML page, cut-off JSON, the wrong JSON): a reply, but not an answer.
UNREADABLE = (ValueError, TypeError, AttributeError)


def unreadable(exc: BaseException, api: str = "Messages API") -> NotAnAnswer:
    """The :class:`NotAnAnswer` for a server's answer the SDK could not read."""
    return NotAnAnswer(
        f"no text block: the server's answer is not a {api} response "
        f"({type(exc).__name__}: {str(exc)[:200]}); is the base URL a {api} server?",
        reason="no_text",
    )


def first_text(reply: Any) -> str:
    """Return the answer text of ``reply``, or raise :class:`NotAnAnswer`.

    Works with :class:`anthropic.types.Message` and with any object exposing
    ``stop_reason`` and ``content`` (blocks with ``.type``; a non-text block need
    not have ``.text`` at all).
    """
    if not (hasattr(reply, "content") or hasattr(reply, "stop_reason")):
        raise NotAnAnswer(
            "no text block: the server's answer is not a Messages API message (a "
            f"{type(reply).__name__}); is the base URL a Messages API server?",
            reason="no_text",
        )
    stop = getattr(reply, "stop_reason", None)
    if stop == "refusal":
        details = getattr(reply, "stop_details", None)
        raise NotAnAnswer(
            f"the model declined to answer{_describe_refusal(details)}",
            reason="refusal",
            stop_details=details,
        )
    if stop == "max_tokens":
        raise NotAnAnswer(
            "the reply was cut off at max_tokens before it was finished; raise max_tokens "
            "or split the task into smaller pieces",
            reason="max_tokens",
            text=_text_of(getattr(reply, "content", None)),
        )
    if stop == "model_context_window_exceeded":
        raise NotAnAnswer(
            "the reply was cut off because the model's context window filled up "
            "(model_context_window_exceeded), like a max_tokens stop; shorten the input "
            "or split the task into smaller pieces",
            reason="max_tokens",
        )
    if stop not in FINISHED:
        raise NotAnAnswer(_unfinished(stop), reason="no_text")
    text = _text_of(getattr(reply, "content", None))
    if text is None:
        kinds = _block_kinds(getattr(reply, "content", None))
        raise NotAnAnswer(
            f"no text block in the reply (stop_reason={stop!r}, blocks: {kinds}); "
            "the model produced no answer text",
            reason="no_text",
        )
    return text


def _text_of(content: Any) -> str | None:
    for block in content or ():
        if getattr(block, "type", None) != "text":
            continue
        text = getattr(block, "text", None)
        # An empty text block is not an answer; a later one may be.
        if isinstance(text, str) and text.strip():
            return text
    return None


def _block_kinds(content: Any) -> str:
    kinds = [str(getattr(block, "type", "?")) for block in content or ()]
    return ", ".join(kinds) if kinds else "none"


def _unfinished(stop: object) -> str:
    if stop == "pause_turn":
        why = "the model paused a long-running turn (pause_turn); gradeloop does not resume it"
    elif stop == "tool_use":
        why = "the model asked to use a tool (tool_use), and gradeloop offers none"
    else:
        why = f"the reply stopped for a reason gradeloop does not read as finished ({stop!r})"
    return f"no text block holds a finished answer: {why}"


def _describe_refusal(details: Any) -> str:
    if details is None:
        return " (no stop_details given)"
    category = _field(details, "category")
    explanation = _field(details, "explanation")
    parts = []
    if category:
        parts.append(f"category: {category}")
    if explanation:
        parts.append(f"explanation: {explanation}")
    return f" ({'; '.join(parts)})" if parts else " (stop_details has no category)"


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)
