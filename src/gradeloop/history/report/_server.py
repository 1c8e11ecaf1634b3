"""The local viewer: the report's pages served by the standard library's HTTP server.

Bound to 127.0.0.1 only, and it answers only requests addressed to that host (or
``localhost``) on its own port, so a web page elsewhere cannot reach it through a
DNS-rebinding trick. It serves GET and HEAD; every other method is refused. Each
request opens the database read-only (:class:`ReadOnlyHistory`), so the pages show
what is on disk now and nothing is ever written.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, unquote, urlsplit

from ...errors import GradeloopError, InputError, LoopNotFoundError
from ._db import ReadOnlyHistory
from ._html import CSP_HEADER, el, join, page
from ._pages import compare_page, index_page, item_page, query_filters

__all__ = ["HOST", "LoopbackServer", "Viewer"]

HOST = "127.0.0.1"
_HEADERS = {
    "Content-Security-Policy": CSP_HEADER,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def render(db_path: Path, target: str) -> tuple[int, str]:
    """The status and page for a request target such as ``/loop/ID?x=y``."""
    parts = urlsplit(target)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    path = parts.path
    try:
        with ReadOnlyHistory(db_path) as db:
            if path in ("/", "/index.html"):
                return 200, index_page(db, query_filters(query), query)
            if path.startswith("/loop/") or path.startswith("/run/"):
                kind, _, ident = path[1:].partition("/")
                return 200, item_page(db, kind, unquote(ident))
            if path == "/compare":
                return 200, compare_page(db, query.get("a", ""), query.get("b", ""))
            return 404, _problem("not found", f"there is no page {path}")
    except LoopNotFoundError as exc:
        return 404, _problem("not found", str(exc))
    except InputError as exc:
        return 400, _problem("bad request", str(exc))
    except GradeloopError as exc:
        return 500, _problem("cannot read the history", str(exc))


def _problem(title: str, message: str) -> str:
    body = join(
        [
            el("h1", title),
            el("p", message, class_="problem"),
            el("p", el("a", "back to the list", href="/")),
        ]
    )
    return page(f"gradeloop: {title}", body)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def _host_allowed(self) -> bool:
        port = self.server.server_address[1]
        host = (self.headers.get("Host") or "").lower()
        return host in (f"{HOST}:{port}", f"localhost:{port}")

    def _send(self, status: int, text: str, *, body: bool = True) -> None:
        data = text.encode("utf-8", errors="replace")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in _HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _answer(self, *, body: bool) -> None:
        if not self._host_allowed():
            self._send(
                421, _problem("wrong host", "this viewer answers only on 127.0.0.1"), body=body
            )
            return
        try:
            status, text = render(self.server.db_path, self.path)
        except Exception as exc:  # a bug must not kill the server; show it, plainly
            status, text = 500, _problem("internal error", f"{type(exc).__name__}: {exc}")
        self._send(status, text, body=body)

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _refuse(self) -> None:
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, db_path: Path, port: int, verbose: bool) -> None:
        self.db_path, self.verbose = db_path, verbose
        super().__init__((HOST, port), _Handler)


class LoopbackServer:
    """Serving one ``ThreadingHTTPServer`` (``self._server``) on 127.0.0.1: where it
    answers, in this thread or a background one, and stopping it."""

    _server: ThreadingHTTPServer
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where the server answers."""
        return f"http://{HOST}:{self._server.server_address[1]}/"

    def serve_forever(self) -> None:
        """Answer requests until :meth:`shutdown` (or Ctrl-C in the caller)."""
        self._server.serve_forever(poll_interval=0.1)

    def start(self) -> Self:
        """Serve from a background thread (for tests and embedding)."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()


class Viewer(LoopbackServer):
    """The viewer of one history database, listening on 127.0.0.1.

    ``port=0`` picks a free port; :attr:`url` says which. The database is checked
    (it must exist and be a gradeloop history) before the port is opened.
    """

    def __init__(
        self, db_path: str | Path | None = None, port: int = 0, *, verbose: bool = False
    ) -> None:
        with ReadOnlyHistory(db_path) as db:  # fail fast, before listening
            self.db_path = db.path
        if not 0 <= port <= 65535:
            raise InputError(f"--port must be from 0 to 65535, not {port}")
        try:
            self._server = _Server(self.db_path, port, verbose)
        except OSError as exc:
            raise InputError(f"cannot listen on {HOST}:{port}: {exc.strerror}") from None
        self._thread = None
