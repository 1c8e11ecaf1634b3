"""A lean HTTP/1.1 transport for the SDK's async httpx client, on plain asyncio.

The async twin of :mod:`gradeloop.models._transport`. ``agrade_many`` at 32 requests
in flight is bound by the client's CPU, and httpx's own async transport (httpcore's
connection pool over anyio, h11's per-event parsing) costs about 3 ms of client CPU
a draft: against the benchmark emulator (benchmarks/bench_scale.py, 500 drafts,
100 ms server latency, 32 in flight) it reached 59-76 % of the ideal wall time. A
prototype on bare asyncio (the request in one write, the answer's head found in one
scan) cut that to about 2 ms a draft and 87-91 % (the target is 90 %); this is that
transport done properly. The measured A/B is in benchmarks/README.md.

It sits *under* the SDK's httpx client: the SDK still builds every request, retries
it and types its errors, and httpx still decodes the body; only the bytes on the wire
go through an :class:`asyncio.Protocol` here, over a pool of kept-alive connections
per event loop. Errors are httpx's own (``ConnectTimeout``, ``ReadError``,
``RemoteProtocolError``...), so the SDK reports them as ``APITimeoutError`` /
``APIConnectionError`` exactly as with httpx's transport.

Anything it does not handle the way httpcore would (an ``sni_hostname``, a chunked
request body, a scheme other than http/https) goes to httpx's own transport, and
:func:`lean_async_http_client` gives none at all when a proxy is configured in the
environment or ``GRADELOOP_HTTPX_TRANSPORT=1`` asks for httpx's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from typing import Any

import httpx2

from ._transport import SOCKET_OPTIONS, describe_os_error, lean_transport_allowed

__all__ = ["LeanAsyncTransport", "Tap", "lean_async_http_client", "tapped"]

_Key = tuple[str, str, int]

MAX_HEAD = 64 * 1024  # an answer's status line and headers (and a chunked body's trailers)
MAX_CHUNK_LINE = 4096  # a chunk-size line, extensions included
_READ_SIZE = 65536  # at most this much handed up at once
_PAUSE_AT = 256 * 1024  # stop reading the socket while this much is unconsumed
_RESUME_AT = 64 * 1024

_STATUS = re.compile(rb"HTTP/1\.([01]) ([1-9][0-9][0-9])(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?")
_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_HEADER_LINES = re.compile(rb"%s:[^\r\n\x00]*(?:\r\n%s:[^\r\n\x00]*)*" % (_TOKEN, _TOKEN))
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(rb"[0-9]{1,19}")


def lean_async_http_client(verify: ssl.SSLContext) -> Any:
    """The SDK's default async httpx client on a :class:`LeanAsyncTransport`, or None
    (use the SDK's own) when the environment configures a proxy or sets ``OPT_OUT``."""
    if not lean_transport_allowed():
        return None
    # the SDK's own default client class: closed (its connections too) when collected
    from anthropic._base_client import AsyncHttpxClientWrapper

    return AsyncHttpxClientWrapper(transport=LeanAsyncTransport(verify))


class Tap:
    """What the direct lane (:mod:`._direct`) asks of the next request the current
    context hands this transport: to be shown it as built (``seen``), and to answer it
    with an outcome already had (``replay``: a response, or an exception to raise)
    instead of sending it. A tap serves one request, then is gone."""

    __slots__ = ("replay", "seen")

    def __init__(
        self,
        seen: Callable[[httpx2.Request], None] | None = None,
        replay: httpx2.Response | Exception | None = None,
    ) -> None:
        self.seen = seen
        self.replay = replay


_TAP: ContextVar[Tap | None] = ContextVar("gradeloop_transport_tap", default=None)


@contextlib.contextmanager
def tapped(tap: Tap) -> Iterator[None]:
    """``tap`` for the next request of this context (and none after the block)."""
    token = _TAP.set(tap)
    try:
        yield
    finally:
        _TAP.reset(token)


class LeanAsyncTransport(httpx2.AsyncBaseTransport):
    """HTTP/1.1 over asyncio with kept-alive connections, pooled per event loop (a
    connection is only ever used by the loop it was opened in)."""

    def __init__(self, verify: ssl.SSLContext, max_idle: int = 100) -> None:
        self._tls = verify
        self._max_idle = max_idle
        self._pools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[_Key, list[_Conn]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()  # one transport may serve loops in several threads
        self._closed = False
        self._fallback: httpx2.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        tap = _TAP.get()
        if tap is not None:
            _TAP.set(None)
            if tap.seen is not None:
                tap.seen(request)
            if isinstance(tap.replay, Exception):
                raise tap.replay
            if tap.replay is not None:
                return tap.replay
        url = request.url
        headers = request.headers
        raw = headers.raw
        # the header names, for the few looked up (one pass, not httpx's per-name lookups)
        names = b"\n" + b"\n".join([name for name, _ in raw]).lower() + b"\n"
        if (
            url.scheme not in ("http", "https")
            or "sni_hostname" in request.extensions
            or b"\ntransfer-encoding\n" in names
        ):
            return await self._httpx().handle_async_request(request)
        key: _Key = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeout = request.extensions.get("timeout") or {}
        try:
            body = request.content
        except httpx2.RequestNotRead:
            body = await request.aread()
        parts = [request.method.encode("ascii"), b" ", url.raw_path, b" HTTP/1.1\r\n"]
        for name, value in raw:
            parts += (name, b": ", value, b"\r\n")
        lines = len(raw) + 2
        if body and b"\ncontent-length\n" not in names:
            parts.append(b"Content-Length: %d\r\n" % len(body))
            lines += 1
        parts.append(b"\r\n")
        head = b"".join(parts)
        # a CR or LF inside a header would split it in two (request smuggling)
        if head.count(b"\n") != lines or head.count(b"\r") != lines:
            raise httpx2.LocalProtocolError("a header holds a CR or LF", request=request)
        data = head + body if body else head
        close = b"\nconnection\n" in names and _has_close(headers.get_list("connection"))

        loop = asyncio.get_running_loop()
        conn = self._checkout(loop, key)
        if conn is not None:
            try:
                return await self._exchange(key, conn, data, request, timeout, close, True)
            except _Stale:
                pass  # the server had closed it unseen; nothing of an answer came: a fresh one
        conn = await self._connect(loop, key, timeout, request)
        return await self._exchange(key, conn, data, request, timeout, close, False)

    async def _exchange(
        self,
        key: _Key,
        conn: _Conn,
        data: bytes,
        request: httpx2.Request,
        timeout: dict[str, Any],
        close: bool,
        reused: bool,
    ) -> httpx2.Response:
        """Send ``data`` on ``conn`` and read the answer's head; :class:`_Stale` when a
        kept-alive ``conn`` turns out closed before any byte of an answer."""
        conn.received = False
        writing = True
        try:
            conn.write(data)
            await conn.drain(timeout.get("write"))
            writing = False
            read_timeout = timeout.get("read")
            interim = 0  # 1xx heads skipped: bounded together like one head
            while True:
                head = await conn.read_head(read_timeout)
                version, status, reason, headers, fields = _parse_head(head)
                if status >= 200:
                    break
                if status == 101:
                    raise _Protocol("101 Switching Protocols was not asked for")
                interim += len(head) + 4
                if interim > MAX_HEAD:
                    raise _Protocol(f"the interim (1xx) answers are over {MAX_HEAD} bytes")
        except _Closed as exc:
            conn.abort()
            if reused and not conn.received:
                raise _Stale from exc
            if writing and exc.error is not None:
                raise httpx2.WriteError(describe_os_error(exc.error), request=request) from exc
            if exc.error is not None:
                raise httpx2.ReadError(describe_os_error(exc.error), request=request) from exc
            what = "an incomplete answer" if conn.received else "no answer"
            raise httpx2.RemoteProtocolError(
                f"the server closed the connection after {what}", request=request
            ) from exc
        except _Timeout as exc:
            conn.abort()
            kind = httpx2.WriteTimeout if writing else httpx2.ReadTimeout
            raise kind("timed out", request=request) from exc
        except _Protocol as exc:
            conn.abort()
            raise httpx2.RemoteProtocolError(str(exc), request=request) from exc
        except BaseException:  # cancelled, or anything unforeseen: never pooled again
            conn.abort()
            raise
        try:
            framing, length = _framing(request.method, status, fields)
        except _Protocol as exc:
            conn.abort()
            raise httpx2.RemoteProtocolError(str(exc), request=request) from exc
        keep = (
            not close
            and version == b"1"
            and not _has_close(fields.get(b"connection", ()))
            and framing != _EOF
            and not (framing == _CHUNKED and b"content-length" in fields)
        )
        stream = _Body(self, key, conn, request, framing, length, keep, read_timeout)
        return httpx2.Response(
            status,
            headers=headers,
            stream=stream,
            request=request,
            extensions={"http_version": b"HTTP/1." + version, "reason_phrase": reason},
        )

    async def aclose(self) -> None:
        with self._lock:
            self._closed = True
            pools = list(self._pools.items())
            self._pools = weakref.WeakKeyDictionary()
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for loop, pool in pools:
            for conns in pool.values():
                for conn in conns:
                    if loop is running:
                        conn.abort()
                    elif not loop.is_closed():
                        with contextlib.suppress(RuntimeError):  # closed meanwhile
                            loop.call_soon_threadsafe(conn.abort)
                    # a closed loop's transports cannot be closed through it any more:
                    # their sockets are closed when they are collected
        if running is not None:
            await asyncio.sleep(0)  # the sockets close on the loop's next turn
        if self._fallback is not None:
            await self._fallback.aclose()

    # -- connections ---------------------------------------------------------------

    async def _connect(
        self,
        loop: asyncio.AbstractEventLoop,
        key: _Key,
        timeout: dict[str, Any],
        request: httpx2.Request,
    ) -> _Conn:
        scheme, host, port = key
        tls = self._tls if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout.get("connect")):
                transport, conn = await loop.create_connection(
                    lambda: _Conn(loop), host, port, ssl=tls,
                    server_hostname=host if tls is not None else None,
                )  # fmt: skip
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout("timed out", request=request) from exc
        except OSError as exc:  # refused, unreachable, name unknown, TLS failures
            raise httpx2.ConnectError(describe_os_error(exc), request=request) from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                for level, option, value in SOCKET_OPTIONS:
                    sock.setsockopt(level, option, value)
            except OSError as exc:
                transport.abort()
                raise httpx2.ConnectError(describe_os_error(exc), request=request) from exc
        return conn

    def _checkout(self, loop: asyncio.AbstractEventLoop, key: _Key) -> _Conn | None:
        """A kept-alive connection of ``loop`` to ``key`` still open, or None."""
        while True:
            with self._lock:
                pool = self._pools.get(loop)
                conns = pool.get(key) if pool is not None else None
                conn = conns.pop() if conns else None
            if conn is None or conn.usable():
                return conn
            conn.abort()

    def _checkin(self, key: _Key, conn: _Conn) -> None:
        if conn.usable():
            with self._lock:
                if not self._closed:
                    pool = self._pools.get(conn.loop)
                    if pool is None:
                        # a loop's pool holds the loop (its connections do): forget the
                        # pools of closed loops, whose connections can never be used
                        for loop in [loop for loop in self._pools if loop.is_closed()]:
                            del self._pools[loop]
                        pool = self._pools[conn.loop] = {}
                    conns = pool.setdefault(key, [])
                    if len(conns) < self._max_idle:
                        conns.append(conn)
                        return
            conn.abort()
        else:
            conn.abort()

    def _httpx(self) -> httpx2.AsyncHTTPTransport:
        with self._lock:
            if self._fallback is None:
                self._fallback = httpx2.AsyncHTTPTransport(verify=self._tls)
            return self._fallback


class _Stale(Exception):
    """A kept-alive connection was closed by the server before any byte of an answer."""


class _Closed(Exception):
    """The connection ended (``error``: how, or None for a plain end of stream)."""

    def __init__(self, error: BaseException | None) -> None:
        super().__init__(error)
        self.error = error


class _Timeout(Exception):
    """Waiting for the socket took longer than allowed."""


class _Protocol(Exception):
    """The server's bytes are not HTTP/1.1 as this transport reads it."""


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


async def _woken(
    loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[bool], timeout: float | None
) -> None:
    """Wait until ``waiter`` is woken (True); :class:`_Timeout` when :func:`_expire`
    ends it (False) after ``timeout`` seconds."""
    timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
    try:
        if not await waiter:
            raise _Timeout
    finally:
        if timer is not None:
            timer.cancel()


class _Conn(asyncio.Protocol):
    """One connection: the bytes received and not yet consumed, and waits for more."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.received = False  # any byte since the current request was sent
        self.ended = False  # end of stream, or the connection lost
        self.error: BaseException | None = None
        self.dead = False
        self._paused = False
        self._waiter: asyncio.Future[bool] | None = None
        self._write_paused = False
        self._drainer: asyncio.Future[bool] | None = None

    # -- asyncio.Protocol ----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received = True
        if len(self.buf) > _PAUSE_AT and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = self.dead = True
        self.error = exc
        self._wake()
        drainer, self._drainer = self._drainer, None
        if drainer is not None and not drainer.done():
            drainer.set_result(True)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        drainer, self._drainer = self._drainer, None
        if drainer is not None and not drainer.done():
            drainer.set_result(True)

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    # -- state ---------------------------------------------------------------------

    def usable(self) -> bool:
        """Open, and nothing unasked for has arrived (an idle connection that turns
        readable was closed by the server, or carries bytes nobody asked for)."""
        return not (
            self.dead
            or self.ended
            or self.buf
            or self.transport is None
            or self.transport.is_closing()
        )

    def abort(self) -> None:
        """Close at once: a TLS connection sends no close_notify and waits for none (a
        graceful TLS close would outlive a loop that ends right after ``aclose``)."""
        self.dead = True
        if self.transport is not None:
            self.transport.abort()

    # -- writing -------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self.ended or self.transport is None or self.transport.is_closing():
            raise _Closed(self.error)
        self.transport.write(data)

    async def drain(self, timeout: float | None) -> None:
        while self._write_paused:
            if self.ended:
                raise _Closed(self.error)
            self._drainer = self.loop.create_future()
            await _woken(self.loop, self._drainer, timeout)
        if self.ended and self.error is not None:
            raise _Closed(self.error)

    # -- reading -------------------------------------------------------------------

    async def _fill(self, timeout: float | None) -> None:
        """Wait for more bytes: :class:`_Closed` once the stream ended, :class:`_Timeout`
        after ``timeout`` seconds without any."""
        if self.ended:
            raise _Closed(self.error)
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        self._waiter = self.loop.create_future()
        try:
            await _woken(self.loop, self._waiter, timeout)
        finally:
            self._waiter = None

    def _consume(self, n: int) -> bytes:
        buf = self.buf
        if n >= len(buf):
            data = bytes(buf)
            buf.clear()
        else:
            data = bytes(buf[:n])
            del buf[:n]  # O(1): a bytearray drops its head by moving its start
        if self._paused and len(buf) < _RESUME_AT and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    async def read_head(self, timeout: float | None) -> bytes:
        """An answer's status line and headers, without the blank line after them."""
        head = await self._read_until(b"\r\n\r\n", MAX_HEAD, timeout)
        if head is None:
            raise _Protocol(f"the answer's head is over {MAX_HEAD} bytes")
        return head

    async def read_line(self, timeout: float | None, limit: int) -> bytes:
        line = await self._read_until(b"\r\n", limit, timeout)
        if line is None:
            raise _Protocol(f"a line of the chunked body is over {limit} bytes")
        return line

    async def _read_until(self, sep: bytes, limit: int, timeout: float | None) -> bytes | None:
        """What comes before the next ``sep`` (consumed with it), or None when more
        than ``limit`` bytes come first."""
        start = 0
        while True:
            end = self.buf.find(sep, start)
            if end >= 0:
                return self._consume(end + len(sep))[: -len(sep)] if end <= limit else None
            if len(self.buf) > limit:
                return None
            start = max(0, len(self.buf) - len(sep) + 1)  # scan only what is new
            await self._fill(timeout)

    async def read_exact(self, n: int, timeout: float | None) -> bytes:
        while len(self.buf) < n:
            await self._fill(timeout)
        return self._consume(n)

    async def read_some(self, n: int, timeout: float | None) -> bytes:
        """Up to ``n`` bytes, as soon as any are there."""
        while not self.buf:
            await self._fill(timeout)
        return self._consume(n)


_LENGTH, _CHUNKED, _EOF, _NONE = range(4)


def _framing(method: str, status: int, fields: dict[bytes, list[bytes]]) -> tuple[int, int]:
    """How the answer's body ends (RFC 9112 section 6.3), and its length if known."""
    if method == "HEAD" or status in (204, 304):
        return _NONE, 0
    codings = fields.get(b"transfer-encoding")
    if codings is not None:
        last = b",".join(codings).rsplit(b",", 1)[-1].strip().lower()
        if last != b"chunked":
            raise _Protocol(f"unsupported Transfer-Encoding: {b', '.join(codings)!r}")
        return _CHUNKED, 0
    lengths = fields.get(b"content-length")
    if lengths is not None:
        values = {v.strip() for line in lengths for v in line.split(b",")}
        if len(values) != 1 or not _DIGITS.fullmatch(next(iter(values))):
            raise _Protocol(f"invalid Content-Length: {b', '.join(lengths)!r}")
        return _LENGTH, int(values.pop())
    return _EOF, 0


def _parse_head(
    head: bytes,
) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]], dict[bytes, list[bytes]]]:
    """(minor version, status, reason, headers, the framing headers by lower-case name)."""
    end = head.find(b"\r\n")
    status_line = head if end < 0 else head[:end]
    match = _STATUS.fullmatch(status_line)
    if match is None:
        raise _Protocol(f"malformed status line: {status_line[:100]!r}")
    headers: list[tuple[bytes, bytes]] = []
    fields: dict[bytes, list[bytes]] = {}
    if end < 0:
        return match[1], int(match[2]), match[3] or b"", headers, fields
    # every header line at once: a token, a colon, no CR, LF or NUL (no folded lines)
    if _HEADER_LINES.fullmatch(head, end + 2) is None:
        bad = next(
            (x for x in head[end + 2 :].split(b"\r\n") if not _HEADER_LINES.fullmatch(x)), b""
        )
        raise _Protocol(f"malformed header line: {bad[:100]!r}")
    for line in head[end + 2 :].split(b"\r\n"):
        name, _, value = line.partition(b":")
        value = value.strip(b" \t")
        headers.append((name, value))
        lower = name.lower()
        if lower in _FRAMING:
            fields.setdefault(lower, []).append(value)
    return match[1], int(match[2]), match[3] or b"", headers, fields


_FRAMING = frozenset((b"content-length", b"transfer-encoding", b"connection"))


def _has_close(values: Any) -> bool:
    for value in values:
        raw = value if isinstance(value, bytes) else value.encode("latin-1")
        if any(token.strip().lower() == b"close" for token in raw.split(b",")):
            return True
    return False


class _Body(httpx2.AsyncByteStream):
    """An answer's body, handed up as it arrives; its connection goes back to the pool
    once the body was read to its end (and neither side asked to close), else closed."""

    def __init__(
        self,
        transport: LeanAsyncTransport,
        key: _Key,
        conn: _Conn,
        request: httpx2.Request,
        framing: int,
        length: int,
        keep: bool,
        timeout: float | None,
    ) -> None:
        self._transport, self._key = transport, key
        self._conn: _Conn | None = conn
        self._request = request
        self._framing, self._length, self._keep = framing, length, keep
        self._timeout = timeout
        self._done = framing == _NONE or (framing == _LENGTH and length == 0)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None or self._done:
            return
        timeout = self._timeout
        try:
            if self._framing == _LENGTH:
                left = self._length
                while left:
                    chunk = await conn.read_some(min(left, _READ_SIZE), timeout)
                    left -= len(chunk)
                    yield chunk
            elif self._framing == _CHUNKED:
                while True:
                    line = await conn.read_line(timeout, MAX_CHUNK_LINE)
                    size_text = line.split(b";", 1)[0].strip(b" \t")
                    if not _HEX.fullmatch(size_text):
                        raise _Protocol(f"malformed chunk size line: {line[:100]!r}")
                    left = int(size_text, 16)
                    if not left:
                        break
                    while left:
                        chunk = await conn.read_some(min(left, _READ_SIZE), timeout)
                        left -= len(chunk)
                        yield chunk
                    if await conn.read_exact(2, timeout) != b"\r\n":
                        raise _Protocol("a chunk is longer than its size line says")
                trailers = 0  # discarded, as httpx does; bounded like the head
                while line := await conn.read_line(timeout, MAX_HEAD):
                    trailers += len(line) + 2
                    if trailers > MAX_HEAD:
                        raise _Protocol(f"the chunked body's trailers are over {MAX_HEAD} bytes")
            else:  # delimited by the end of the connection
                while True:
                    try:
                        chunk = await conn.read_some(_READ_SIZE, timeout)
                    except _Closed as exc:
                        if exc.error is not None:
                            raise
                        break
                    yield chunk
            self._done = True
        except _Closed as exc:
            self._abort()
            if exc.error is not None:
                raise httpx2.ReadError(describe_os_error(exc.error), request=self._request) from exc
            raise httpx2.RemoteProtocolError(
                "the server closed the connection before the body's end", request=self._request
            ) from exc
        except _Timeout as exc:
            self._abort()
            raise httpx2.ReadTimeout("timed out", request=self._request) from exc
        except _Protocol as exc:
            self._abort()
            raise httpx2.RemoteProtocolError(str(exc), request=self._request) from exc
        except BaseException:  # cancelled, or the consumer stopped early
            self._abort()
            raise

    def _abort(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.abort()

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if not self._done:
            conn.abort()  # the rest of the body would have to be read first: never reused
        elif self._keep:
            self._transport._checkin(self._key, conn)
        else:
            conn.abort()
