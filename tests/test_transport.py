"""The lean http.client transport under the SDK's httpx client (gradeloop.models._transport)."""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from gradeloop.errors import JudgeError
from gradeloop.grading._rubric import Criterion
from gradeloop.models._aclient import tls_context
from gradeloop.models._client import make_client
from gradeloop.models._judge import AnthropicJudge
from gradeloop.testing import verdict_reply
from tests.emulator import Emulator, http_error

CRITERIA = (Criterion(key="api_cited", description="Every API claim cites a spec section."),)
GOOD = {"reasoning": "r", "criteria_met": {"api_cited": True}, "passed": True, "issues": []}


def transport_of(client: Any) -> Any:
    return client._client._transport


def lean(**kw: Any) -> Any:
    from gradeloop.models._transport import LeanTransport

    return LeanTransport(tls_context(), **kw)


@pytest.fixture
def keep_alive() -> Iterator[Emulator]:
    server = Emulator(keep_alive=True)
    try:
        yield server
    finally:
        server.close()


def test_make_client_sends_over_the_lean_transport_unless_a_proxy_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gradeloop.models._transport import LeanTransport

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(transport_of(make_client(base_url="http://127.0.0.1:9")), LeanTransport)
    monkeypatch.setenv("GRADELOOP_HTTPX_TRANSPORT", "0")  # "0" and "" do not opt out
    assert isinstance(transport_of(make_client(base_url="http://127.0.0.1:9")), LeanTransport)
    monkeypatch.setenv("GRADELOOP_HTTPX_TRANSPORT", "1")  # the user's way back to httpx's
    assert not isinstance(transport_of(make_client(base_url="http://127.0.0.1:9")), LeanTransport)
    monkeypatch.delenv("GRADELOOP_HTTPX_TRANSPORT")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    # httpx applies environment proxies only to its own transports: keep them
    assert not isinstance(transport_of(make_client(base_url="http://127.0.0.1:9")), LeanTransport)


def test_a_kept_alive_connection_carries_every_request(keep_alive: Emulator) -> None:
    keep_alive.responder = lambda body: verdict_reply(GOOD)
    client = make_client(base_url=keep_alive.base_url)
    j = AnthropicJudge(client=client)
    for _ in range(3):
        assert j.evaluate("t", "d", CRITERIA).passed
    idle = transport_of(client)._idle
    assert [len(conns) for conns in idle.values()] == [1]
    assert [r.headers["x-stainless-retry-count"] for r in keep_alive.requests] == ["0"] * 3


def test_a_server_that_closes_each_connection_is_reconnected_to(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(GOOD)  # HTTP/1.0: closes after each
    client = make_client(base_url=emulator.base_url)
    j = AnthropicJudge(client=client)
    for _ in range(3):
        assert j.evaluate("t", "d", CRITERIA).passed
    assert all(not conns for conns in transport_of(client)._idle.values())


def test_retries_and_typed_errors_are_still_the_sdks(keep_alive: Emulator) -> None:
    keep_alive.enqueue(http_error(529, "busy"), verdict_reply(GOOD), http_error(400, "bad"))
    j = AnthropicJudge(client=make_client(base_url=keep_alive.base_url, max_retries=1))
    assert j.evaluate("t", "d", CRITERIA).passed  # the 529 was retried by the SDK
    with pytest.raises(JudgeError, match="HTTP 400 BadRequestError"):
        j.evaluate("t", "d", CRITERIA)
    retries = [r.headers["x-stainless-retry-count"] for r in keep_alive.requests]
    assert retries == ["0", "1", "0"]


def test_a_refused_connection_is_an_api_error_after_the_sdks_retries() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    j = AnthropicJudge(client=make_client(base_url=f"http://127.0.0.1:{port}", max_retries=0))
    with pytest.raises(JudgeError, match="APIConnectionError") as info:
        j.evaluate("t", "d", CRITERIA)
    assert info.value.reason == "api_error"


def test_a_slow_answer_is_a_timeout(keep_alive: Emulator) -> None:
    keep_alive.latency = 1.0
    keep_alive.responder = lambda body: verdict_reply(GOOD)
    client = make_client(base_url=keep_alive.base_url, max_retries=0).with_options(timeout=0.2)
    with pytest.raises(JudgeError, match="APITimeoutError"):
        AnthropicJudge(client=client).evaluate("t", "d", CRITERIA)


class OneShotServer:
    """Answers each connection's first request with ``answer`` and then closes it."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests.append(head)
                conn.sendall(self.answer)

    def close(self) -> None:
        self.sock.close()


def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    import httpx2

    body = b'{"ok": true}'
    # HTTP/1.1 without "Connection: close": the client may keep it, but the server
    # closes it right after answering
    server = OneShotServer(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    try:
        with httpx2.Client(transport=lean()) as client:
            for _ in range(3):
                assert client.post(f"http://127.0.0.1:{server.port}/x", json={}).json() == {
                    "ok": True
                }
        assert server.connections == 3
    finally:
        server.close()


def test_a_kept_alive_connection_found_closed_on_use_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The race the idle check cannot close: the server shuts a kept-alive connection
    # just after the check said it was open. Made certain here by a check that always
    # says "open": the request on the dead connection fails before any answer, and is
    # sent once more on a fresh one (nothing had reached the server).
    import httpx2

    from gradeloop.models import _transport

    monkeypatch.setattr(_transport, "_usable", lambda conn: True)
    body = b'{"ok": true}'
    server = OneShotServer(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    try:
        with httpx2.Client(transport=lean()) as client:
            for _ in range(3):
                response = client.post(f"http://127.0.0.1:{server.port}/x", json={})
                assert response.json() == {"ok": True}
        assert server.connections == 3
        assert len(server.requests) == 3  # each request reached the server once
    finally:
        server.close()


def test_a_fresh_connection_closed_without_an_answer_is_an_error_not_a_retry() -> None:
    import httpx2

    server = OneShotServer(b"")  # reads the request, then hangs up without answering
    try:
        with (
            httpx2.Client(transport=lean()) as client,
            pytest.raises(httpx2.RemoteProtocolError, match="RemoteDisconnected"),
        ):
            client.post(f"http://127.0.0.1:{server.port}/x", json={})
        assert server.connections == 1  # the request may have been acted on: not resent
    finally:
        server.close()


def test_a_compressed_body_is_decoded_by_httpx_above_the_transport() -> None:
    import httpx2

    packed = gzip.compress(b'{"packed": 1}')
    server = OneShotServer(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n"
        + f"Content-Length: {len(packed)}\r\n\r\n".encode()
        + packed
    )
    try:
        with httpx2.Client(transport=lean()) as client:
            assert client.get(f"http://127.0.0.1:{server.port}/").json() == {"packed": 1}
    finally:
        server.close()


def test_a_chunked_request_body_goes_to_httpxs_own_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx2

    server = OneShotServer(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
    transport = lean()
    used: list[str] = []
    own = transport._httpx
    monkeypatch.setattr(transport, "_httpx", lambda: used.append("httpx") or own())
    try:
        with httpx2.Client(transport=transport) as client:
            url = f"http://127.0.0.1:{server.port}/"
            assert client.post(url, content=iter([b"a", b"b"])).status_code == 204
            assert used == ["httpx"]
            assert client.post(url, content=b"ab").status_code == 204
            assert used == ["httpx"]  # a plain body stays on the lean path
        assert b"transfer-encoding: chunked" in server.requests[0].lower()
    finally:
        server.close()


def test_a_batch_is_submitted_and_its_streamed_results_collected(
    keep_alive: Emulator, tmp_path: Any
) -> None:
    from gradeloop import HistoryStore, Rubric, batches

    rubric = Rubric.from_dict({"criteria": [{"key": "api_cited", "description": "Cites."}]})
    keep_alive.batches.outcome = lambda custom_id, params: verdict_reply(GOOD)
    j = AnthropicJudge(client=make_client(base_url=keep_alive.base_url, max_retries=0))
    drafts = [f"draft {i} " * 50 for i in range(300)]  # results well over one read's 64 KB
    with HistoryStore(tmp_path / "h.db") as store:
        job = batches.submit(drafts, rubric, judge=j, task="t", store=store)
        result = batches.collect(job, judge=j, store=store)
    assert [e.accepted for e in result.evaluations] == [True] * 300


def test_a_streamed_answer_reaches_the_client_as_it_arrives() -> None:
    # Server-sent events come in chunks over seconds: each must be handed up when it
    # arrives, not once 64 KB (or the end) is in. The server sends one event, then
    # waits for the client to have seen it before it ends the stream.
    import httpx2

    seen = threading.Event()
    waited: list[bool] = []
    sock = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            event = b"event: ping\ndata: {}\n\n"
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
                + f"{len(event):x}\r\n".encode()
                + event
                + b"\r\n"
            )
            waited.append(seen.wait(timeout=5))
            conn.sendall(b"0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with httpx2.Client(transport=lean()) as client:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
            with client.stream("GET", url) as response:
                chunks = response.iter_raw()
                assert next(chunks) == b"event: ping\ndata: {}\n\n"
                seen.set()
                assert list(chunks) == []
        thread.join(timeout=10)
        assert waited == [True]  # the event was seen while the stream was still open
    finally:
        sock.close()


def test_a_request_head_and_body_leave_in_one_send(
    keep_alive: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    import http.client

    sent: list[bytes] = []
    real = http.client.HTTPConnection.send

    def counting(self: http.client.HTTPConnection, data: Any) -> None:
        sent.append(bytes(data))
        real(self, data)

    monkeypatch.setattr(http.client.HTTPConnection, "send", counting)
    keep_alive.enqueue(verdict_reply(GOOD))
    client = make_client(base_url=keep_alive.base_url)
    try:
        AnthropicJudge(client=client).evaluate("t", "d", CRITERIA)
    finally:
        client.close()
    [request] = sent  # one write: the head and the JSON body together
    head, _, body = request.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/messages HTTP/1.1") and body.startswith(b"{")
    assert keep_alive.requests[0].body["messages"]
