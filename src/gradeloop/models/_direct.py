"""The direct lane: a judge request's 2xx answer without the SDK's request pipeline.

At 32 drafts in flight, ``grade_many`` is bound by one interpreter's CPU, and the
SDK's work for one request (its options copied and validated, the headers merged, the
URL parsed twice, httpx's auth, redirect and cookie steps, the answer wrapped and
parsed) costs more of it than anything else a graded draft needs: about 0.7 of 2.5 ms.
What it builds is the same every time, up to the body. So for an async twin that
gradeloop built itself (:func:`._aclient.async_twin`: the lean transport, gradeloop's
pacing as its only middleware), the lane lets the SDK build the first request of each
timeout and has the transport show it that request exactly as it was to be sent (the
*template*: URL, headers in order, timeouts); later requests with the same timeout
are the template plus their own body, written straight to the transport.

Only one outcome stays on the lane: a 2xx answer with a JSON content type and a JSON
body, decoded as the SDK decodes it for ``cast_to=object``. Cookies are httpx's as
on the SDK's path: the client's jar gives each request its ``Cookie`` header (the
template keeps none) and takes the answer's ``Set-Cookie``. Anything else (another
status, a non-JSON answer, a connection error or a timeout) is handed to the SDK as
the outcome of its own first attempt: the SDK is
called as usual and the transport answers its first request with that outcome
instead of sending it again. So its retries and their backoff, ``retry-after``, its
typed errors and gradeloop's pacing act on it exactly as if the SDK had sent the
request itself.

Off the lane (the SDK does everything, as before): a client gradeloop did not build,
a client with custom auth, an idempotency header or user middleware, a
request whose span could be recorded (:func:`._raw._spans_recorded`), and any request
while the ``anthropic`` logger logs at DEBUG (the SDK logs each request it sends).
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Hashable
from typing import Any

import httpx2

from ._atransport import LeanAsyncTransport, Tap, tapped
from ._pacing import active_pacer

__all__ = ["Lane", "lane_for", "open_lane"]

_PATH = "/v1/messages"
_LANES: weakref.WeakKeyDictionary[Any, Lane] = weakref.WeakKeyDictionary()
_SDK_LOG = logging.getLogger("anthropic")
_PER_REQUEST = (b"content-length", b"cookie")  # headers a template does not keep


def open_lane(client: Any, transport: LeanAsyncTransport, http_client: Any) -> None:
    """Give ``client`` (an async twin just built on ``http_client``, whose transport
    is ``transport``) a direct lane."""
    _LANES[client] = Lane(transport, http_client)


def lane_for(client: Any) -> Lane | None:
    """``client``'s lane, when it has one and may use it now."""
    lane = _LANES.get(client)
    if (
        lane is None
        or getattr(client, "custom_auth", None) is not None
        or getattr(client, "_idempotency_header", None)
        or _SDK_LOG.isEnabledFor(logging.DEBUG)
    ):
        return None
    return lane


class _Template:
    """A request as the SDK built it, minus its body, its length and its cookies."""

    __slots__ = ("extensions", "headers", "url")

    def __init__(self, request: httpx2.Request) -> None:
        self.url = request.url
        self.headers = [(k, v) for k, v in request.headers.raw if k.lower() not in _PER_REQUEST]
        self.extensions = {"timeout": request.extensions.get("timeout")}

    @staticmethod
    def usable(request: httpx2.Request) -> bool:
        """Whether ``request`` can stand for every first attempt with its timeout: a
        POST, a first attempt, with a body of its own, asking the transport nothing
        but its timeouts (an ``sni_hostname`` goes to httpx's own transport)."""
        return (
            request.method == "POST"
            and request.headers.get("x-stainless-retry-count") == "0"
            and "transfer-encoding" not in request.headers
            and set(request.extensions) <= {"timeout"}
        )


class Lane:
    """One async twin's direct lane: its templates (one per timeout) and the pilots
    finding them."""

    def __init__(self, transport: LeanAsyncTransport, http_client: Any) -> None:
        self.transport = transport
        self.http = http_client
        self._templates: dict[Hashable, _Template] = {}
        self._pilots: dict[Hashable, asyncio.Event] = {}

    async def post(self, client: Any, content: bytes, options: dict[str, Any]) -> Any:
        """What ``client.post`` gives for the request (``content``, ``options``) with
        ``cast_to=object``, on the lane when its template is known."""
        key = _timeout_key(options.get("timeout"))
        template = self._templates.get(key)
        if template is None:
            pilot = self._pilots.get(key)
            if pilot is None:
                return await self._pilot(client, content, options, key)
            await pilot.wait()  # the pilot's request is built: its template, if any
            template = self._templates.get(key)
            if template is None:
                return await _by_sdk(client, content, options, None)
        pacer = active_pacer()
        if pacer is not None:
            await pacer.wait()
        jar = self.http.cookies
        request = httpx2.Request(
            "POST",
            template.url,
            headers=template.headers,
            cookies=jar if jar else None,  # as httpx's client adds them
            content=content,
            extensions=template.extensions,
        )
        outcome: httpx2.Response | Exception
        try:
            response = await self.transport.handle_async_request(request)
            try:
                await response.aread()
            except BaseException:
                await response.aclose()
                raise
        except Exception as exc:  # the SDK types it, and retries it if it would
            outcome = exc
        else:
            outcome = response
            if _plain_success(response):
                try:
                    data = json.loads(response.content)
                except ValueError:
                    pass  # the SDK's own error for it
                else:
                    jar.extract_cookies(response)  # as httpx's client keeps them
                    if pacer is not None:
                        pacer.observe(response.status_code, response.headers)
                    return data
        return await _by_sdk(client, content, options, outcome)

    async def _pilot(
        self, client: Any, content: bytes, options: dict[str, Any], key: Hashable
    ) -> Any:
        """Send through the SDK, keeping the request it builds as the template for
        ``key``; requests that come meanwhile wait until it is built."""
        pilot = self._pilots[key] = asyncio.Event()

        def seen(request: httpx2.Request) -> None:
            if _Template.usable(request):
                self._templates[key] = _Template(request)
            pilot.set()

        try:
            with tapped(Tap(seen=seen)):
                return await _call_sdk(client, content, options)
        finally:
            pilot.set()
            if self._pilots.get(key) is pilot:
                del self._pilots[key]


async def _by_sdk(
    client: Any,
    content: bytes,
    options: dict[str, Any],
    outcome: httpx2.Response | Exception | None,
) -> Any:
    """``client.post`` as usual; its first attempt answered with ``outcome`` (the
    lane's own attempt) instead of being sent again, when there is one."""
    if outcome is None:
        return await _call_sdk(client, content, options)
    with tapped(Tap(replay=outcome)):
        return await _call_sdk(client, content, options)


async def _call_sdk(client: Any, content: bytes, options: dict[str, Any]) -> Any:
    return await client.post(_PATH, options=options, cast_to=object, content=content)


def _plain_success(response: httpx2.Response) -> bool:
    """A 2xx answer the SDK would decode as JSON and nothing more."""
    content_type = response.headers.get("content-type", "*").split(";")[0]
    return response.is_success and content_type.lower().endswith("json")


def _timeout_key(timeout: Any) -> Hashable:
    """A key for a request's timeout option (a number, an ``httpx.Timeout``, or none)."""
    if isinstance(timeout, httpx2.Timeout):
        return ("timeout", timeout.connect, timeout.read, timeout.write, timeout.pool)
    if timeout is None or isinstance(timeout, (int, float)):
        return timeout
    return ("other", repr(timeout))
