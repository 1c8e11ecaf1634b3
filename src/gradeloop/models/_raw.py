"""Sending a judge request through the SDK client's own HTTP path, and reading the
reply's JSON without the SDK's models.

``client.messages.parse`` costs about as much CPU as the HTTP exchange itself: it
walks the parameters, then builds a pydantic ``ParsedMessage`` that the judge only
reads three fields of. Grading many drafts at once is bound by that CPU (the GIL),
so a client that is the SDK's own (``anthropic.Anthropic`` / ``AsyncAnthropic``)
is sent the request body as it is through ``client.post("/v1/messages", ...)``, the
SDK's documented path for raw requests: the SDK still adds the key, base URL,
headers and timeout, retries (honouring ``retry-after``), runs its middleware (the
pacing of :mod:`._pacing`), opens its OpenTelemetry span (named as
``messages.create``'s, with the request's and the reply's attributes, except the
summed ``gen_ai.usage.input_tokens`` and content-mode message content, which it
records only for calls that return its ``Message`` model; gradeloop's own ``chat``
span has the input tokens) and raises its typed errors for non-2xx answers; it
decodes the JSON but builds no model (``cast_to=object``). Two more savings, each
taken only when nothing can tell the difference: the span is asked for only when it
could be recorded or carry a trace context (a tracer provider is configured, or a
span is current), and the body goes as the JSON bytes the SDK's own encoder would
write when no middleware but gradeloop's pacing reads it as data (the SDK would
otherwise deep-copy it first). Only the reading of a
2xx answer is gradeloop's: :func:`read_message` turns its JSON
into a :class:`RawReply`, which :func:`~._reply.first_text` and
:class:`~._usage.Usage` read as they read an SDK ``Message``.

Anything else (fakes, cassettes, other SDK-like clients) keeps ``messages.parse``.
"""

from __future__ import annotations

import functools
import json
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._pacing import apace, pace

__all__ = [
    "RawBlock",
    "RawReply",
    "apost_message",
    "post_message",
    "raw_client",
    "read_message",
    "wire_body",
]

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


def read_message(data: object) -> RawReply:
    """The reply in a 2xx answer's body (decoded JSON, or its text when the server did
    not call it JSON); ``ValueError`` when it is not a Messages-API message (not JSON,
    not an object, or neither ``content`` nor ``stop_reason``).

    The envelope is read as leniently as the SDK reads it (missing fields are None);
    the verdict inside the text block is read strictly later, by the wire spec.
    """
    obj = json.loads(data) if isinstance(data, (str, bytes)) else data
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


def wire_body(request: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body ``messages.parse(**request)`` sends: the request's parameters with
    ``extra_body``'s merged in (as a Message Batch request's ``params`` hold them)."""
    body = {k: v for k, v in request.items() if k != "extra_body"}
    body.update(request.get("extra_body") or {})
    return body


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
    body = wire_body(request)
    options: dict[str, Any] = dict(_span_options()) if _spans_recorded(client) else {}
    if client.timeout == DEFAULT_TIMEOUT:
        # raises ValueError for a max_tokens too large to wait for, as parse() does
        options["timeout"] = client._calculate_nonstreaming_timeout(
            max_tokens, MODEL_NONSTREAMING_TOKENS.get(model)
        )
    return body, options


@functools.lru_cache(maxsize=1)
def _span_options() -> dict[str, Any]:
    """The options that give the request the SDK's own OpenTelemetry span, named and
    attributed as ``messages.create``'s (none with an SDK that has no such span)."""
    try:
        from anthropic.lib._tracing._api_call import messages_create_request_attributes
    except ImportError:
        return {}
    return {
        "span_name": "anthropic.messages.create",
        "span_route": _PATH,
        "span_attributes": messages_create_request_attributes,
    }


def _spans_recorded(client: Any) -> bool:
    """Whether the SDK's span of a call on ``client`` could be recorded or propagate a
    trace context. Not when the client has no tracer, nor when its tracer is the
    OpenTelemetry API's proxy while no provider is configured and no span is current:
    then the SDK would still build the span's attributes (about a tenth of the
    request's CPU) for a span that goes nowhere."""
    if not _span_options():
        return False
    tracer = getattr(client, "_tracer", _UNKNOWN)
    if tracer is None:
        return False
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or not isinstance(tracer, trace.ProxyTracer):
        return True  # a real tracer (the client's own provider), or one we cannot tell
    return (
        not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
        or trace.get_current_span().get_span_context().is_valid
    )


_UNKNOWN = object()
# the SDK's own encoding of a body (anthropic._utils._json), for plain JSON data
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _send_args(client: Any, body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``client.post``'s body arguments: the JSON already encoded (``content``) when
    nothing reads the body as data on the way (no span to fill from it, no middleware
    but gradeloop's pacing), which spares the SDK's deep copy of it; else the body
    for the SDK to copy and encode (as it must for anything plain JSON cannot hold)."""
    if "span_name" not in options and all(
        m is pace or m is apace for m in getattr(client, "middleware", None) or ()
    ):
        try:
            content = _ENCODER.encode(body).encode()
        except (TypeError, ValueError):
            pass
        else:
            return {"content": content}
    return {"body": body}


def post_message(client: Any, request: Mapping[str, Any]) -> RawReply:
    """Send ``request`` (``messages.parse`` keyword arguments) through the sync SDK
    ``client``'s own HTTP path; the SDK's errors propagate."""
    body, options = _body_and_options(client, request)
    sent = _send_args(client, body, options)
    return read_message(client.post(_PATH, options=options, cast_to=object, **sent))


async def apost_message(client: Any, request: Mapping[str, Any]) -> RawReply:
    """:func:`post_message` on an ``AsyncAnthropic`` client."""
    body, options = _body_and_options(client, request)
    sent = _send_args(client, body, options)
    return read_message(await client.post(_PATH, options=options, cast_to=object, **sent))
