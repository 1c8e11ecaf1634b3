"""Reading a Messages-API reply's JSON without the SDK's models.

The SDK's ``Message`` is a pydantic model of every field of a reply; the judge reads
three of them (why it stopped, the text, the usage) and building the model costs
about a fifth of a request's client CPU, which is what a batch of drafts is bound by.
The Messages-API adapter (:mod:`._messages_api`) therefore sends through the SDK's
public ``messages.with_raw_response.create`` (everything about the request is still
the SDK's) and :func:`read_message` reads the answer's body into a :class:`RawReply`,
which :func:`~._reply.first_text` and :class:`~._usage.Usage` read as they read an
SDK ``Message``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RawBlock", "RawReply", "raw_client", "read_message", "wire_body"]


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
