"""One rate limit for every actor of a cluster: a token bucket in a named Ray actor.

A provider limits an API key's requests and tokens per minute, wherever they come
from; a hundred actors each pacing itself would send a hundred times the limit and
meet a wall of 429s. So every judge request of every actor is first admitted by one
limiter: :class:`TokenBuckets`, run as a named, detached Ray actor (found by name
with ``get_if_exists=True``: the first actor to ask starts it). Admission is a
reservation: the limiter takes the request's cost from each bucket at once (a bucket
may go below zero) and answers how long to wait before sending, so the limiter
itself never blocks and requests leave spaced at the limit.

Costs: one request; the input tokens estimated from the request (four characters a
token); the output tokens estimated as the mean seen so far. When the reply comes
back the estimate is corrected with the reply's usage. Each per-process pacer
(429/529 pauses, AIMD on concurrency) stays inside: its pause is waited out first.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ClusterLimit", "RateLimit", "TokenBuckets", "estimate_input", "remove_rate_limit"]

# The provider's limit headers, per minute: Anthropic's, then OpenAI's names.
_HEADERS = {
    "requests_per_minute": ("anthropic-ratelimit-requests-limit", "x-ratelimit-limit-requests"),
    "input_tokens_per_minute": ("anthropic-ratelimit-input-tokens-limit",),
    "output_tokens_per_minute": ("anthropic-ratelimit-output-tokens-limit",),
    "tokens_per_minute": ("anthropic-ratelimit-tokens-limit", "x-ratelimit-limit-tokens"),
}
_DIMENSIONS = {
    "requests": "requests_per_minute",
    "input_tokens": "input_tokens_per_minute",
    "output_tokens": "output_tokens_per_minute",
    "tokens": "tokens_per_minute",
}


@dataclass(frozen=True)
class RateLimit:
    """A global rate limit: requests and tokens per minute, shared by every actor.

    Give any of the four limits (None: not limited). ``burst_seconds`` is how many
    seconds of each rate may leave at once after a quiet spell (the bucket's size).
    ``name`` and ``namespace`` name the Ray actor that holds the buckets: jobs that
    use one API key should share one name, so they share the key's limit::

        RateLimit(requests_per_minute=4000, input_tokens_per_minute=2_000_000)
        RateLimit.from_headers(response.headers, fraction=0.9)
    """

    requests_per_minute: float | None = None
    input_tokens_per_minute: float | None = None
    output_tokens_per_minute: float | None = None
    tokens_per_minute: float | None = None
    burst_seconds: float = 0.5
    name: str = "gradeloop-rate-limit"
    namespace: str = "gradeloop"

    def __post_init__(self) -> None:
        given = {d: v for d, v in self.rates().items() if v is not None}
        if not given:
            raise ValueError(
                "RateLimit needs at least one limit: requests_per_minute, "
                "input_tokens_per_minute, output_tokens_per_minute or tokens_per_minute"
            )
        for field, value in [*given.items(), ("burst_seconds", self.burst_seconds)]:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"RateLimit {field} must be a number, not {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"RateLimit {field} must be a positive number, not {value!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"RateLimit name must be a non-empty string, not {self.name!r}")

    def rates(self) -> dict[str, float | None]:
        """The four limits by field name."""
        return {field: getattr(self, field) for field in _DIMENSIONS.values()}

    @classmethod
    def from_headers(
        cls, headers: Mapping[str, str] | Any, *, fraction: float = 1.0, **settings: Any
    ) -> RateLimit:
        """The limits a provider announces in a reply's headers (Anthropic's
        ``anthropic-ratelimit-*-limit``, OpenAI's ``x-ratelimit-limit-*``), times
        ``fraction`` (0.9 leaves a tenth for other clients of the key). ``settings``
        are the other fields (``name``, ``burst_seconds``...)."""
        if not 0 < fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], not {fraction!r}")
        get = getattr(headers, "get", None)
        if get is None:
            raise ValueError("from_headers needs the reply's headers (a mapping)")
        found: dict[str, float] = {}
        for field, names in _HEADERS.items():
            for name in names:
                raw = get(name)
                if raw is not None:
                    try:
                        found[field] = float(raw) * fraction
                    except ValueError:
                        raise ValueError(f"header {name}: {raw!r} is not a number") from None
                    break
        if not found:
            raise ValueError(
                "these headers announce no rate limit (anthropic-ratelimit-*-limit or "
                "x-ratelimit-limit-*): give the limits yourself"
            )
        return cls(**{**settings, **found})

    @property
    def counts_tokens(self) -> bool:
        """Whether any token limit is set (replies must then be read for their usage)."""
        return any(
            v is not None
            for v in (
                self.input_tokens_per_minute,
                self.output_tokens_per_minute,
                self.tokens_per_minute,
            )
        )


class TokenBuckets:
    """The limiter's state: a bucket per limited dimension, refilled continuously.

    :meth:`reserve` takes a request's cost now and returns the seconds to wait
    before sending it (and the output tokens it assumed); :meth:`settle` corrects the
    token buckets once the reply's usage is known. Plain Python, so it is tested
    without Ray; :class:`ClusterLimit` runs it as a Ray actor.
    """

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self.rate = {
            d: per_minute / 60.0
            for d, field in _DIMENSIONS.items()
            if (per_minute := getattr(limit, field)) is not None
        }
        # a bucket holds at least one request's worth of requests
        self.size = {
            d: max(r * limit.burst_seconds, 1.0 if d == "requests" else 0.0)
            for d, r in self.rate.items()
        }
        self.level = dict(self.size)
        self.at = clock()
        self.output_seen = 0
        self.replies = 0
        self.reserved = 0

    def settings(self) -> dict[str, Any]:
        """The limit this limiter was started with (to refuse a different one)."""
        return asdict(self.limit)

    def _refill(self) -> float:
        now = self.clock()
        elapsed, self.at = now - self.at, now
        for d, r in self.rate.items():
            self.level[d] = min(self.size[d], self.level[d] + r * elapsed)
        return now

    def reserve(self, input_tokens: int) -> tuple[float, int]:
        """Take one request of ``input_tokens`` (estimated) from every bucket; the
        seconds the caller waits before sending it, and the output tokens assumed."""
        self._refill()
        output = round(self.output_seen / self.replies) if self.replies else 0
        cost = {
            "requests": 1.0,
            "input_tokens": float(input_tokens),
            "output_tokens": float(output),
            "tokens": float(input_tokens + output),
        }
        wait = 0.0
        for d, r in self.rate.items():
            wait = max(wait, (cost[d] - self.level[d]) / r)
            self.level[d] -= cost[d]
        self.reserved += 1
        return wait, output

    def settle(self, guessed: tuple[int, int], used: tuple[int, int] | None) -> None:
        """Correct the token buckets: ``guessed`` (input, output) was taken, ``used``
        was spent (None: the reply said nothing of usage, the guess stands)."""
        if used is None:
            return
        self._refill()
        self.output_seen += used[1]
        self.replies += 1
        back = {
            "input_tokens": guessed[0] - used[0],
            "output_tokens": guessed[1] - used[1],
            "tokens": sum(guessed) - sum(used),
        }
        for d, delta in back.items():
            if d in self.rate:
                self.level[d] = min(self.size[d], self.level[d] + delta)

    def stats(self) -> dict[str, Any]:
        """Requests admitted and replies settled so far, and each bucket's level."""
        self._refill()
        return {"reserved": self.reserved, "settled": self.replies, "level": dict(self.level)}


def estimate_input(request: Any) -> int:
    """Input tokens of a Messages API request, at four characters a token: its
    system text and the text of its messages (a rough guess, corrected on reply)."""
    options = getattr(request, "options", None)
    body = getattr(options, "json_data", None)
    if not isinstance(body, Mapping):
        return 0
    chars = _chars(body.get("system"))
    for message in body.get("messages") or ():
        if isinstance(message, Mapping):
            chars += _chars(message.get("content"))
    return chars // 4


def _chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    if isinstance(content, list | tuple):
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                total += len(block["text"])
    return total


def _usage(body: bytes) -> tuple[int, int] | None:
    """(input, output) tokens of a reply's JSON body; None when it holds no usage.
    Input counts what a provider's input limit counts: uncached and cache writes."""
    try:
        usage = json.loads(body).get("usage")
    except (ValueError, AttributeError):
        return None
    if not isinstance(usage, Mapping):
        return None

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return (
        count("input_tokens") + count("cache_creation_input_tokens"),
        count("output_tokens"),
    )


class ClusterLimit:
    """The :class:`~gradeloop.models._pacing.Limit` each actor admits its judge's
    requests by: a handle on the cluster's named limiter actor (started by the first
    actor that asks). A limiter already running under the same name with other
    settings is refused: two limits on one key cannot both hold."""

    def __init__(self, limit: RateLimit) -> None:
        import ray

        remote = ray.remote(num_cpus=0)(TokenBuckets)
        self.limit = limit
        self.handle = remote.options(
            name=limit.name,
            namespace=limit.namespace,
            get_if_exists=True,
            lifetime="detached",  # outlives the actor that happened to start it
        ).remote(limit)
        running = ray.get(self.handle.settings.remote())
        if running != asdict(limit):
            raise ValueError(
                f"a rate limiter named {limit.name!r} (namespace {limit.namespace!r}) "
                f"already runs with {running}: give the same RateLimit, another name=, "
                f"or stop it with remove_rate_limit({limit.name!r})"
            )

    def admit(self, request: Any) -> tuple[int, int]:
        """Wait (in this thread) until the request may be sent; its ticket."""
        import ray

        guess = estimate_input(request)
        wait, output = ray.get(self.handle.reserve.remote(guess))
        if wait > 0:
            time.sleep(wait)
        return guess, output

    async def aadmit(self, request: Any) -> tuple[int, int]:
        """:meth:`admit`, awaited."""
        guess = estimate_input(request)
        wait, output = await self.handle.reserve.remote(guess)
        if wait > 0:
            await asyncio.sleep(wait)
        return guess, output

    def settle(self, ticket: tuple[int, int], response: Any) -> None:
        """Tell the limiter what the request spent (without waiting for it)."""
        if self.limit.counts_tokens:
            self.handle.settle.remote(ticket, self._used(response, response.read()))

    async def asettle(self, ticket: tuple[int, int], response: Any) -> None:
        """:meth:`settle` for an async client's answer."""
        if self.limit.counts_tokens:
            self.handle.settle.remote(ticket, self._used(response, await response.read()))

    @staticmethod
    def _used(response: Any, body: bytes) -> tuple[int, int] | None:
        # an error answer spent no tokens: the whole guess goes back
        return _usage(body) if 200 <= response.status_code < 300 else (0, 0)


def remove_rate_limit(name: str = "gradeloop-rate-limit", namespace: str = "gradeloop") -> bool:
    """Stop the named limiter actor (it is detached: it outlives the jobs that use
    it until the cluster stops). True when one was running."""
    import ray

    try:
        handle = ray.get_actor(name, namespace=namespace)
    except ValueError:
        return False
    ray.kill(handle)
    return True
