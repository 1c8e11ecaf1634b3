"""The lean asyncio transport under the async twin's httpx client
(gradeloop.models._atransport)."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import itertools
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import anthropic
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop.grading._rubric import Criterion
from gradeloop.models import _atransport
from gradeloop.models._aclient import async_twin, tls_context
from gradeloop.models._atransport import LeanAsyncTransport, lean_async_http_client
from gradeloop.models._judge import AnthropicJudge
from gradeloop.testing import verdict_reply
from tests.emulator import Emulator

CRITERIA = (Criterion(key="api_cited", description="Every API claim cites a spec section."),)
GOOD = {"reasoning": "r", "criteria_met": {"api_cited": True}, "passed": True, "issues": []}
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def lean(**kw: Any) -> LeanAsyncTransport:
    return LeanAsyncTransport(tls_context(), **kw)


def ok(body: bytes = b'{"ok": true}', *extra: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + b"".join(h + b"\r\n" for h in extra)
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


def read_request(f: BinaryIO) -> bytes | None:
    """One request's head off a connection (its body read and dropped), None at its end."""
    lines = []
    while True:
        line = f.readline()
        if not line:
            return None
        if line == b"\r\n":
            break
        lines.append(line)
    head = b"".join(lines)
    length = next(
        (int(x.split(b":")[1]) for x in lines if x.lower().startswith(b"content-length:")), 0
    )
    f.read(length)
    return head


class Server:
    """A raw HTTP server on 127.0.0.1: ``serve(conn, f, server)`` handles each
    connection in its own thread (``f``: the connection's reading file)."""

    def __init__(
        self,
        serve: Callable[[socket.socket, BinaryIO, Server], None],
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.serve = serve
        self.tls = tls
        self.connections = 0
        self.requests: list[bytes] = []
        self.ended: list[int] = []  # connections (by number) the client closed
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/"
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(
                target=self._one,
                args=(conn, self.connections),
                name=str(self.connections),
                daemon=True,
            )
            self.threads.append(thread)
            thread.start()

    def _one(self, conn: socket.socket, number: int) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            with conn, conn.makefile("rb") as f:
                self.serve(conn, f, self)
        except OSError:
            self.ended.append(number)

    def next(self, f: BinaryIO) -> bytes | None:
        """The next request's head, or None once the client hung up."""
        try:
            head = read_request(f)
        except OSError:
            head = None
        if head is None:
            self.ended.append(int(threading.current_thread().name))
        else:
            self.requests.append(head)
        return head

    def close(self) -> None:
        self.sock.close()
        for thread in self.threads:
            thread.join(timeout=10)


@pytest.fixture
def serving() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(
        serve: Callable[[socket.socket, BinaryIO, Server], None], tls: ssl.SSLContext | None = None
    ) -> Server:
        servers.append(Server(serve, tls))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def keep_answering(answer: bytes) -> Callable[[socket.socket, BinaryIO, Server], None]:
    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        while server.next(f) is not None:
            conn.sendall(answer)

    return serve


def answer_once(answer: bytes) -> Callable[[socket.socket, BinaryIO, Server], None]:
    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        if server.next(f) is not None:
            conn.sendall(answer)

    return serve


async def get_all(transport: LeanAsyncTransport, url: str, n: int = 1, **kw: Any) -> list[bytes]:
    client = httpx2.AsyncClient(transport=transport)
    try:
        return [(await client.get(url, **kw)).content for _ in range(n)]
    finally:
        await client.aclose()


def idle(transport: LeanAsyncTransport) -> int:
    return sum(len(c) for pool in transport._pools.values() for c in pool.values())


# -- wiring ----------------------------------------------------------------------------


def test_the_async_twin_uses_the_lean_transport_unless_a_proxy_is_set_or_opted_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")

    def transport() -> Any:
        twin = async_twin(client)
        try:
            return twin._client._transport
        finally:
            asyncio.run(twin.close())

    assert isinstance(transport(), LeanAsyncTransport)
    monkeypatch.setenv("GRADELOOP_HTTPX_TRANSPORT", "0")  # "0" and "" do not opt out
    assert isinstance(transport(), LeanAsyncTransport)
    monkeypatch.setenv("GRADELOOP_HTTPX_TRANSPORT", "1")
    assert not isinstance(transport(), LeanAsyncTransport)
    assert lean_async_http_client(tls_context()) is None
    monkeypatch.delenv("GRADELOOP_HTTPX_TRANSPORT")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    # httpx applies environment proxies only to its own transports: keep them
    assert not isinstance(transport(), LeanAsyncTransport)
    assert lean_async_http_client(tls_context()) is None


def test_aevaluate_runs_end_to_end_on_one_kept_alive_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    server = Emulator(keep_alive=True)
    try:
        server.responder = lambda body: verdict_reply(GOOD)
        j = AnthropicJudge(client=server.client())

        async def three() -> tuple[list[bool], Any]:
            verdicts = [(await j.aevaluate("t", "d", CRITERIA)).passed for _ in range(3)]
            transport = j._async.client()._client._transport
            pooled = idle(transport)
            await j.aclose()
            return verdicts, (type(transport), pooled, idle(transport))

        verdicts, (kind, pooled, after) = asyncio.run(three())
        assert verdicts == [True] * 3
        assert (kind, pooled, after) == (LeanAsyncTransport, 1, 0)
        assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0"] * 3
        assert "AsyncAnthropic" in server.requests[0].headers["user-agent"]
    finally:
        server.close()


# -- connections -------------------------------------------------------------------------


def test_a_kept_alive_connection_carries_every_request(serving: Callable[..., Server]) -> None:
    server = serving(keep_answering(ok()))
    assert asyncio.run(get_all(lean(), server.url, 3)) == [b'{"ok": true}'] * 3
    assert server.connections == 1
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    "answer",
    [
        ok(b"{}", b"Connection: close"),
        ok(b"{}").replace(b"HTTP/1.1", b"HTTP/1.0"),
        b"HTTP/1.1 200 OK\r\n\r\n{}",  # no length: the body ends with the connection
    ],
    ids=["connection-close", "http-1.0", "eof-delimited"],
)
def test_an_answer_that_ends_its_connection_is_not_pooled(
    serving: Callable[..., Server], answer: bytes
) -> None:
    # a server that would go on answering on it: the client must not
    server = serving(answer_once(answer) if b"Length" not in answer else keep_answering(answer))
    transport = lean()
    assert asyncio.run(get_all(transport, server.url, 2)) == [b"{}", b"{}"]
    assert server.connections == 2
    assert idle(transport) == 0


def test_a_request_asking_to_close_is_not_pooled(serving: Callable[..., Server]) -> None:
    server = serving(keep_answering(ok()))
    asyncio.run(get_all(lean(), server.url, 2, headers={"Connection": "close"}))
    assert server.connections == 2


def test_an_idle_connection_the_server_closed_is_not_reused(
    serving: Callable[..., Server],
) -> None:
    server = serving(answer_once(ok()))  # HTTP/1.1 keep-alive, but hangs up after one

    async def main() -> list[bytes]:
        client = httpx2.AsyncClient(transport=lean())
        out = []
        for _ in range(3):
            out.append((await client.get(server.url)).content)
            await asyncio.sleep(0.05)  # the server's FIN arrives while idle
        await client.aclose()
        return out

    assert asyncio.run(main()) == [b'{"ok": true}'] * 3
    assert (server.connections, len(server.requests)) == (3, 3)


def test_a_kept_alive_connection_found_closed_on_use_is_replaced_once(
    serving: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race the idle check cannot close, made certain by a check that always says
    # "usable": the request meets a closed connection before any answer, and is sent
    # once more on a fresh one.
    monkeypatch.setattr(_atransport._Conn, "usable", lambda self: True)
    server = serving(answer_once(ok()))

    async def main() -> list[bytes]:
        client = httpx2.AsyncClient(transport=lean())
        out = []
        for _ in range(3):
            out.append((await client.get(server.url)).content)
            await asyncio.sleep(0.05)
        await client.aclose()
        return out

    assert asyncio.run(main()) == [b'{"ok": true}'] * 3
    assert (server.connections, len(server.requests)) == (3, 3)


def test_a_kept_alive_connection_closed_after_reading_the_request_is_retried_once(
    serving: Callable[..., Server],
) -> None:
    # the first connection answers one request, then reads the second and hangs up
    # without a byte of an answer: sent again on a fresh connection
    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        if server.next(f) is not None:
            conn.sendall(ok())
            if server.connections == 1:
                server.next(f)

    server = serving(serve)
    assert asyncio.run(get_all(lean(), server.url, 2)) == [b'{"ok": true}'] * 2
    assert (server.connections, len(server.requests)) == (2, 3)


def test_a_kept_alive_connection_closed_mid_answer_is_an_error_not_a_retry(
    serving: Callable[..., Server],
) -> None:
    # part of an answer came: the server acted on the request, so it is not sent again
    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        if server.next(f) is not None:
            conn.sendall(ok())
            if server.next(f) is not None:
                conn.sendall(b"HTTP/1.1 200 OK\r\n")

    server = serving(serve)
    with pytest.raises(httpx2.RemoteProtocolError, match="after an incomplete answer"):
        asyncio.run(get_all(lean(), server.url, 2))
    assert (server.connections, len(server.requests)) == (1, 2)


def test_a_fresh_connection_closed_without_an_answer_is_an_error_not_a_retry(
    serving: Callable[..., Server],
) -> None:
    server = serving(answer_once(b""))  # reads the request, hangs up without answering
    with pytest.raises(httpx2.RemoteProtocolError, match="after no answer"):
        asyncio.run(get_all(lean(), server.url))
    assert server.connections == 1  # the request may have been acted on: not resent


def test_a_connection_is_never_reused_by_another_event_loop(
    serving: Callable[..., Server],
) -> None:
    server = serving(keep_answering(ok()))
    transport = lean()
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        client = httpx2.AsyncClient(transport=transport)
        first.run_until_complete(client.get(server.url))
        second.run_until_complete(client.get(server.url))
        assert server.connections == 2
        assert idle(transport) == 2
        first.run_until_complete(transport.aclose())  # the other loop's: handed to it
        second.run_until_complete(asyncio.sleep(0.05))
        assert idle(transport) == 0
    finally:
        first.close()
        second.close()
    server.close()
    assert sorted(server.ended) == [1, 2]


def test_the_pools_of_closed_event_loops_are_forgotten(serving: Callable[..., Server]) -> None:
    # a pool holds its loop (through its connections): kept, it would never be freed
    server = serving(keep_answering(ok()))
    transport = lean()
    client = httpx2.AsyncClient(transport=transport)
    first = asyncio.new_event_loop()
    first.run_until_complete(client.get(server.url))

    async def close_idle() -> None:  # as the loop's owner would; the pool keeps them
        for conns in transport._pools[first].values():
            for conn in conns:
                conn.abort()
        await asyncio.sleep(0)

    first.run_until_complete(close_idle())
    first.close()
    assert list(transport._pools) == [first]
    asyncio.run(get_all(transport, server.url))
    assert first not in list(transport._pools)


def test_aclose_closes_every_pooled_connection(serving: Callable[..., Server]) -> None:
    server = serving(keep_answering(ok()))
    transport = lean()

    async def main() -> int:
        client = httpx2.AsyncClient(transport=transport)
        await asyncio.gather(*(client.get(server.url) for _ in range(3)))
        pooled = idle(transport)
        await transport.aclose()
        await asyncio.sleep(0)
        return pooled

    assert asyncio.run(main()) == 3
    server.close()
    assert sorted(server.ended) == [1, 2, 3]


def test_cancelling_a_request_closes_its_connection(serving: Callable[..., Server]) -> None:
    asked = threading.Event()

    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        while server.next(f) is not None:
            if len(server.requests) == 2:
                asked.set()  # and never answer this one
                continue
            conn.sendall(ok())

    server = serving(serve)
    transport = lean()

    async def main() -> None:
        client = httpx2.AsyncClient(transport=transport)
        await client.get(server.url)
        task = asyncio.create_task(client.get(server.url))
        assert await asyncio.to_thread(asked.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert idle(transport) == 0
        assert (await client.get(server.url)).status_code == 200
        await client.aclose()

    asyncio.run(main())
    server.close()
    assert server.connections == 2
    assert 1 in server.ended


def test_a_body_closed_before_its_end_closes_its_connection(
    serving: Callable[..., Server],
) -> None:
    server = serving(keep_answering(ok(b"x" * 200_000)))
    transport = lean()

    async def main() -> None:
        client = httpx2.AsyncClient(transport=transport)
        async with client.stream("GET", server.url) as response:
            async for _ in response.aiter_raw():
                break
        assert idle(transport) == 0
        assert len((await client.get(server.url)).content) == 200_000
        assert idle(transport) == 1
        await client.aclose()

    asyncio.run(main())
    assert server.connections == 2


# -- answers -----------------------------------------------------------------------------


def chunked(*pieces: bytes, trailers: bytes = b"") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces if p)
    return (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + body
        + b"0\r\n"
        + trailers
        + b"\r\n"
    )


def test_a_chunked_answer_with_trailers_is_read_and_its_connection_kept(
    serving: Callable[..., Server],
) -> None:
    server = serving(keep_answering(chunked(b'{"a"', b": 1}", trailers=b"X-Sum: 3\r\n")))
    assert asyncio.run(get_all(lean(), server.url, 2)) == [b'{"a": 1}'] * 2
    assert server.connections == 1


def test_interim_1xx_answers_are_skipped(serving: Callable[..., Server]) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
    server = serving(keep_answering(interim + ok()))
    assert asyncio.run(get_all(lean(), server.url, 2)) == [b'{"ok": true}'] * 2
    assert server.connections == 1


def test_endless_interim_answers_are_a_protocol_error(serving: Callable[..., Server]) -> None:
    # a server that never gets past "100 Continue" (with the bound, 64 KiB of them;
    # without, the client would loop for as long as they come)
    interim = b"HTTP/1.1 100 Continue\r\nX-Pad: " + b"p" * 1000 + b"\r\n\r\n"

    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        server.next(f)
        try:
            for _ in range(100_000):
                conn.sendall(interim)
        except OSError:
            pass

    server = serving(serve)
    with pytest.raises(httpx2.RemoteProtocolError, match="interim"):
        asyncio.run(get_all(lean(), server.url))


@pytest.mark.parametrize(
    ("method", "answer"),
    [
        ("HEAD", b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
        ("GET", b"HTTP/1.1 204 No Content\r\n\r\n"),
        ("GET", b"HTTP/1.1 304 Not Modified\r\nContent-Length: 12\r\n\r\n"),
    ],
)
def test_head_204_and_304_answers_have_no_body(
    serving: Callable[..., Server], method: str, answer: bytes
) -> None:
    server = serving(keep_answering(answer))

    async def main() -> list[bytes]:
        client = httpx2.AsyncClient(transport=lean())
        out = [(await client.request(method, server.url)).content for _ in range(2)]
        await client.aclose()
        return out

    assert asyncio.run(main()) == [b"", b""]
    assert server.connections == 1  # the next answer was not taken for a body


def test_a_streamed_answer_reaches_the_caller_as_it_arrives(
    serving: Callable[..., Server],
) -> None:
    seen = threading.Event()
    waited: list[bool] = []
    event = b"event: ping\ndata: {}\n\n"

    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        server.next(f)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(event), event)
        )
        waited.append(seen.wait(timeout=10))
        conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))

    server = serving(serve)

    async def main() -> list[bytes]:
        client = httpx2.AsyncClient(transport=lean())
        async with client.stream("GET", server.url) as response:
            chunks = response.aiter_raw()
            first = await chunks.__anext__()
            seen.set()
            rest = [c async for c in chunks]
        await client.aclose()
        return [first, *rest]

    assert asyncio.run(main()) == [event, event]
    assert waited == [True]  # the first event was seen while the stream was still open


async def decode(wire: list[bytes], framing: int, length: int = 0) -> bytes:
    """A body read off a connection fed ``wire`` piece by piece (then its end)."""
    loop = asyncio.get_running_loop()
    conn = _atransport._Conn(loop)
    for piece in wire:
        loop.call_soon(conn.data_received, piece)
    loop.call_soon(conn.eof_received)
    request = httpx2.Request("GET", "http://x/")
    body = _atransport._Body(lean(), ("http", "x", 80), conn, request, framing, length, True, 5)
    try:
        return b"".join([chunk async for chunk in body])
    finally:
        await body.aclose()


def cut(data: bytes, points: list[int]) -> list[bytes]:
    points = sorted({p % (len(data) + 1) for p in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


@settings(max_examples=150, deadline=None)
@given(
    body=st.binary(max_size=3000),
    chunk_cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=12),
    wire_cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20),
    trailers=st.sampled_from([b"", b"X-A: 1\r\n", b"X-A: 1\r\nX-B: two\r\n"]),
)
def test_chunked_decoding_of_any_chunking_gives_the_body(
    body: bytes, chunk_cuts: list[int], wire_cuts: list[int], trailers: bytes
) -> None:
    wire = chunked(*cut(body, chunk_cuts), trailers=trailers).split(b"\r\n\r\n", 1)[1]
    assert asyncio.run(decode(cut(wire, wire_cuts), _atransport._CHUNKED)) == body


@settings(max_examples=50, deadline=None)
@given(body=st.binary(max_size=3000), wire_cuts=st.lists(st.integers(0, 3000), max_size=20))
def test_length_and_eof_bodies_of_any_segmentation_give_the_body(
    body: bytes, wire_cuts: list[int]
) -> None:
    pieces = cut(body, wire_cuts)
    assert asyncio.run(decode(pieces, _atransport._LENGTH, len(body))) == body
    assert asyncio.run(decode(pieces, _atransport._EOF)) == body


# -- hostile and broken answers ---------------------------------------------------------


MALFORMED = {
    "status-line": b"HTTP/1.1 OK\r\nContent-Length: 2\r\n\r\n{}",
    "not-http": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "header-without-colon": b"HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\n{}",
    "space-in-header-name": b"HTTP/1.1 200 OK\r\nContent Length: 2\r\n\r\n{}",
    "folded-header": b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\nContent-Length: 2\r\n\r\n{}",
    "bare-lf": b"HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 2\r\n\r\n{}",
    "conflicting-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "signed-length": b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}",
    "gzip-transfer-coding": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n{}",
    "unasked-101": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
}


def sdk(server: Server, **kw: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="k",
        base_url=server.url.rstrip("/"),
        max_retries=0,
        http_client=lean_async_http_client(tls_context()),
        **kw,
    )


async def create(client: anthropic.AsyncAnthropic) -> Any:
    try:
        return await client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
    finally:
        await client.close()


@pytest.mark.parametrize("answer", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_answer_is_an_api_connection_error_through_the_sdk(
    serving: Callable[..., Server], answer: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    server = serving(answer_once(answer))
    with pytest.raises(anthropic.APIConnectionError) as info:
        asyncio.run(create(sdk(server)))
    assert not isinstance(info.value, anthropic.APITimeoutError)
    assert isinstance(info.value.__cause__, httpx2.RemoteProtocolError)


def test_the_same_answers_well_formed_are_read(
    serving: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    reply = verdict_reply(GOOD).to_json().encode()
    server = serving(
        answer_once(ok(reply, b"X-A: 1", b"Content-Length: %d" % len(reply), b"X-Empty:"))
    )
    message = asyncio.run(create(sdk(server)))
    assert message.stop_reason == verdict_reply(GOOD).stop_reason


@pytest.mark.parametrize("size", [60_000, 70_000])
def test_an_oversized_head_is_rejected_and_one_under_the_bound_read(
    serving: Callable[..., Server], size: int
) -> None:
    # the server sends a head that never ends; without the bound the client would read
    # (and keep) it until the read timeout
    filler = b"X-Filler: " + b"a" * 990 + b"\r\n"
    head = b"HTTP/1.1 200 OK\r\n" + filler * (size // len(filler))

    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        server.next(f)
        conn.sendall(head)
        if size < _atransport.MAX_HEAD:
            conn.sendall(b"Content-Length: 2\r\n\r\n{}")
        f.read(1)  # hold the connection open until the client hangs up

    server = serving(serve)
    run = get_all(lean(), server.url, timeout=httpx2.Timeout(30))
    if size < _atransport.MAX_HEAD:
        assert asyncio.run(run) == [b"{}"]
    else:
        with pytest.raises(httpx2.RemoteProtocolError, match="head is over 65536"):
            asyncio.run(run)


TRAILER = b"X-T: " + b"t" * 1000 + b"\r\n"


@pytest.mark.parametrize(
    ("pieces", "error"),
    [
        ([b"1" * 5000], "over 4096"),  # a chunk-size line that never ends
        ([b"2;" + b"e" * 5000 + b"\r\n{}\r\n0\r\n\r\n"], "over 4096"),
        ([b"2\r\n{}\r\n0\r\n", TRAILER * 100 + b"\r\n"], "trailers are over 65536"),
        ([b"2\r\n{}xx\r\n0\r\n\r\n"], "longer than its size"),
        ([b"zz\r\n{}\r\n0\r\n\r\n"], "malformed chunk size"),
        ([b"0x2\r\n{}\r\n0\r\n\r\n"], "malformed chunk size"),
    ],
    ids=["long-size", "long-extension", "long-trailers", "overlong-chunk", "not-hex", "0x"],
)
def test_a_broken_chunked_body_is_a_protocol_error(pieces: list[bytes], error: str) -> None:
    with pytest.raises(httpx2.RemoteProtocolError, match=error):
        asyncio.run(decode(pieces, _atransport._CHUNKED))


def test_a_long_chunk_extension_and_trailers_under_the_bounds_are_read() -> None:
    wire = b"2;" + b"e" * 4000 + b"\r\n{}\r\n0\r\n" + TRAILER * 60 + b"\r\n"
    assert asyncio.run(decode([wire], _atransport._CHUNKED)) == b"{}"


def test_a_body_cut_short_is_an_error_not_a_short_body() -> None:
    with pytest.raises(httpx2.RemoteProtocolError, match="before the body's end"):
        asyncio.run(decode([b"{}"], _atransport._LENGTH, 5))
    with pytest.raises(httpx2.RemoteProtocolError, match="before the body's end"):
        asyncio.run(decode([b"5\r\n{}"], _atransport._CHUNKED))


def test_a_header_holding_a_line_break_is_refused_before_sending(
    serving: Callable[..., Server],
) -> None:
    server = serving(keep_answering(ok()))
    with pytest.raises(httpx2.LocalProtocolError):
        asyncio.run(get_all(lean(), server.url, headers={"X-A": "1\r\nX-Injected: 1"}))
    assert asyncio.run(get_all(lean(), server.url, headers={"X-A": "1, 2"})) == [b'{"ok": true}']
    assert all(b"injected" not in r.lower() for r in server.requests)


# -- timeouts and failures through the SDK -----------------------------------------------


def test_a_slow_answer_is_an_api_timeout_error(
    serving: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    release = threading.Event()

    def serve(conn: socket.socket, f: BinaryIO, server: Server) -> None:
        server.next(f)
        release.wait(30)

    server = serving(serve)
    try:
        with pytest.raises(anthropic.APITimeoutError) as info:
            asyncio.run(create(sdk(server, timeout=0.2)))
        assert isinstance(info.value.__cause__, httpx2.ReadTimeout)
    finally:
        release.set()


def test_a_refused_connection_is_an_api_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = anthropic.AsyncAnthropic(
        api_key="k",
        base_url=f"http://127.0.0.1:{port}",
        max_retries=0,
        http_client=lean_async_http_client(tls_context()),
    )
    with pytest.raises(anthropic.APIConnectionError) as info:
        asyncio.run(create(client))
    assert isinstance(info.value.__cause__, httpx2.ConnectError)


def test_a_chunked_request_body_goes_to_httpxs_own_transport(
    serving: Callable[..., Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serving(keep_answering(b"HTTP/1.1 204 No Content\r\n\r\n"))
    transport = lean()
    used: list[str] = []
    own = transport._httpx
    monkeypatch.setattr(transport, "_httpx", lambda: used.append("httpx") or own())

    async def parts() -> Any:
        yield b"a"
        yield b"b"

    async def main() -> None:
        client = httpx2.AsyncClient(transport=transport)
        assert (await client.post(server.url, content=parts())).status_code == 204
        assert used == ["httpx"]
        assert (await client.post(server.url, content=b"ab")).status_code == 204
        assert used == ["httpx"]  # a plain body stays on the lean path
        await client.aclose()

    asyncio.run(main())
    assert b"transfer-encoding: chunked" in server.requests[0].lower()


# -- TLS ---------------------------------------------------------------------------------


def self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:  # no skip: openssl must then be there
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True,
        )  # fmt: skip
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


def test_https_with_a_context_trusting_the_servers_certificate(
    serving: Callable[..., Server], tmp_path: Path
) -> None:
    cert, key = self_signed(tmp_path)
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    server = serving(keep_answering(ok()), tls=server_side)
    trusting = ssl.create_default_context(cafile=str(cert))
    transport = LeanAsyncTransport(trusting)
    assert asyncio.run(get_all(transport, server.url, 2)) == [b'{"ok": true}'] * 2
    assert server.connections == 1
    # the default context does not trust it: a connect error, as with httpx's transport
    with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(get_all(lean(), server.url))
