"""A small chat-completions emulator, spoken to by the real ``openai`` client.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 (any other path is a JSON
404), records every request, and answers from a script. A queued item is one of:

* a ``dict`` from :func:`chat` (or any chat-completion body): the emulator fills in
  the id, the requested model and usage counted from the request;
* an :class:`OAIError`: an OpenAI-style error body with a status and headers
  (``retry-after-ms: 1`` by default, so the client's retries are quick);
* a callable ``(request_body) -> item``.

With the queue empty, ``responder`` answers; without one, a 500 that says the
script ran out (``x-should-retry: false``).

Like a server that enforces ``response_format`` strictly, it refuses (400) a
``json_schema`` whose objects do not all list every property as required and set
``additionalProperties: false``: OpenAI's strict mode demands both.

Usage is counted at four characters a token. Prefix caching is automatic, as on
OpenAI-compatible servers: a system message of at least ``cache_min_tokens``
seen before is reported as ``prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.emulator import Scripted, ScriptedHandler

if TYPE_CHECKING:  # imported when first used, as in tests/support/emulator.py
    import openai

__all__ = ["OAIEmulator", "OAIError", "chat", "oai_emulator", "verdict_chat"]


@dataclass(frozen=True)
class OAIError:
    """A scripted error response."""

    status: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})

    def body(self) -> dict[str, Any]:
        kind = {400: "invalid_request_error", 429: "rate_limit_exceeded"}.get(
            self.status, "server_error"
        )
        return {"error": {"message": self.message, "type": kind, "param": None, "code": None}}


def chat(
    content: str | None = "ok", *, finish_reason: str | None = "stop", refusal: str | None = None
) -> dict[str, Any]:
    """A chat-completion body with one choice."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return {
        "object": "chat.completion",
        "created": 0,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


def verdict_chat(data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A chat completion whose content is ``data`` as JSON."""
    return chat(json.dumps(data), **kwargs)


def strict_problem(schema: Any, where: str = "schema") -> str | None:
    """Why a schema would be refused by a strict json_schema endpoint, or None."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            props = list((schema.get("properties") or {}).keys())
            if schema.get("additionalProperties") is not False:
                return f"{where}: additionalProperties must be false in strict mode"
            if sorted(schema.get("required") or []) != sorted(props):
                return f"{where}: every property must be required in strict mode"
        for name, value in schema.items():
            problem = strict_problem(value, f"{where}.{name}")
            if problem:
                return problem
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            problem = strict_problem(value, f"{where}[{i}]")
            if problem:
                return problem
    return None


class OAIEmulator(Scripted):
    """The server, its script and its records. Use the ``oai_emulator`` fixture."""

    _error = OAIError
    _literals = (OAIError,)
    _api_path = "/v1"  # the openai SDK's base_url includes the version

    def __init__(self, *, cache_min_tokens: int = 256) -> None:
        super().__init__()
        self.cache_min_tokens = cache_min_tokens
        self._seen: set[str] = set()
        self._serve(ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self)))

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat-completions requests, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def client(self, **kwargs: Any) -> openai.OpenAI:
        """A real ``openai.OpenAI`` pointed at this emulator (closed at teardown)."""
        import openai

        kwargs.setdefault("api_key", "test-key")
        client = openai.OpenAI(base_url=self.base_url, **kwargs)
        self._clients.append(client)
        return client

    def answer(self, body: Any) -> tuple[int, dict[str, str], dict[str, Any]]:
        problem = _invalid(body)
        if problem:
            return 400, {}, OAIError(400, problem).body()
        item = self._next(body)
        if isinstance(item, OAIError):
            return item.status, dict(item.headers), item.body()
        if not isinstance(item, dict):
            raise TypeError(f"emulator cannot send {type(item).__name__}")
        out = json.loads(json.dumps(item))
        out.setdefault("id", f"chatcmpl-emulated-{len(self.requests):04d}")
        out["model"] = body["model"]
        out.setdefault("usage", self._usage(body, out))
        return 200, {}, out

    def _usage(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
        system = "".join(str(m.get("content")) for m in messages if m.get("role") == "system")
        cached = 0
        if len(system) // 4 >= self.cache_min_tokens:
            with self._lock:
                if system in self._seen:
                    cached = len(system) // 4
                self._seen.add(system)
        content = "".join(
            str((c.get("message") or {}).get("content") or "") for c in reply.get("choices", [])
        )
        completion = max(1, len(content) // 4)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }


def _invalid(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    for name in ("model", "messages"):
        if name not in body:
            return f"'{name}' is a required property"
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        if not isinstance(spec.get("name"), str) or not spec["name"]:
            return "response_format.json_schema.name is required"
        if spec.get("strict") is True:
            return strict_problem(spec.get("schema"))
    return None


def _handler_for(emulator: OAIEmulator) -> type[BaseHTTPRequestHandler]:
    class Handler(ScriptedHandler):
        def do_POST(self) -> None:
            body = self._read()
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._no_route()
                return
            self._answer(body)

    Handler.emulator = emulator
    return Handler


@pytest.fixture
def oai_emulator() -> Iterator[OAIEmulator]:
    """A running chat-completions emulator; shut down after the test."""
    server = OAIEmulator()
    try:
        yield server
    finally:
        server.close()
