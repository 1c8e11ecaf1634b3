"""A scripted stand-in for ``anthropic.Anthropic``. No key, no network.

Use it to test code built on :class:`~gradeloop.AnthropicGenerator` and
:class:`~gradeloop.AnthropicJudge`::

    from gradeloop import AnthropicGenerator
    from gradeloop.testing import ScriptedClient, refusal, text_reply

    client = ScriptedClient(text_reply("first draft"), refusal(category="cyber"))
    gen = AnthropicGenerator(client=client)
    assert gen.generate("write it") == "first draft"
    # the second call raises NotAnAnswer("the model declined ...")
    assert client.calls[0]["messages"][0]["content"] == "write it"

The reply helpers build real :class:`anthropic.types.Message` objects (with a
usage block), so code under test sees what the SDK would hand it. The client does
not retry: an :func:`api_error` item is raised as if the SDK's retries were
already used up. ``messages.parse`` returns the queued reply as it is; it does not
parse an ``output_format`` (gradeloop sends ``output_config`` itself).
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

__all__ = [
    "ScriptedClient",
    "api_error",
    "refusal",
    "text_reply",
    "thinking_only",
    "truncated",
    "verdict_reply",
]

#: The model name the helpers put in a reply; ScriptedClient swaps in the model
#: that was asked for, as a real server echoes it.
PLACEHOLDER_MODEL = "scripted-model"

Responder = Callable[[dict[str, Any]], Any]
_ids = itertools.count(1)


def _message(
    content: list[dict[str, Any]],
    stop_reason: str,
    *,
    output_tokens: int,
    input_tokens: int = 25,
    stop_details: Mapping[str, Any] | None = None,
    model: str | None = None,
) -> Message:
    body: dict[str, Any] = {
        "id": f"msg_scripted_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model or PLACEHOLDER_MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
    if stop_details is not None:
        body["stop_details"] = dict(stop_details)
    return Message.model_validate(body)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def text_reply(
    text: str,
    *,
    stop_reason: str = "end_turn",
    model: str | None = None,
    input_tokens: int = 25,
    output_tokens: int | None = None,
    thinking: str | None = None,
) -> Message:
    """A reply holding ``text`` (after a thinking block, if ``thinking`` is given)."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig-scripted"})
    content.append({"type": "text", "text": text})
    used = output_tokens if output_tokens is not None else _tokens(text + (thinking or ""))
    return _message(
        content, stop_reason, output_tokens=used, input_tokens=input_tokens, model=model
    )


def refusal(category: str | None = None, explanation: str | None = None) -> Message:
    """A refusal as the API sends it: HTTP 200, empty content, ``stop_details``."""
    details = {"type": "refusal", "category": category, "explanation": explanation}
    return _message([], "refusal", output_tokens=1, stop_details=details)


def truncated(text: str = "half a dra") -> Message:
    """A reply cut off by ``max_tokens``: partial text, ``stop_reason="max_tokens"``."""
    return text_reply(text, stop_reason="max_tokens")


def thinking_only(thinking: str = "Let me think about the task first.") -> Message:
    """A reply whose only block is a thinking block: there is no text to read."""
    block = {"type": "thinking", "thinking": thinking, "signature": "sig-scripted"}
    return _message([block], "end_turn", output_tokens=_tokens(thinking))


def verdict_reply(data: Mapping[str, Any], **kwargs: Any) -> Message:
    """A judge reply whose text is ``data`` as JSON (what structured output returns)."""
    return text_reply(json.dumps(dict(data)), **kwargs)


_ERROR_TYPES = {
    400: (anthropic.BadRequestError, "invalid_request_error"),
    401: (anthropic.AuthenticationError, "authentication_error"),
    403: (anthropic.PermissionDeniedError, "permission_error"),
    404: (anthropic.NotFoundError, "not_found_error"),
    409: (anthropic.ConflictError, "conflict_error"),
    413: (anthropic.ContentTooLargeError, "request_too_large"),
    422: (anthropic.UnprocessableEntityError, "invalid_request_error"),
    429: (anthropic.RateLimitError, "rate_limit_error"),
    500: (anthropic.InternalServerError, "api_error"),
    503: (anthropic.ServiceUnavailableError, "api_error"),
    529: (anthropic.OverloadedError, "overloaded_error"),
}


def api_error(status: int = 500, message: str | None = None) -> anthropic.APIStatusError:
    """The SDK exception for HTTP ``status`` (429 -> ``RateLimitError``, 529 ->
    ``OverloadedError``, ...). Queue it and the call raises it."""
    cls, kind = _ERROR_TYPES.get(
        status,
        (anthropic.InternalServerError if status >= 500 else anthropic.APIStatusError, "api_error"),
    )
    text = message or f"scripted {kind} ({status})"
    body = {"type": "error", "error": {"type": kind, "message": text}}
    # never sent: the SDK exception only needs a request to carry
    request = httpx2.Request("POST", "https://scripted.invalid/v1/messages")
    response = httpx2.Response(status, request=request, json=body)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


class ScriptedClient:
    """A stand-in for :class:`anthropic.Anthropic` that answers from a queue.

    ``messages.create(**kw)`` and ``messages.parse(**kw)`` record ``kw`` in
    ``.calls`` (and the method name in ``.methods``), then take the next queued
    item: a reply is returned, an exception is raised, a callable is called with
    the kwargs and its result returned. With the queue empty, ``responder`` (if
    given) answers; otherwise the call fails with an AssertionError naming it.
    """

    def __init__(self, *replies: Any, responder: Responder | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.methods: list[str] = []
        self.responder = responder
        self._queue: deque[Any] = deque(replies)
        self.messages = _ScriptedMessages(self)

    def enqueue(self, *replies: Any) -> None:
        """Add replies (or exceptions, or callables) to the end of the queue."""
        self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many queued items have not been used yet."""
        return len(self._queue)

    def _answer(self, method: str, kwargs: dict[str, Any]) -> Any:
        self.calls.append(dict(kwargs))
        self.methods.append(method)
        number = len(self.calls)
        if self._queue:
            item = self._queue.popleft()
        elif self.responder is not None:
            item = self.responder
        else:
            raise AssertionError(
                f"ScriptedClient: call #{number} (messages.{method}) found no reply queued; "
                f"enqueue one more reply or pass responder="
            )
        if isinstance(item, BaseException):
            raise item
        if callable(item) and not isinstance(item, Message):
            item = item(dict(kwargs))
            if isinstance(item, BaseException):
                raise item
        if isinstance(item, Message) and item.model == PLACEHOLDER_MODEL and "model" in kwargs:
            item = item.model_copy(update={"model": kwargs["model"]})
        return item


class _ScriptedMessages:
    """The ``client.messages`` namespace of :class:`ScriptedClient`."""

    def __init__(self, owner: ScriptedClient) -> None:
        self._owner = owner

    def create(self, **kwargs: Any) -> Any:
        """Record the request and return the next scripted reply."""
        return self._owner._answer("create", kwargs)

    def parse(self, **kwargs: Any) -> Any:
        """Record the request and return the next scripted reply (not parsed)."""
        return self._owner._answer("parse", kwargs)
