"""The async twin of a sync Anthropic client: same settings, one per event loop.

``anthropic.AsyncAnthropic`` holds a connection pool bound to the event loop it first
ran in, and ``asyncio.run`` makes a new loop each time; so the twin is built lazily for
each running loop, and :meth:`AsyncTwin.aclose` closes the running loop's one.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any

from ._pacing import apace

if TYPE_CHECKING:  # the SDK is imported when a twin is built: replaying needs none
    import anthropic

__all__ = ["AsyncTwin", "async_twin", "tls_context"]


def async_twin(client: anthropic.Anthropic, **extra: Any) -> anthropic.AsyncAnthropic:
    """An ``AsyncAnthropic`` with ``client``'s credentials, URL, retries, timeout and
    default headers and query, and gradeloop's pacing middleware (a custom
    ``http_client`` or the sync client's own middleware is not copied). On the lean
    transport, the twin gets a direct lane (:mod:`._direct`)."""
    import anthropic

    lean = None
    if "http_client" not in extra:
        # the lean asyncio transport (models/_atransport.py), unless a proxy is set
        # or GRADELOOP_HTTPX_TRANSPORT=1; one TLS context for every twin: loading the
        # CA bundle takes ~0.1 s, paid otherwise by each event loop that builds a twin
        from ._atransport import lean_async_http_client

        lean = lean_async_http_client(tls_context())
        extra["http_client"] = lean or anthropic.DefaultAsyncHttpxClient(verify=tls_context())
    kwargs: dict[str, Any] = {
        "base_url": client.base_url,
        "max_retries": client.max_retries,
        "timeout": client.timeout,
        "default_headers": dict(getattr(client, "_custom_headers", None) or {}) or None,
        "default_query": dict(getattr(client, "_custom_query", None) or {}) or None,
        "middleware": [apace],
        **extra,
    }
    if client.api_key:
        kwargs["api_key"] = client.api_key
    elif client.auth_token:
        kwargs["auth_token"] = client.auth_token
    elif getattr(client, "credentials", None) is not None:
        kwargs["credentials"] = client.credentials
    twin = anthropic.AsyncAnthropic(**kwargs)
    if lean is not None and "middleware" not in extra:  # all of it gradeloop's own
        from ._atransport import LeanAsyncTransport
        from ._direct import open_lane

        transport = getattr(lean, "_transport", None)
        if isinstance(transport, LeanAsyncTransport):
            open_lane(twin, transport, lean)
    return twin


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certificates as httpx finds them), built once."""
    import httpx2

    return httpx2.create_ssl_context()


class AsyncTwin:
    """Gives the async client to use from the running loop, or None to mean "run the
    sync client in a worker thread" (a client that is not the SDK's, such as a fake).

    ``given`` (an async client the caller built) is used as it is, in every loop.
    """

    def __init__(self, client: Any, given: Any = None) -> None:
        self._client = client
        self._given = given
        self._lock = threading.Lock()
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def client(self) -> Any | None:
        """The async client for the running loop (built on first use), or None."""
        if self._given is not None:
            return self._given
        sdk = sys.modules.get("anthropic")  # not imported: the client cannot be the SDK's
        if sdk is None or not isinstance(self._client, sdk.Anthropic):
            return None
        loop = asyncio.get_running_loop()
        with self._lock:
            twin = self._per_loop.get(loop)
            if twin is None:
                twin = async_twin(self._client)
                self._per_loop[loop] = twin
        return twin

    async def aclose(self) -> None:
        """Close the twin built for the running loop, if any (never a ``given`` one)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            twin = self._per_loop.pop(loop, None)
        if twin is not None:
            await twin.close()
