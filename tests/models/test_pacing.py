"""The pacer: retry-after read right, one halving per pause, slow recovery, the
middleware on every client gradeloop builds."""

from __future__ import annotations

import asyncio
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


def test_successes_win_the_limit_back_slowly() -> None:
    p = Pacer(4)
    p._resume_at = 0  # as if an earlier pause were over
    p.limit = 1
    p.observe(200)
    assert p.limit == 2
    for _ in range(2):
        p.observe(200)
    assert p.limit == 3
    for _ in range(10):
        p.observe(200)
    assert p.limit == 4  # never above the ceiling


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
