"""A lean HTTP/1.1 transport for the SDK's httpx client, on the standard library's
``http.client``.

Grading many drafts at once is bound by the client's CPU (the GIL), and at 32
requests in flight httpcore's connection pool and h11's per-header checks cost
about as much as everything else a draft needs (benchmarks/README.md). This
transport sits *under* the SDK's httpx client: the SDK still builds every request
(key, headers, timeout), retries it, runs its middleware and types its errors, and
httpx still decodes the body; only the bytes on the wire go through ``http.client``,
over a pool of kept-alive connections.

Anything it does not handle the way httpcore would (an ``sni_hostname``, a chunked
request body, a scheme other than http/https) goes to httpx's own transport, and
:func:`lean_http_client` gives none at all when a proxy is configured in the
environment (httpx applies environment proxies only to its own transports) or
``GRADELOOP_HTTPX_TRANSPORT=1`` asks for httpx's own. Answers are handed up as their
bytes arrive, so a streamed answer (server-sent events) streams.
"""

from __future__ import annotations

import http.client
import os
import select
import socket
import ssl
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import httpx2

__all__ = [
    "OPT_OUT",
    "SOCKET_OPTIONS",
    "LeanTransport",
    "describe_os_error",
    "lean_http_client",
    "lean_transport_allowed",
]

SOCKET_OPTIONS = [
    (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
    (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),  # a request's writes are never held back
]
_Key = tuple[str, str, int]


OPT_OUT = "GRADELOOP_HTTPX_TRANSPORT"  # set to 1: make_client keeps httpx's own transport


def lean_transport_allowed() -> bool:
    """Whether gradeloop's lean transports may carry requests: not when the
    environment configures a proxy (httpx applies it only to its own transports) or
    sets :data:`OPT_OUT`."""
    return not urllib.request.getproxies() and os.environ.get(OPT_OUT, "").strip() in ("", "0")


def lean_http_client(verify: ssl.SSLContext) -> Any:
    """The SDK's default httpx client on a :class:`LeanTransport`, or None (use the
    SDK's own) when the environment configures a proxy or sets :data:`OPT_OUT`."""
    if not lean_transport_allowed():
        return None
    # the SDK's own default client class: closed (its connections too) when collected
    from anthropic._base_client import SyncHttpxClientWrapper

    return SyncHttpxClientWrapper(transport=LeanTransport(verify))


class LeanTransport(httpx2.BaseTransport):
    """HTTP/1.1 over ``http.client`` with kept-alive connections (thread-safe)."""

    def __init__(self, verify: ssl.SSLContext, max_idle: int = 100) -> None:
        self._tls = verify
        self._max_idle = max_idle
        self._idle: dict[_Key, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._fallback: httpx2.HTTPTransport | None = None

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if (
            url.scheme not in ("http", "https")
            or "sni_hostname" in request.extensions
            or "transfer-encoding" in request.headers
        ):
            return self._httpx().handle_request(request)
        key: _Key = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeout = request.extensions.get("timeout") or {}
        conn = self._checkout(key)
        if conn is not None:
            try:
                return self._exchange(key, conn, request, timeout, reused=True)
            except _Stale:
                pass  # the server had closed it unseen; nothing reached it: a fresh one
        return self._exchange(key, self._connect(key, timeout, request), request, timeout)

    def _exchange(
        self,
        key: _Key,
        conn: http.client.HTTPConnection,
        request: httpx2.Request,
        timeout: dict[str, Any],
        *,
        reused: bool = False,
    ) -> httpx2.Response:
        """Send ``request`` on ``conn`` and read the answer's head; :class:`_Stale` when a
        kept-alive ``conn`` turns out closed before any byte of an answer (the race
        between the server closing an idle connection and :func:`_usable`'s look)."""
        url = request.url
        try:
            conn.sock.settimeout(timeout.get("read"))
            conn.putrequest(
                request.method, url.raw_path.decode("ascii"), skip_host=True,
                skip_accept_encoding=True,
            )  # fmt: skip
            for name, value in request.headers.raw:
                conn.putheader(name, value)
            conn.endheaders(request.read() or None)
            response = conn.getresponse()
        except TimeoutError as exc:
            conn.close()
            raise httpx2.ReadTimeout(str(exc) or "timed out", request=request) from exc
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            if reused and isinstance(exc, ConnectionError):
                raise _Stale from exc
            raise httpx2.RemoteProtocolError(describe_os_error(exc), request=request) from exc
        return httpx2.Response(
            response.status,
            headers=response.getheaders(),
            stream=_Body(self, key, conn, response, request),
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason.encode()},
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()
        if self._fallback is not None:
            self._fallback.close()

    # -- connections ---------------------------------------------------------------

    def _connect(
        self, key: _Key, timeout: dict[str, Any], request: httpx2.Request
    ) -> http.client.HTTPConnection:
        scheme, host, port = key
        conn: http.client.HTTPConnection
        if scheme == "https":
            conn = _TLSConnection(host, port, timeout=timeout.get("connect"), context=self._tls)
        else:
            conn = _Connection(host, port, timeout=timeout.get("connect"))
        try:
            conn.connect()
        except TimeoutError as exc:
            conn.close()
            raise httpx2.ConnectTimeout(str(exc) or "timed out", request=request) from exc
        except OSError as exc:
            conn.close()
            raise httpx2.ConnectError(describe_os_error(exc), request=request) from exc
        for level, option, value in SOCKET_OPTIONS:
            conn.sock.setsockopt(level, option, value)
        return conn

    def _checkout(self, key: _Key) -> http.client.HTTPConnection | None:
        """A kept-alive connection to ``key`` the server has not closed, or None."""
        while True:
            with self._lock:
                conns = self._idle.get(key)
                conn = conns.pop() if conns else None
            if conn is None or _usable(conn):
                return conn
            conn.close()

    def _checkin(self, key: _Key, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            conns = self._idle.setdefault(key, [])
            if not self._closed and len(conns) < self._max_idle:
                conns.append(conn)
                return
        conn.close()

    def _httpx(self) -> httpx2.HTTPTransport:
        with self._lock:
            if self._fallback is None:
                self._fallback = httpx2.HTTPTransport(verify=self._tls)
            return self._fallback


class _OneWrite(http.client.HTTPConnection):
    """A connection that sends a request's head and bytes body in one write.

    ``http.client`` sends them in two: with Nagle off that is two segments, and for a
    thread among many it is two system calls, each of which lets go of the GIL and
    may have to wait for it again behind the other threads."""

    def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
        if not isinstance(message_body, bytes) or encode_chunked:
            super()._send_output(message_body, encode_chunked)  # type: ignore[misc]
            return
        buffer: list[bytes] = self._buffer  # type: ignore[attr-defined]
        buffer.extend((b"", b""))
        head = b"\r\n".join(buffer)
        del buffer[:]
        self.send(head + message_body)


class _Connection(_OneWrite):
    pass


class _TLSConnection(_OneWrite, http.client.HTTPSConnection):
    pass


class _Stale(Exception):
    """A kept-alive connection was closed by the server before it read the request."""


class _Body(httpx2.SyncByteStream):
    """A response body read from its connection, which goes back to the pool once the
    body was read to its end (and the server keeps it open), else is closed."""

    def __init__(
        self,
        transport: LeanTransport,
        key: _Key,
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        request: httpx2.Request,
    ) -> None:
        self._transport, self._key = transport, key
        self._conn: http.client.HTTPConnection | None = conn
        self._response, self._request = response, request

    def __iter__(self) -> Iterator[bytes]:
        try:
            # read1: what has arrived (one chunk of a chunked answer), not a full 64 KB,
            # so a streamed answer (server-sent events) reaches the SDK as it comes
            while chunk := self._response.read1(65536):
                yield chunk
            # read1 stops at a Content-Length's end without marking the answer done;
            # read() does, which lets the connection go back to the pool
            self._response.read()
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(str(exc) or "timed out", request=self._request) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise httpx2.ReadError(describe_os_error(exc), request=self._request) from exc

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._response.isclosed() and not self._response.will_close:
            self._transport._checkin(self._key, conn)
        else:
            self._response.close()
            conn.close()


def _usable(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle connection is still open: readable while idle means the server
    closed it (or sent something unasked), either way it cannot carry a request."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


def describe_os_error(exc: BaseException) -> str:
    """An OS or TLS error as an httpx error's message (both lean transports')."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
