"""The labelling server: the viewer's server, its protections, and one way in for marks.

Like the viewer it binds 127.0.0.1 only and answers only requests addressed to that
host (or ``localhost``) on its own port, so no other site can reach it through DNS
rebinding. It writes nothing but the labels file, and takes a mark only as a POST to
``/label`` that carries the session's random token (on every page it serves, never
anywhere else) and, when the browser says where the request comes from, an
``Origin`` that is this server: a page elsewhere can neither read the token nor
post a mark in the labeller's name. A body is at most 4 KiB.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ...errors import GradeloopError, InputError
from ._label import LabelSession, whole_number
from ._label_pages import LABEL_CSP, LABEL_SCRIPT, index_page, item_page, progress, shown
from ._server import HOST, LoopbackServer, _Handler, _problem

__all__ = ["Labeller"]

_MAX_BODY = 4096
_ITEM = re.compile(r"/item/([0-9]{1,9})")
_HEADERS = {
    "Content-Security-Policy": LABEL_CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class _LabelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, session: LabelSession, port: int, verbose: bool) -> None:
        self.session, self.verbose = session, verbose
        self.token = secrets.token_urlsafe(24)
        super().__init__((HOST, port), _LabelHandler)


class _LabelHandler(_Handler):
    server: _LabelServer  # type: ignore[assignment]

    def _reply(
        self, status: int, data: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in {**_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _html(self, status: int, text: str) -> None:
        self._reply(status, text.encode("utf-8", "replace"), "text/html; charset=utf-8")

    def _json(self, status: int, data: dict[str, Any]) -> None:
        self._reply(status, json.dumps(data).encode(), "application/json")

    def _answer(self, *, body: bool) -> None:
        if not self._host_allowed():
            self._html(421, _problem("wrong host", "this page answers only on 127.0.0.1"))
            return
        session, token = self.server.session, self.server.token
        path = urlsplit(self.path).path
        if path == "/label.js":
            self._reply(200, LABEL_SCRIPT.encode(), "text/javascript; charset=utf-8")
            return
        if path in ("/", "/index.html"):
            self._html(200, index_page(session, token))
            return
        found = _ITEM.fullmatch(path)
        if found and 1 <= int(found.group(1)) <= len(session.drafts):
            self._html(200, item_page(session, int(found.group(1)) - 1, token))
            return
        self._html(404, _problem("not found", f"there is no page {path}"))

    def _origin_allowed(self) -> bool:
        origin = self.headers.get("Origin")
        if origin is None:
            return True  # not a browser's cross-site request: the token still decides
        port = self.server.server_address[1]
        return origin.lower() in (f"http://{HOST}:{port}", f"http://localhost:{port}")

    def do_POST(self) -> None:
        if not self._host_allowed() or not self._origin_allowed():
            self._json(403, {"error": "this server takes marks only from its own pages"})
            return
        if urlsplit(self.path).path != "/label":
            self._json(404, {"error": f"there is nothing to post to {self.path}"})
            return
        length = whole_number(self.headers.get("Content-Length") or "")
        if length is None or length > _MAX_BODY:
            self._json(413, {"error": f"a mark is at most {_MAX_BODY} bytes"})
            return
        raw = self.rfile.read(length).decode("utf-8", "replace")
        fields = dict(parse_qsl(raw, keep_blank_values=True))
        if not hmac.compare_digest(fields.get("token", ""), self.server.token):
            self._json(403, {"error": "the page's token is missing or stale; reload the page"})
            return
        self._mark(fields)

    def _mark(self, fields: dict[str, str]) -> None:
        session = self.server.session
        item = fields.get("item", "")
        try:
            number = whole_number(item)
            if number is None:
                raise InputError(f"item must be a draft number, not {item!r}")
            index = number - 1
            key = fields.get("key", "")
            value = session.mark(index, key, fields.get("value", ""))
        except InputError as exc:
            self._json(400, {"error": str(exc)})
            return
        except (GradeloopError, OSError) as exc:
            self._json(500, {"error": f"the labels file was not written: {exc}"})
            return
        if "application/json" in (self.headers.get("Accept") or ""):
            self._json(
                200,
                {
                    "value": value,
                    "shown": shown(session.key(key), value),
                    "progress": progress(session),
                    "labelled": session.labelled,
                },
            )
            return
        self._reply(303, b"", "text/plain", {"Location": f"/item/{index + 1}"})  # no script


class Labeller(LoopbackServer):
    """The labelling page of one session, on 127.0.0.1 (``port=0`` picks a free port)."""

    def __init__(self, session: LabelSession, port: int = 0, *, verbose: bool = False) -> None:
        if not 0 <= port <= 65535:
            raise InputError(f"--port must be from 0 to 65535, not {port}")
        try:
            self._server = _LabelServer(session, port, verbose)
        except OSError as exc:
            raise InputError(f"cannot listen on {HOST}:{port}: {exc.strerror}") from None
        self.session = session
        self._thread = None
