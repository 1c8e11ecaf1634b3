"""The digest of a Messages-API request: what the verdict cache (and test cassettes)
key replies by.

Two requests with the same digest must get the same reply from the same model, so
everything that can change the reply is in it: the model, the system text, the
messages, ``output_config`` (the wire schema), ``max_tokens``, and every other body
parameter, ``extra_body`` included (sampling and thinking settings go there). What
cannot change the reply is left out: ``cache_control`` markers (prompt caching is
billing, not content), and transport options (``extra_headers``, ``extra_query``,
``timeout``, ``metadata``, ``stream``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["DIGEST_VERSION", "request_digest"]

#: Bumped when the digest's recipe changes, so old entries stop matching.
DIGEST_VERSION = 1

_TRANSPORT = frozenset({"extra_headers", "extra_query", "timeout", "metadata", "stream"})


def request_digest(request: Mapping[str, Any], *, sample: int = 0) -> str:
    """A SHA-256 hex digest of what determines the reply to ``request``.

    ``request`` is the keyword arguments of ``messages.create``/``parse`` (or a batch
    request's ``params``). ``sample`` tells apart independent samples of the same
    request (0 is the plain request): ``k`` samples are ``k`` different keys.
    """
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise ValueError(f"sample must be an integer >= 0, not {sample!r}")
    material = {name: value for name, value in request.items() if name not in _TRANSPORT}
    for name in ("system", "tools"):
        if isinstance(material.get(name), list):
            material[name] = [_block(b) for b in material[name]]
    if isinstance(material.get("messages"), list):
        material["messages"] = [_message(m) for m in material["messages"]]
    material["digest_version"] = DIGEST_VERSION
    if sample:
        material["sample"] = sample
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _block(block: Any) -> Any:
    """A content block, tool or system block without its ``cache_control`` marker."""
    if isinstance(block, Mapping):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _message(message: Any) -> Any:
    if isinstance(message, Mapping) and isinstance(message.get("content"), list):
        return {**message, "content": [_block(b) for b in message["content"]]}
    return message
