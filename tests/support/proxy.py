"""A loopback HTTP proxy for tests: forwards plain requests and tunnels CONNECT.

It speaks just enough of a proxy's part for the SDK's HTTP clients (httpx, aiohttp)
to use it through ``HTTP_PROXY`` / ``HTTPS_PROXY``: a plain request arrives with an
absolute URL and is sent on to its origin in origin form; a ``CONNECT host:port``
is answered ``200`` and its bytes piped both ways (TLS passes through untouched).
Every request line is recorded in ``seen``. Only loopback origins are reached.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

__all__ = ["Proxy", "proxy"]


class Proxy:
    """The running proxy: its URL and the request lines it saw."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._handle(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,))
        self._thread.daemon = True
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _handle(self, client: socket.socket) -> None:
        head, rest = _read_head(client)
        if not head:
            return
        method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
        with self._lock:
            self.seen.append(f"{method} {target}")
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            with socket.create_connection((host, int(port))) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                upstream.sendall(rest)
                _pipe(client, upstream)
            return
        # one plain request per connection: sent on in origin form, "Connection: close"
        url = urlsplit(target)
        origin_form = (url.path or "/") + (f"?{url.query}" if url.query else "")
        lines = head.decode("latin-1").split("\r\n")
        lines[0] = lines[0].replace(target, origin_form, 1)
        kept = [h for h in lines[1:] if h and not h.lower().startswith(("connection:", "proxy-"))]
        forwarded = "\r\n".join([lines[0], *kept, "Connection: close", "", ""]).encode("latin-1")
        with socket.create_connection((url.hostname or "", url.port or 80)) as upstream:
            upstream.sendall(forwarded + rest)
            _pipe(client, upstream)


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """A request's head (through the blank line) and the bytes read after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b"", b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""

    def copy(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=copy, args=(b, a), daemon=True)
    back.start()
    copy(a, b)
    back.join(timeout=30)


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    """A running loopback proxy; shut down after the test."""
    running = Proxy()
    try:
        yield running
    finally:
        running.close()
