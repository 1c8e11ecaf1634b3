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
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

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


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class OAIEmulator:
    """The server, its script and its records. Use the ``oai_emulator`` fixture."""

    def __init__(self, *, cache_min_tokens: int = 256) -> None:
        self.cache_min_tokens = cache_min_tokens
        self.requests: list[Request] = []
        self.responder: Callable[[dict[str, Any]], Any] | None = None
        self._queue: deque[Any] = deque()
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._clients: list[openai.OpenAI] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat-completions requests, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def enqueue(self, *items: Any) -> None:
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        return len(self._queue)

    def client(self, **kwargs: Any) -> openai.OpenAI:
        """A real ``openai.OpenAI`` pointed at this emulator (closed at teardown)."""
        kwargs.setdefault("api_key", "test-key")
        client = openai.OpenAI(base_url=self.base_url, **kwargs)
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _next(self, body: dict[str, Any]) -> Any:
        with self._lock:
            item = self._queue.popleft() if self._queue else self.responder
        if item is None:
            return OAIError(
                500, "emulator: no reply queued for this request", {"x-should-retry": "false"}
            )
        if callable(item) and not isinstance(item, OAIError):
            item = item(body)
        return item

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
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, headers: dict[str, str], body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode(errors="replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            with emulator._lock:
                emulator.requests.append(Request(self.command, self.path, headers, body))
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._send(404, {}, OAIError(404, f"no route {self.path}").body())
                return
            try:
                self._send(*emulator.answer(body))
            except Exception as exc:  # a broken script shows up as a failed request
                self._send(
                    500,
                    {"x-should-retry": "false"},
                    OAIError(500, f"emulator error: {exc!r}").body(),
                )

    return Handler


@pytest.fixture
def oai_emulator() -> Iterator[OAIEmulator]:
    """A running chat-completions emulator; shut down after the test."""
    server = OAIEmulator()
    try:
        yield server
    finally:
        server.close()
