"""Sending a judge request through the SDK client's own HTTP path, and reading the
reply's JSON without the SDK's models.

``client.messages.parse`` costs about as much CPU as the HTTP exchange itself: it
walks the parameters, then builds a pydantic ``ParsedMessage`` that the judge only
reads three fields of. Grading many drafts at once is bound by that CPU (the GIL),
so a client that is the SDK's own (``anthropic.Anthropic`` / ``AsyncAnthropic``)
is sent the request body as it is through ``client.post("/v1/messages", ...)``, the
SDK's documented path for raw requests: the SDK still adds the key, base URL,
headers and timeout, retries (honouring ``retry-after``), runs its middleware (the
pacing of :mod:`._pacing`) and raises its typed errors for non-2xx answers. Only
the reading of a 2xx answer is gradeloop's: :func:`read_message` turns its JSON
into a :class:`RawReply`, which :func:`~._reply.first_text` and
:class:`~._usage.Usage` read as they read an SDK ``Message``.

Anything else (fakes, cassettes, other SDK-like clients) keeps ``messages.parse``.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RawBlock", "RawReply", "apost_message", "post_message", "raw_client", "read_message"]

_PATH = "/v1/messages"


@dataclass(frozen=True)
class RawBlock:
    """One content block of a reply: its ``type`` and, for text blocks, ``text``."""

    type: Any
    text: Any = None


@dataclass(frozen=True)
class RawReply:
    """The fields of a Messages-API reply that gradeloop reads, from its JSON."""

    id: Any
    model: Any
    stop_reason: Any
    stop_details: Any
    content: tuple[RawBlock, ...]
    usage: Any


def read_message(data: bytes | str) -> RawReply:
    """The reply in a 2xx answer's body; ``ValueError`` when it is not a Messages-API
    message (not JSON, not an object, or neither ``content`` nor ``stop_reason``).

    The envelope is read as leniently as the SDK reads it (missing fields are None);
    the verdict inside the text block is read strictly later, by the wire spec.
    """
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError(f"the answer is JSON but not an object ({type(obj).__name__})")
    if "content" not in obj and "stop_reason" not in obj:
        raise ValueError("the answer is a JSON object without 'content' or 'stop_reason'")
    raw_content = obj.get("content")
    blocks = tuple(
        RawBlock(b.get("type"), b.get("text")) if isinstance(b, dict) else RawBlock(None)
        for b in (raw_content if isinstance(raw_content, list) else ())
    )
    usage = obj.get("usage")
    return RawReply(
        id=obj.get("id"),
        model=obj.get("model"),
        stop_reason=obj.get("stop_reason"),
        stop_details=obj.get("stop_details"),
        content=blocks,
        usage=usage if isinstance(usage, dict) else None,
    )


def raw_client(client: Any) -> bool:
    """Whether ``client`` is the SDK's own sync or async client (the SDK imported)."""
    sdk = sys.modules.get("anthropic")
    return sdk is not None and isinstance(client, (sdk.Anthropic, sdk.AsyncAnthropic))


def _body_and_options(client: Any, request: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """The JSON body ``messages.parse(**request)`` would send, and its request options
    (the timeout the SDK picks for a non-streaming call, and its deprecation warning)."""
    from anthropic._constants import DEFAULT_TIMEOUT, MODEL_NONSTREAMING_TOKENS
    from anthropic._data.deprecated_models import DEPRECATED_MODELS

    model, max_tokens = request["model"], request["max_tokens"]
    if model in DEPRECATED_MODELS:
        warnings.warn(
            f"The model '{model}' is deprecated and will reach end-of-life on "
            f"{DEPRECATED_MODELS[model]}.",
            DeprecationWarning,
            stacklevel=5,
        )
    body = {k: v for k, v in request.items() if k != "extra_body"}
    body.update(request.get("extra_body") or {})
    options: dict[str, Any] = {}
    if client.timeout == DEFAULT_TIMEOUT:
        # raises ValueError for a max_tokens too large to wait for, as parse() does
        options["timeout"] = client._calculate_nonstreaming_timeout(
            max_tokens, MODEL_NONSTREAMING_TOKENS.get(model)
        )
    return body, options


def _payload(body: dict[str, Any]) -> dict[str, Any]:
    """``client.post`` arguments for ``body``: serialized here as the SDK serializes it
    (compact UTF-8 JSON), which spares the SDK's deep copy of the body; a value plain
    JSON cannot hold (a datetime in ``extra_body``) is left to the SDK's encoder."""
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return {"body": body}
    return {"content": text.encode()}


def post_message(client: Any, request: Mapping[str, Any]) -> RawReply:
    """Send ``request`` (``messages.parse`` keyword arguments) through the sync SDK
    ``client``'s own HTTP path; the SDK's errors propagate."""
    body, options = _body_and_options(client, request)
    data = client.post(_PATH, **_payload(body), options=options, cast_to=bytes)
    return read_message(data)


async def apost_message(client: Any, request: Mapping[str, Any]) -> RawReply:
    """:func:`post_message` on an ``AsyncAnthropic`` client."""
    body, options = _body_and_options(client, request)
    data = await client.post(_PATH, **_payload(body), options=options, cast_to=bytes)
    return read_message(data)
