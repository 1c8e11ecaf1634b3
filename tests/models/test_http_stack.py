"""HTTP is the SDK's own: proxies, a CA of the user's and timeouts work as it documents.

Every path gradeloop sends a judge request by (the sync client, the async twin on
aiohttp, the async twin on httpx when aiohttp is missing) is run through a loopback
proxy the test starts (tests/support/proxy.py): a plain ``HTTP_PROXY`` forward, ``NO_PROXY``
bypassing it, and ``HTTPS_PROXY`` tunnelling (CONNECT) to an emulator that serves TLS
with a certificate of a test CA, trusted through ``SSL_CERT_FILE`` alone.
"""

from __future__ import annotations

import ast
import asyncio
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, Criterion, Rubric, grade_many, make_client
from gradeloop.errors import JudgeError
from gradeloop.testing import verdict_reply
from tests.bulk.test_grade_many import without_aiohttp
from tests.support.emulator import Emulator
from tests.support.proxy import Proxy

ROOT = Path(__file__).resolve().parents[2]
CRITERIA = [Criterion(key="tone", description="Polite.")]
PATHS = ["sync", "async, aiohttp", "async, httpx"]
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def passing(body: object) -> object:
    return verdict_reply(
        {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
    )


@pytest.fixture(autouse=True)
def _clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def judged(path: str, base_url: str, monkeypatch: pytest.MonkeyPatch, **settings: Any) -> bool:
    """Judge one draft by ``path`` with a client built (from the environment as it is
    now) by make_client; whether the verdict passed."""
    if path.endswith("httpx"):
        without_aiohttp(monkeypatch)
    judge = AnthropicJudge(client=make_client(base_url=base_url, **settings))
    if path == "sync":
        return judge.evaluate("t", "d", CRITERIA).passed

    async def once() -> bool:
        try:
            return (await judge.aevaluate("t", "d", CRITERIA)).passed
        finally:
            await judge.aclose()

    return asyncio.run(once())


@pytest.mark.parametrize("path", PATHS)
def test_http_proxy_from_the_environment_carries_the_request(
    path: str, emulator: Emulator, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.responder = passing
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    assert judged(path, emulator.base_url, monkeypatch)
    assert proxy.seen == [f"POST {emulator.base_url}/v1/messages"]
    assert len(emulator.requests) == 1


@pytest.mark.parametrize("path", PATHS)
def test_no_proxy_bypasses_the_proxy(
    path: str, emulator: Emulator, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.responder = passing
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert judged(path, emulator.base_url, monkeypatch)
    assert proxy.seen == [] and len(emulator.requests) == 1


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ssl.SSLContext, Path]]:
    """A server TLS context with a certificate for 127.0.0.1, and its CA's PEM file."""
    import trustme

    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    pem = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    yield context, pem


@pytest.mark.parametrize("path", PATHS)
def test_https_through_a_connect_proxy_with_the_users_ca(
    path: str,
    proxy: Proxy,
    test_ca: tuple[ssl.SSLContext, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    context, pem = test_ca
    server = Emulator(tls=context)
    try:
        server.responder = passing
        assert server.base_url.startswith("https://127.0.0.1:")
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("SSL_CERT_FILE", str(pem))
        assert judged(path, server.base_url, monkeypatch, max_retries=0)
        host_port = server.base_url.removeprefix("https://")
        assert proxy.seen == [f"CONNECT {host_port}"]
        assert len(server.requests) == 1
    finally:
        server.close()


@pytest.mark.parametrize("path", PATHS)
def test_without_the_users_ca_the_certificate_is_refused(
    path: str, test_ca: tuple[ssl.SSLContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Emulator(tls=test_ca[0])
    try:
        server.responder = passing
        with pytest.raises(JudgeError, match="APIConnectionError") as info:
            judged(path, server.base_url, monkeypatch, max_retries=0)
        assert info.value.reason == "api_error"
        assert server.requests == []
    finally:
        server.close()


@pytest.mark.parametrize("path", PATHS)
def test_the_clients_timeout_holds_on_every_path(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Emulator(latency=2.0)
    try:
        server.responder = passing
        with pytest.raises(JudgeError, match="APITimeoutError"):
            judged(path, server.base_url, monkeypatch, max_retries=0, timeout=0.2)
        assert judged(path, server.base_url, monkeypatch, max_retries=0, timeout=10)
    finally:
        server.close()


def test_a_batch_through_the_proxy(
    emulator: Emulator, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.responder = passing
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    judge = AnthropicJudge(client=make_client(base_url=emulator.base_url))
    rubric = Rubric.from_dict({"criteria": [{"key": "tone", "description": "Polite."}]})
    out = grade_many([f"d{i}" for i in range(6)], rubric, judge=judge, concurrency=3)
    assert all(e.accepted for e in out)
    assert len(proxy.seen) == 6 and len(emulator.requests) == 6


# -- no module of gradeloop speaks HTTP itself ------------------------------------------

_HANDMADE_MODULES = {"http.client", "selectors", "asyncore", "asynchat"}
# attributes whose use means opening or serving connections by hand (asyncio's streams
# and protocols, a loop's create_connection, raw sockets, wrapping one in TLS)
_HANDMADE_ATTRIBUTES = {
    "Protocol",
    "open_connection",
    "start_server",
    "create_connection",
    "socket",
    "wrap_socket",
}
# the local viewer and labelling page serve on 127.0.0.1 with http.server
_SERVERS = {"gradeloop.history.report._server"}


def _project_modules() -> Iterator[tuple[str, Path]]:
    packages = (
        ("gradeloop", ROOT / "src" / "gradeloop"),
        ("gradeloop_checkers", ROOT / "checkers"),
    )
    for top, folder in packages:
        for file in folder.rglob("*.py"):
            parts = [top, *file.relative_to(folder).with_suffix("").parts]
            yield ".".join(p for p in parts if p != "__init__"), file


def handmade_http(source: str) -> list[str]:
    """What in ``source`` speaks HTTP or opens connections itself: imports of
    http.client or selectors, asyncio's Protocol / open_connection & co., raw sockets."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name in _HANDMADE_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module in _HANDMADE_MODULES:
                found.append(node.module)
            elif node.module in ("asyncio", "socket", "ssl"):
                found += [a.name for a in node.names if a.name in _HANDMADE_ATTRIBUTES]
        elif isinstance(node, ast.Attribute) and node.attr in _HANDMADE_ATTRIBUTES:
            found.append(node.attr)
    return found


def test_no_module_speaks_http_itself() -> None:
    offenders = {
        name: handmade_http(path.read_text(encoding="utf-8"))
        for name, path in _project_modules()
        if name not in _SERVERS
    }
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize(
    "source",
    [
        "import http.client",
        "from http.client import HTTPConnection",
        "import selectors",
        "s = socket.socket()",
        "socket.create_connection(('h', 1))",
        "ctx.wrap_socket(s)",
        "await loop.create_connection(P, 'h', 1)",
        "class P(asyncio.Protocol): pass",
        "async def f():\n    await asyncio.open_connection('h', 1)",
        "from asyncio import open_connection",
    ],
)
def test_the_scan_finds_each_way_of_speaking_http(source: str) -> None:
    assert handmade_http(source)


def test_the_scan_passes_what_leaves_http_to_the_sdk() -> None:
    fine = "import anthropic, asyncio, socket\nasyncio.run(main())\nsocket.gethostname()"
    assert handmade_http(fine) == []


# -- what the hand-written transports got wrong, pinned on the SDK's stack -------------


class HangsUp:
    """A server that reads each request whole, then closes without answering."""

    def __init__(self) -> None:
        import socket
        import threading

        self.posts = 0
        self.raw: list[bytes] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                        data += chunk
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = next(
                        (
                            int(h.split(b":")[1])
                            for h in head.split(b"\r\n")
                            if h.lower().startswith(b"content-length:")
                        ),
                        0,
                    )
                    while len(body) < length and (chunk := conn.recv(65536)):
                        body += chunk
                except OSError:
                    continue
                if head:
                    self.raw.append(head)
                if head.startswith(b"POST "):
                    self.posts += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("retries", [0, 1])
def test_a_post_the_server_read_is_sent_again_only_within_the_retry_budget(
    path: str, retries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every extra POST is a billed call: with max_retries=0 the server sees one
    server = HangsUp()
    try:
        with pytest.raises(JudgeError, match="APIConnectionError"):
            judged(path, server.base_url, monkeypatch, max_retries=retries)
    finally:
        server.close()
    assert server.posts == 1 + retries


@pytest.mark.parametrize("path", PATHS)
def test_a_key_with_a_line_break_is_never_sent(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a CR/LF + space inside a header value would fold it into the next line
    server = HangsUp()
    try:
        with pytest.raises(JudgeError) as info:
            judged(path, server.base_url, monkeypatch, api_key="sk-a\r\n b", max_retries=0)
    finally:
        server.close()
    assert server.raw == [] and "\n" not in str(info.value)
    assert info.value.reason == "api_error"
