"""Pacing many requests as one: back off together when the API says slow down.

A :class:`Pacer` holds a batch's concurrency limit and a pause. Every HTTP attempt
made by a gradeloop-built client passes through :func:`pace` (or :func:`apace`, for
async clients): SDK middleware, so it sees the SDK's own retries too. While a pacer is
active in the caller's context (:func:`pacing`), it does what the server says:

* a 429 or 529 when throttling is *dense* (a quarter or more of the recent answers)
  pauses every request of the batch for the server's ``retry-after`` (or a second
  when it gives none) and halves the limit, once per pause;
* a *sparse* 429 (the odd one among successes: a gateway's hiccup, a shared limit
  brushed) lowers the limit by one and pauses nothing: the SDK retries that request
  after the server's ``retry-after``, and the others go on;
* a rate-limit header saying the budget is spent (``anthropic-ratelimit-*-remaining:
  0``, OpenAI's ``x-ratelimit-remaining-*: 0``), on any answer, pauses the batch
  until its ``reset``;
* successes win the limit back: one a success while throttling is sparse (so a run
  is back to full speed within a round trip), one per ``limit`` of them while it is
  not (AIMD).

The SDK's own retries stay on: the pacer only decides when attempts may start. A
client a caller built without the middleware is used as it is, through a derived
client that adds it (:func:`paced`: ``client.with_options(middleware=[*client.middleware,
pace])``, as the SDK documents; it shares the caller's HTTP client). Nothing here
imports the SDK (the middleware are plain functions), so code-only grading stays free
of it.

A :class:`Limit` made active with :func:`limiting` (a rate limit shared beyond this
process, such as :mod:`gradeloop.integrations.ray`'s) is asked by the same middleware
before each attempt, after the pacer's pause, and told each answer: the pacing stays
inside it.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import inspect
import re
import threading
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

__all__ = [
    "Limit",
    "Pacer",
    "active_pacer",
    "apace",
    "budget_spent",
    "limiting",
    "pace",
    "paced",
    "pacing",
    "retry_after",
]

THROTTLED = frozenset({429, 529})
DEFAULT_PAUSE = 1.0  # seconds, when a 429/529 carries no retry-after
MAX_PAUSE = 300.0  # a hostile or broken header cannot freeze a batch for longer
DENSE = 0.25  # share of recent answers throttled from which a 429 pauses the batch
SPARSE = 0.1  # below it, each success wins one more request in flight back
_MIN_WINDOW = 16  # answers that make "recent", at least (else the limit's worth)


def retry_after(headers: Mapping[str, str] | Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP
    date), or None when neither is there or readable."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    raw_ms = get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_LIMITS = ("requests", "tokens", "input-tokens", "output-tokens")
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)(ms|h|m|s))")


def budget_spent(headers: Mapping[str, str] | Any) -> float | None:
    """Seconds until a rate limit the server says is spent resets: the longest wait of
    any ``anthropic-ratelimit-<kind>-remaining`` (or ``x-ratelimit-remaining-<kind>``)
    that reads 0, by its reset header; None when none is spent (or says when)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    waits = []
    for kind in _LIMITS:
        for remaining, reset in (
            (f"anthropic-ratelimit-{kind}-remaining", f"anthropic-ratelimit-{kind}-reset"),
            (f"x-ratelimit-remaining-{kind}", f"x-ratelimit-reset-{kind}"),
        ):
            left = get(remaining)
            if left is None or left.strip() not in ("0", "0.0"):
                continue
            wait = _until(get(reset))
            if wait is not None:
                waits.append(wait)
    return max(waits) if waits else None


def _until(raw: Any) -> float | None:
    """Seconds until ``raw``: an RFC 3339 time (Anthropic), a duration such as ``1s``,
    ``6m0s`` or ``250ms`` (OpenAI), or a number of seconds."""
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 64:
        return None
    text = raw.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
        return sum(float(n) * scale[u] for n, u in parts)
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class Pacer:
    """A batch's shared pace: the concurrency limit and the pause, thread-safe."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the concurrency limit must be at least 1, not {limit}")
        self.ceiling = limit
        self.limit = limit
        self.throttled = 0  # 429/529 answers seen
        self.paused_s = 0.0  # total pause ordered
        self._resume_at = 0.0
        self._successes = 0
        # the recent answers, True for a 429/529: how dense throttling is now
        self._recent: deque[bool] = deque(maxlen=max(_MIN_WINDOW, limit))
        self._recent_throttled = 0
        self._lock = threading.Lock()

    def observe(self, status: int, headers: Mapping[str, str] | Any = None) -> None:
        """Take an HTTP answer into account (see the module for what each one does)."""
        now = time.monotonic()
        throttled = status in THROTTLED
        with self._lock:
            self._note(throttled)
            spent = budget_spent(headers) if headers is not None else None
            if throttled:
                self.throttled += 1
                if spent is not None or self.rate() >= DENSE:
                    wait = retry_after(headers) if headers is not None else None
                    self._pause(now, spent if spent is not None else wait)
                elif self.limit > 1:  # sparse: a nudge; the SDK retries this one
                    self.limit -= 1
                return
            if spent is not None:
                self._pause(now, spent, halve=False)
            if 200 <= status < 300 and self.limit < self.ceiling:
                if self.rate() < SPARSE:
                    self.limit += 1
                    return
                self._successes += 1
                if self._successes >= self.limit:
                    self.limit += 1
                    self._successes = 0

    def rate(self) -> float:
        """The share of throttled answers among the recent ones (0 before any)."""
        return self._recent_throttled / len(self._recent) if self._recent else 0.0

    def _note(self, throttled: bool) -> None:
        if len(self._recent) == self._recent.maxlen and self._recent[0]:
            self._recent_throttled -= 1
        self._recent.append(throttled)
        self._recent_throttled += throttled

    def _pause(self, now: float, seconds: float | None, *, halve: bool = True) -> None:
        pause = min(MAX_PAUSE, DEFAULT_PAUSE if seconds is None else seconds)
        if halve and now >= self._resume_at:  # one halving per pause, not per answer
            self.limit = max(1, self.limit // 2)
            self._successes = 0
        if now + pause > self._resume_at:
            self.paused_s += now + pause - max(now, self._resume_at)
            self._resume_at = now + pause

    def pause_left(self) -> float:
        """Seconds until new attempts may start (0 when not paused)."""
        return max(0.0, self._resume_at - time.monotonic())

    async def wait(self) -> None:
        """Sleep (in the event loop) until the pause is over."""
        while (left := self.pause_left()) > 0:
            await asyncio.sleep(left)

    def wait_blocking(self) -> None:
        """Sleep (in this thread) until the pause is over."""
        while (left := self.pause_left()) > 0:
            time.sleep(left)


_ACTIVE: ContextVar[Pacer | None] = ContextVar("gradeloop_pacer", default=None)


@contextmanager
def pacing(pacer: Pacer) -> Iterator[Pacer]:
    """Make ``pacer`` the one the requests of this context (and the tasks and worker
    threads it starts) report to and wait on."""
    token = _ACTIVE.set(pacer)
    try:
        yield pacer
    finally:
        _ACTIVE.reset(token)


def active_pacer() -> Pacer | None:
    """The pacer of the current context, if any."""
    return _ACTIVE.get()


class Limit(Protocol):
    """A rate limit asked before every HTTP attempt: ``admit`` returns when the
    attempt may start (and a ticket), ``settle`` is told the answer with its ticket."""

    def admit(self, request: Any) -> Any: ...

    async def aadmit(self, request: Any) -> Any: ...

    def settle(self, ticket: Any, response: Any) -> None: ...

    async def asettle(self, ticket: Any, response: Any) -> None: ...


_LIMIT: ContextVar[Limit | None] = ContextVar("gradeloop_limit", default=None)


@contextmanager
def limiting(limit: Limit) -> Iterator[Limit]:
    """Make ``limit`` the one every request of this context (and the tasks and
    worker threads it starts) is admitted by."""
    token = _LIMIT.set(limit)
    try:
        yield limit
    finally:
        _LIMIT.reset(token)


def pace(request: Any, call_next: Callable[[Any], Any]) -> Any:
    """Sync SDK middleware: wait out the active pacer's pause before each HTTP
    attempt and report the answer's status to it; with a :class:`Limit` active, be
    admitted by it too. Neither active: a pass-through."""
    pacer, limit = _ACTIVE.get(), _LIMIT.get()
    if pacer is None and limit is None:
        return call_next(request)
    if pacer is not None:
        pacer.wait_blocking()
    ticket = limit.admit(request) if limit is not None else None
    response = call_next(request)
    if limit is not None:
        limit.settle(ticket, response)
    if pacer is not None:
        pacer.observe(response.status_code, response.headers)
    return response


async def apace(request: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """:func:`pace` for async clients."""
    pacer, limit = _ACTIVE.get(), _LIMIT.get()
    if pacer is None and limit is None:
        return await call_next(request)
    if pacer is not None:
        await pacer.wait()
    ticket = await limit.aadmit(request) if limit is not None else None
    response = await call_next(request)
    if limit is not None:
        await limit.asettle(ticket, response)
    if pacer is not None:
        pacer.observe(response.status_code, response.headers)
    return response


_DERIVED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_DERIVING = threading.Lock()


def paced(client: Any) -> Any:
    """``client``, or while a pacer is active and ``client`` (an SDK client a caller
    built) lacks the pacing middleware, a client derived from it that has it: the
    same settings and the same HTTP client (``with_options``), built once per client."""
    if _ACTIVE.get() is None and _LIMIT.get() is None:
        return client
    middleware = tuple(getattr(client, "middleware", None) or ())
    if pace in middleware or apace in middleware:
        return client
    with_options = getattr(client, "with_options", None)
    if with_options is None:  # not an SDK client: nothing to pace
        return client
    with _DERIVING:
        derived = _DERIVED.get(client)
        if derived is None:
            is_async = inspect.iscoroutinefunction(getattr(client, "post", None))
            derived = with_options(middleware=[*middleware, apace if is_async else pace])
            _DERIVED[client] = derived
    return derived
