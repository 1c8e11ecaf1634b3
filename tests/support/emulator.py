"""A small Messages-API emulator for tests, spoken to by the real ``anthropic`` client.

It serves ``POST /v1/messages`` on 127.0.0.1 (any other path is a JSON 404), records
every request, and answers from a script. A queued item is one of:

* an :class:`anthropic.types.Message` (build them with :mod:`gradeloop.testing`:
  ``text_reply``, ``refusal``, ``truncated``, ``thinking_only``, ``verdict_reply``);
  the emulator fills in the id, the requested model and plausible usage;
* a ``dict``: sent as the JSON body as it is (for block types the SDK lacks);
* an :class:`HTTPError`: an Anthropic-style error body with a status and headers
  (``retry-after-ms: 1`` by default, so the client's retries are quick);
* a callable ``(request_body) -> item``.

With the queue empty, ``responder`` answers (for long runs); without one, the
emulator replies 500 with a message saying the script ran out, and
``x-should-retry: false`` so the client gives up at once.

Usage is counted at four characters a token and honours ``cache_control`` on
system blocks: the first request whose cached prefix reaches ``cache_min_tokens``
reports ``cache_creation_input_tokens``, repeats report ``cache_read_input_tokens``,
and a prefix below the minimum caches nothing - as the real API does, silently.

The Message Batches endpoints (create, retrieve, results, cancel) are served by
``emulator.batches`` (:mod:`tests.support.emulator_batches`).

``keep_alive=True`` speaks HTTP/1.1 and keeps connections open, as the real API
does (benchmarks); by default each answer closes its connection.

``tls`` (an ``ssl.SSLContext`` holding a certificate) serves ``https://`` instead.

``latency`` (seconds) delays every ``/v1/messages`` answer, for benchmarks; the
server's sockets have Nagle's algorithm off, so a reply's header and body writes
are not held back waiting for the client's delayed ACK (40 ms each otherwise).
"""

from __future__ import annotations

import hashlib
import json
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.emulator_batches import BatchDesk

# The SDK is imported when a test first uses the emulator, not here: a pytest process
# that runs no test (xdist's controller) then never spends seconds loading it.
if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

__all__ = [
    "Emulator",
    "HTTPError",
    "Request",
    "Scripted",
    "ScriptedHandler",
    "emulator",
    "http_error",
]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class HTTPError:
    """A scripted error response."""

    status: int
    message: str = "scripted error"
    error_type: str | None = None
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})

    def body(self) -> dict[str, Any]:
        kind = self.error_type or _ERROR_TYPES.get(self.status, "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": self.message},
            "request_id": "req_emulated",
        }


def http_error(status: int, message: str = "scripted error", **headers: str) -> HTTPError:
    """An :class:`HTTPError`; ``headers`` (underscores become dashes) replace the defaults."""
    extra = {k.replace("_", "-"): v for k, v in headers.items()}
    return HTTPError(status, message, headers=extra or {"retry-after-ms": "1"})


@dataclass(frozen=True)
class Request:
    """One request the emulator received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    peer: Any = None  # the client's (host, port): which connection it came on


class Scripted:
    """What this emulator and the chat-completions one (tests/support/oai_emulator.py) share:
    the request log, the script (queue, then ``responder``), the SDK clients to close,
    and a threaded server on 127.0.0.1 (started by :meth:`_serve`)."""

    _error: Callable[..., Any]  # the scripted-error type: (status, message, headers=)
    _literals: tuple[type, ...]  # queued item types that are sent, never called
    _api_path = ""  # what base_url adds to the server's address
    _scheme = "http"

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.responder: Callable[[dict[str, Any]], Any] | None = None
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._clients: list[Any] = []

    def _serve(self, server: ThreadingHTTPServer) -> None:
        self._server = server
        self._server.daemon_threads = True
        # A short poll keeps shutdown (run after every test) quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}{self._api_path}"

    def enqueue(self, *items: Any) -> None:
        """Queue replies, error responses, raw dicts or callables, in order."""
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        return len(self._queue)

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
            return self._error(
                500,
                "emulator: no reply queued for this request",
                headers={"x-should-retry": "false"},
            )
        if callable(item) and not isinstance(item, self._literals):
            item = item(body)
        return item


class Emulator(Scripted):
    """The server, its script and its records. Use the ``emulator`` fixture."""

    _error = HTTPError

    @property
    def _literals(self) -> tuple[type, ...]:  # type: ignore[override]
        from anthropic.types import Message

        return (Message, HTTPError)

    def __init__(
        self,
        *,
        cache_min_tokens: int = 1024,
        latency: float = 0.0,
        keep_alive: bool = False,
        tls: ssl.SSLContext | None = None,
        port: int = 0,
    ) -> None:
        super().__init__()
        self.cache_min_tokens = cache_min_tokens
        self.latency = latency
        self.keep_alive = keep_alive
        # (request body, usage sent) for every reply with a usage block, in answer order
        self.answered: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self._cache: set[str] = set()
        self.batches = BatchDesk(self)
        server = _Server(("127.0.0.1", port), _handler_for(self))
        if tls is not None:  # https://, with the server's certificate from ``tls``
            server.socket = tls.wrap_socket(server.socket, server_side=True)
            self._scheme = "https"
        self._serve(server)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the ``/v1/messages`` requests, in order."""
        return [r.body for r in self.requests if r.path == "/v1/messages"]

    def client(self, **kwargs: Any) -> anthropic.Anthropic:
        """A real ``anthropic.Anthropic`` pointed at this emulator (closed at teardown)."""
        import anthropic

        kwargs.setdefault("api_key", "test-key")
        client = anthropic.Anthropic(base_url=self.base_url, **kwargs)
        self._clients.append(client)
        return client

    # -- answering ---------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Status, headers and JSON body for one ``/v1/messages`` request."""
        problem = _invalid(body)
        if problem:
            return 400, {}, HTTPError(400, problem).body()
        item = self._next(body)
        if isinstance(item, HTTPError):
            return item.status, dict(item.headers), item.body()
        if isinstance(item, dict):
            return 200, {}, item
        from anthropic.types import Message

        if not isinstance(item, Message):
            raise TypeError(f"emulator cannot send {type(item).__name__}")
        out = item.to_dict(mode="json")
        out["id"] = f"msg_emulated_{len(self.requests):04d}"
        out["model"] = body["model"]
        out["usage"] = self._usage(body, item)
        with self._lock:
            self.answered.append((body, out["usage"]))
        return 200, {"request-id": "req_emulated"}, out

    def _usage(self, body: dict[str, Any], reply: Message) -> dict[str, Any]:
        total = _tokens(_prompt_text(body))
        prefix, ttl = _cached_prefix(body)
        cached = _tokens(prefix) if prefix else 0
        created = read = 0
        if cached >= self.cache_min_tokens:
            digest = hashlib.sha256(prefix.encode()).hexdigest()
            with self._lock:
                seen = digest in self._cache
                self._cache.add(digest)
            read, created = (cached, 0) if seen else (0, cached)
        out_text = "".join(
            getattr(b, "text", "") or getattr(b, "thinking", "") or "" for b in reply.content
        )
        return {
            "input_tokens": max(0, total - created - read),
            "output_tokens": max(1, _tokens(out_text)),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": created if ttl == "5m" else 0,
                "ephemeral_1h_input_tokens": created if ttl == "1h" else 0,
            },
        }


def _tokens(text: str) -> int:
    return len(text) // 4


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict)]


def _prompt_text(body: dict[str, Any]) -> str:
    parts = _texts(body.get("system"))
    for message in body.get("messages", []):
        parts += _texts(message.get("content"))
    return "".join(parts)


def _cached_prefix(body: dict[str, Any]) -> tuple[str, str]:
    """The system text up to the last block marked ``cache_control``, and its TTL."""
    system = body.get("system")
    if not isinstance(system, list):
        return "", "5m"
    prefix, upto, ttl = "", "", "5m"
    for block in system:
        prefix += block.get("text", "")
        control = block.get("cache_control")
        if control:
            upto, ttl = prefix, control.get("ttl", "5m")
    return upto, ttl


def _invalid(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if messages[0].get("role") != "user":
        return "messages: the first message must use the user role"
    for block in body.get("system") or []:
        control = block.get("cache_control") if isinstance(block, dict) else None
        if control and control.get("ttl", "5m") not in ("5m", "1h"):
            return "system.cache_control.ttl: must be '5m' or '1h'"
    return None


class _Server(ThreadingHTTPServer):
    # Room for many clients connecting at once (the default backlog of 5 drops the
    # rest's SYNs, which the kernel retries only after a second).
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (a killed process, a timeout) is not the emulator's
        # fault; printing its traceback would land in the stderr a test is reading.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedHandler(BaseHTTPRequestHandler):
    """The HTTP side both emulators share: a quiet log, JSON answers, every request
    recorded, and a broken script answered as a failed request (500, no retry)."""

    emulator: Scripted  # set on each emulator's own subclass

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
        # a str body is sent as it is (the batch results' JSON Lines)
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers = dict(headers)
        self.send_response(status)
        self.send_header("content-type", headers.pop("content-type", "application/json"))
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.emulator._lock:
            self.emulator.requests.append(
                Request(self.command, self.path, headers, body, self.client_address)
            )

    def _read(self) -> Any:
        """The request's JSON body (its text when it is not JSON), recorded."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode(errors="replace")
        self._record(body)
        return body

    def _failed(self, exc: Exception) -> tuple[int, dict[str, str], Any]:
        error = self.emulator._error(500, f"emulator error: {exc!r}")
        return 500, {"x-should-retry": "false"}, error.body()

    def _answer(self, body: Any) -> None:
        """Send the emulator's answer to ``body`` (a broken script: a failed request)."""
        try:
            self._send(*self.emulator.answer(body))
        except Exception as exc:  # a broken script must show up as a failed request
            self._send(*self._failed(exc))

    def _no_route(self) -> None:
        self._send(404, {}, self.emulator._error(404, f"no route {self.path}").body())


def _handler_for(emulator: Emulator) -> type[BaseHTTPRequestHandler]:
    class Handler(ScriptedHandler):
        disable_nagle_algorithm = True
        protocol_version = "HTTP/1.1" if emulator.keep_alive else "HTTP/1.0"

        def _guarded(self, answer: Callable[[], tuple[int, dict[str, str], Any]]) -> None:
            try:
                reply = answer()
            except Exception as exc:  # a broken script must show up as a failed request
                reply = self._failed(exc)
            self._send(*reply)

        def do_POST(self) -> None:
            body = self._read()
            if emulator.batches.handles(self.path):
                self._guarded(lambda: emulator.batches.post(self.path, body))
                return
            if self.path.split("?")[0] != "/v1/messages":
                self._no_route()
                return
            if emulator.latency:
                time.sleep(emulator.latency)
            self._answer(body)

        def do_GET(self) -> None:
            self._record(None)
            if emulator.batches.handles(self.path):
                self._guarded(lambda: emulator.batches.get(self.path))
                return
            self._no_route()

    Handler.emulator = emulator
    return Handler


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    """A running Messages-API emulator; shut down after the test."""
    server = Emulator()
    try:
        yield server
    finally:
        server.close()
