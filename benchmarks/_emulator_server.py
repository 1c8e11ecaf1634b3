"""A Messages-API emulator in its own process, for benchmarks that time the client.

Started by ``bench_scale.py``: prints its base URL, then answers commands on stdin
(``count`` prints how many requests it received so far and the CPU seconds it has
used; ``quit`` stops it). Every
``/v1/messages`` request gets a valid verdict for the judge keys it was asked about
after ``--latency`` seconds; batch requests succeed the same way.

The answers are the test emulator's (``tests.support.emulator.Emulator.answer`` and its batch
desk: the same bodies, usage, ids and records). ``--front asyncio`` (the default)
serves them from one asyncio loop, HTTP/1.1 kept alive with Nagle off, each answer
written in one piece ``latency`` after its request's last byte was read (the
emulator's own work of building it counted in, not added on top; ``count`` also
gives the median and the largest lateness of the answers since the last ``count``,
and freezes the emulator's heap, see ``main``);
``--faults RATE`` makes that share of the ``/v1/messages`` answers a fault, each
kind equally often (seeded, ``--seed``): a 429 with ``retry-after: 1``, a 500, or the
connection reset without an answer (``bench_faults.py``; asyncio front only).
``--front threads`` is
the test emulator's own ``http.server`` (a thread per connection: at 32 in flight
about 1.0 ms of the server's CPU a request against 0.7-0.8 ms, which matters when the
server shares two cores with the client it is timing).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import socket
import sys
import threading
import time
from http import HTTPStatus
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.support.emulator

from tests.support.emulator import Emulator, HTTPError, Request

from gradeloop.testing import verdict_reply


def verdict_for(body: dict[str, Any]) -> Any:
    """A passing verdict naming exactly the keys the request's schema asks for."""
    schema = (body.get("output_config") or {}).get("format", {}).get("schema", {})
    met = schema.get("$defs", {}).get("CriteriaMet", {}).get("required", [])
    return verdict_reply(
        {
            "reasoning": "Every criterion is met; the draft cites its sources.",
            "criteria_met": dict.fromkeys(met, True),
            "passed": True,
            "issues": [],
        }
    )


class AsyncFront:
    """The emulator's routes served from one asyncio loop in a thread of its own.

    A request's arrival is stamped in ``data_received``, when the loop reads its last
    byte, before any request of the same read is worked on (the work is deferred by
    one loop iteration), so a burst of requests is not stamped one answer-build apart.
    Its answer is written at arrival + ``latency`` by a loop timer. The loop uses the
    platform's default selector (epoll on Linux): select(2) cannot watch a descriptor
    numbered past 1,023, which a few hundred clients in flight reach. ``lateness``
    holds how late each answer left, in seconds, for the benchmark to print.
    """

    def __init__(self, emulator: Emulator, faults: float = 0.0, seed: int = 0) -> None:
        self.emulator = emulator
        self.lateness: list[float] = []
        self.faults = faults
        self.random = random.Random(seed)
        self.faulted: dict[str, int] = {"429": 0, "500": 0, "reset": 0}
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        threading.Thread(target=self._run, args=(started,), daemon=True).start()
        started.wait()

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            self.loop.create_server(lambda: _Connection(self), "127.0.0.1", 0, backlog=4096)
        )
        self.port = server.sockets[0].getsockname()[1]
        started.set()
        self.loop.run_forever()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[tuple[int, dict[str, str], Any], bool]:
        """The answer to one request, and whether it waits out the latency."""
        emulator = self.emulator
        body: Any = None
        if method == "POST":
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode(errors="replace")
        with emulator._lock:
            emulator.requests.append(Request(method, path, headers, body))
        try:
            if emulator.batches.handles(path):
                if method == "POST":
                    return emulator.batches.post(path, body), False
                return emulator.batches.get(path), False
            if method == "POST" and path.split("?")[0] == "/v1/messages":
                fault = self.fault()
                if fault == "429":
                    limited = HTTPError(429, "rate limited (an injected fault)").body()
                    return (429, {"retry-after": "1"}, limited), True
                if fault == "500":
                    return (500, {}, HTTPError(500, "an injected fault").body()), True
                if fault == "reset":
                    return (0, {}, None), True
                return emulator.answer(body), True
            return (404, {}, HTTPError(404, f"no route {path}").body()), False
        except Exception as exc:  # a broken script must show up as a failed request
            return (500, {"x-should-retry": "false"}, HTTPError(500, repr(exc)).body()), False

    def fault(self) -> str | None:
        """The fault this answer is (None: a good answer), by the seeded draw."""
        if not self.faults or self.random.random() >= self.faults:
            return None
        kind = self.random.choice(("429", "500", "reset"))
        self.faulted[kind] += 1
        return kind


class _Connection(asyncio.Protocol):
    """One kept-alive connection: requests in order, each answered when it is due."""

    def __init__(self, front: AsyncFront) -> None:
        self.front = front
        self.loop = front.loop
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        arrived = self.loop.time()
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            try:
                method, path, headers = _parse_head(self.buffer[:end])
                length = int(headers.get("content-length") or 0)
            except ValueError:
                self.close()
                return
            if len(self.buffer) < end + 4 + length:
                return
            raw = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            self.loop.call_soon(self._work, method, path, headers, raw, arrived)

    def _work(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, arrived: float
    ) -> None:
        (status, extra, body), waits = self.front.answer(method, path, headers, raw)
        if status == 0:  # a reset: the connection dropped when the answer was due
            self.loop.call_at(arrived + self.front.emulator.latency, self.abort)
            return
        data = _response(status, extra, body)
        if not waits:
            self._write(data)
            return
        due = arrived + self.front.emulator.latency
        self.loop.call_at(due, self._send, data, due)

    def _send(self, data: bytes, due: float) -> None:
        self.front.lateness.append(self.loop.time() - due)
        self._write(data)

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return method, path, headers


def _response(status: int, headers: dict[str, str], body: Any) -> bytes:
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = dict(headers)
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        f"content-type: {headers.pop('content-type', 'application/json')}",
        f"content-length: {len(data)}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data


def open_files_limit() -> int:
    """Raise this process's limit on open descriptors to its hard limit (each client
    connection is one; the soft limit is often 1,024); the limit now."""
    try:
        import resource
    except ImportError:  # not on this platform
        return -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main() -> None:
    open_files_limit()
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--front", choices=("asyncio", "threads"), default="asyncio")
    parser.add_argument("--faults", type=float, default=0.0, help="share of faulty answers")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    emulator = Emulator(latency=args.latency, keep_alive=True)
    emulator.responder = verdict_for
    emulator.batches.outcome = lambda custom_id, params: verdict_for(params)
    front = AsyncFront(emulator, args.faults, args.seed) if args.front == "asyncio" else None
    print(front.base_url if front is not None else emulator.base_url, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "count":
            paths = [r.path.split("?")[0] for r in list(emulator.requests)]
            messages = sum(1 for p in paths if p == "/v1/messages")
            counts = {"messages": messages, "batches": len(paths) - messages}
            late = sorted(front.lateness) if front is not None else []
            if front is not None:
                front.lateness.clear()
            counts["late_median_ms"] = late[len(late) // 2] * 1000 if late else 0.0
            counts["late_max_ms"] = late[-1] * 1000 if late else 0.0
            if front is not None:
                counts.update({f"fault_{k}": v for k, v in front.faulted.items()})
            print(json.dumps({**counts, "cpu_s": time.process_time()}), flush=True)
            # every request received is kept: freeze them (between timed runs), or the
            # collector's full passes over them stop this loop for 120-155 ms
            gc.freeze()
        elif command == "quit":
            break
    emulator.close()


if __name__ == "__main__":
    main()
