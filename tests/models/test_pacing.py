"""The pacer: retry-after read right, one halving per pause while throttling is dense,
quick recovery when it is sparse, spent rate limits waited out, the middleware on every
client gradeloop builds."""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import time

import pytest

from gradeloop import make_client
from gradeloop.models._aclient import async_twin
from gradeloop.models._pacing import (
    MAX_PAUSE,
    Pacer,
    active_pacer,
    apace,
    budget_spent,
    pace,
    pacing,
    retry_after,
)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "junk", "retry-after": "2"}, 2.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        ({"retry-after": "-5"}, 0.0),
    ],
)
def test_retry_after_is_read_from_either_header(headers: dict[str, str], seconds: float) -> None:
    assert retry_after(headers) == seconds


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    got = retry_after({"retry-after": when})
    assert got is not None and 25 < got <= 31


def test_a_429_halves_the_limit_once_per_pause_and_pauses_everyone() -> None:
    p = Pacer(16)
    p.observe(429, {"retry-after-ms": "200"})
    p.observe(529, {"retry-after-ms": "100"})  # inside the same pause: no second halving
    assert (p.limit, p.throttled) == (8, 2)
    assert 0.1 < p.pause_left() <= 0.2
    p.observe(429, {"retry-after": "100000"})
    assert p.pause_left() <= MAX_PAUSE  # a huge header cannot freeze the run


def test_while_throttling_is_dense_successes_win_the_limit_back_slowly() -> None:
    p = Pacer(4)
    for _ in range(8):
        p.observe(429, {"retry-after-ms": "1"})
    p._resume_at = 0  # as if the pause were over
    p.limit = 1
    p.observe(200)
    assert p.limit == 2  # one per `limit` successes (AIMD)
    for _ in range(2):
        p.observe(200)
    assert p.limit == 3
    for _ in range(10):
        p.observe(200)
    assert p.limit == 4  # never above the ceiling


def test_a_sparse_429_pauses_nothing_and_the_limit_is_back_at_once() -> None:
    p = Pacer(128)
    for _ in range(60):
        p.observe(200)
    p.observe(429, {"retry-after": "1"})  # the odd one: the SDK retries it alone
    assert p.pause_left() == 0 and p.limit == 127 and p.throttled == 1
    p.observe(200)
    assert p.limit == 128  # a success a request back while throttling is sparse
    for _ in range(40):  # throttling grows dense: now the server's word pauses the batch
        p.observe(429, {"retry-after-ms": "300"})
    assert p.rate() >= 0.25 and 0.2 < p.pause_left() <= 0.3 and p.limit < 64


@pytest.mark.parametrize(
    "headers",
    [
        {
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "{at}",
        },
        {
            "anthropic-ratelimit-tokens-remaining": "0",
            "anthropic-ratelimit-tokens-reset": "{at}",
            "anthropic-ratelimit-requests-remaining": "40",
        },
        {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"},
        {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1.5s"},
        {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s500ms"},
    ],
)
def test_a_spent_rate_limit_pauses_the_batch_until_its_reset(headers: dict[str, str]) -> None:
    at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=2)
    filled = {k: v.format(at=at.isoformat().replace("+00:00", "Z")) for k, v in headers.items()}
    assert budget_spent(filled) is not None
    p = Pacer(32)
    for _ in range(30):
        p.observe(200)
    p.observe(200, filled)  # a success that says the budget is now spent
    assert 1.0 < p.pause_left() <= 2.0 and p.limit == 32
    q = Pacer(32)
    for _ in range(30):
        q.observe(200)
    q.observe(429, filled)  # sparse, but the server says the budget is spent: pause
    assert 1.0 < q.pause_left() <= 2.0


@pytest.mark.parametrize(
    "headers",
    [
        {
            "anthropic-ratelimit-requests-remaining": "12",
            "anthropic-ratelimit-requests-reset": "2030-01-01T00:00:00Z",
        },
        {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "soon"},
        {"x-ratelimit-remaining-requests": "0"},
        {},
    ],
)
def test_a_budget_left_or_unreadable_pauses_nothing(headers: dict[str, str]) -> None:
    assert budget_spent(headers) is None
    p = Pacer(8)
    p.observe(200, headers)
    assert p.pause_left() == 0


def test_no_retry_after_means_a_default_pause() -> None:
    p = Pacer(2)
    p.observe(429, {})
    assert 0.5 < p.pause_left() <= 1.0
    with pytest.raises(ValueError, match="at least 1"):
        Pacer(0)


def test_waiting_sleeps_until_the_pause_is_over() -> None:
    p = Pacer(2)
    p.observe(429, {"retry-after-ms": "50"})
    start = time.monotonic()
    asyncio.run(p.wait())
    assert time.monotonic() - start >= 0.04 and p.pause_left() == 0
    p.observe(429, {"retry-after-ms": "30"})
    p.wait_blocking()
    assert p.pause_left() == 0


def test_the_pacer_is_per_context() -> None:
    p = Pacer(3)
    assert active_pacer() is None
    with pacing(p):
        assert active_pacer() is p

        async def inner() -> Pacer | None:
            return await asyncio.to_thread(active_pacer)  # worker threads see it too

        assert asyncio.run(inner()) is p
    assert active_pacer() is None


class _Response:
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code, self.headers = status, headers


def test_the_middleware_reports_to_the_active_pacer_only() -> None:
    answer = _Response(429, {"retry-after-ms": "10"})
    assert pace("req", lambda r: answer) is answer  # no pacer: a pass-through
    p = Pacer(4)
    with pacing(p):
        pace("req", lambda r: answer)

        async def call_next(r: object) -> _Response:
            return answer

        assert asyncio.run(apace("req", call_next)) is answer
    assert p.throttled == 2


def test_every_client_gradeloop_builds_carries_the_middleware() -> None:
    client = make_client(base_url="http://127.0.0.1:9")
    twin = async_twin(client)
    try:
        assert pace in client.middleware
        assert apace in twin.middleware
    finally:
        client.close()
        asyncio.run(twin.close())
