"""The async twin of a sync Anthropic client: same settings, one per event loop.

HTTP is the SDK's own. The twin's HTTP client is ``anthropic.DefaultAioHttpClient``
when aiohttp is installed (the extra ``gradeloop[aiohttp]``), else
``anthropic.DefaultAsyncHttpxClient``; either honours proxies, ``SSL_CERT_FILE`` and
timeouts as the SDK documents. Inside :func:`gradeloop.agrade_many` its connection
pool is sized to the batch's concurrency (:func:`connection_pool`).

A twin is only built for a client :func:`~._client.make_client` built, whose settings
are known; a client a caller built (``anthropic.Anthropic(http_client=...)`` with a
proxy or a CA of their own, say) is used as it is, its sync calls run in a worker
thread. An ``async_client`` a caller gives is used as it is, in every loop.

``anthropic.AsyncAnthropic`` holds a connection pool bound to the event loop it first
ran in, and ``asyncio.run`` makes a new loop each time; so the twin is built lazily for
each running loop, and :meth:`AsyncTwin.aclose` closes the running loop's ones.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ._client import built_here
from ._pacing import apace

if TYPE_CHECKING:  # the SDK is imported when a twin is built: replaying needs none
    import anthropic

__all__ = ["AsyncTwin", "async_http_client", "async_twin", "connection_pool"]

_POOL: ContextVar[int | None] = ContextVar("gradeloop_connection_pool", default=None)


@contextmanager
def connection_pool(size: int) -> Iterator[None]:
    """Twins built in this context (and the tasks it starts) hold up to ``size``
    connections per concurrent request of a draft (a judge asking ``samples`` times
    at once gets ``size * samples``)."""
    token = _POOL.set(size)
    try:
        yield
    finally:
        _POOL.reset(token)


def async_http_client(connections: int | None = None) -> Any:
    """The SDK's default async HTTP client: aiohttp's when it is installed, else
    httpx's; with a pool of ``connections`` (the SDK's default limits when None)."""
    import anthropic

    kwargs: dict[str, Any] = {}
    if connections is not None:
        import httpx2

        kwargs["limits"] = httpx2.Limits(
            max_connections=connections, max_keepalive_connections=connections
        )
    try:
        return anthropic.DefaultAioHttpClient(**kwargs)
    except RuntimeError:  # "you must have installed the package with the aiohttp extra"
        return anthropic.DefaultAsyncHttpxClient(**kwargs)


def async_twin(
    client: anthropic.Anthropic, connections: int | None = None, **extra: Any
) -> anthropic.AsyncAnthropic:
    """An ``AsyncAnthropic`` with ``client``'s credentials, URL, retries and timeout
    (its public attributes), gradeloop's pacing middleware, and the SDK's default async
    HTTP client with a pool of ``connections`` (:func:`async_http_client`). Only a
    client :func:`~._client.make_client` built is twinned (:class:`AsyncTwin`): it has
    no other settings of its own (no default headers or query)."""
    import anthropic

    kwargs: dict[str, Any] = {
        "base_url": client.base_url,
        "max_retries": client.max_retries,
        "timeout": client.timeout,
        "middleware": [apace],
        **extra,
    }
    if "http_client" not in kwargs:
        kwargs["http_client"] = async_http_client(connections)
    if client.api_key:
        kwargs["api_key"] = client.api_key
    elif client.auth_token:
        kwargs["auth_token"] = client.auth_token
    elif getattr(client, "credentials", None) is not None:
        kwargs["credentials"] = client.credentials
    return anthropic.AsyncAnthropic(**kwargs)


class AsyncTwin:
    """Gives the async client to use from the running loop, or None to mean "run the
    sync client in a worker thread" (a client gradeloop did not build, or a fake).

    ``given`` (an async client the caller built) is used as it is, in every loop.
    ``fan_out`` is how many requests one call may have in flight at once (a judge's
    ``samples``): the pool holds that many per draft of a batch.
    """

    def __init__(self, client: Any, given: Any = None, fan_out: int = 1) -> None:
        self._client = client
        self._given = given
        self._fan_out = max(1, fan_out)
        self._lock = threading.Lock()
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, list[tuple[int | None, Any]]
        ] = weakref.WeakKeyDictionary()

    def client(self) -> Any | None:
        """The async client for the running loop (built on first use), or None."""
        if self._given is not None:
            return self._given
        if not built_here(self._client):
            return None
        pool = _POOL.get()
        wanted = None if pool is None else pool * self._fan_out
        loop = asyncio.get_running_loop()
        with self._lock:
            twins = self._per_loop.setdefault(loop, [])
            if twins and _holds(twins[-1][0], wanted):
                return twins[-1][1]
            # a batch wider than the pool of the twin this loop has: a wider one for it
            # (the narrower one may still have requests in flight; closed by aclose)
            twin = async_twin(self._client, wanted)
            twins.append((wanted, twin))
        return twin

    async def aclose(self) -> None:
        """Close the twins built for the running loop, if any (never a ``given`` one)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            twins = self._per_loop.pop(loop, [])
        for _, twin in twins:
            await twin.close()


# The SDK's default pool keeps this many idle connections (DEFAULT_CONNECTION_LIMITS):
# more in flight than that would close and reopen connections all the time.
_SDK_KEEPALIVE = 100


def _holds(size: int | None, wanted: int | None) -> bool:
    """Whether a pool of ``size`` (None: the SDK's default) serves ``wanted``."""
    if wanted is None:
        return True
    return (size if size is not None else _SDK_KEEPALIVE) >= wanted
