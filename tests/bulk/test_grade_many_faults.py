"""A batch under sparse faults keeps its pace: the odd 429 among successes is retried
alone (after the server's retry-after) while the other drafts go on, where it once
paused every request and halved the drafts in flight."""

from __future__ import annotations

import threading
import time
from typing import Any

from gradeloop import AnthropicJudge, Rubric, grade_many, make_client
from gradeloop.bulk import ManyProgress
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator, http_error

TONE = {"key": "tone", "description": "Polite."}


def run(emulator: Emulator, throttle: set[int], drafts: int = 40) -> tuple[list[float], Any]:
    """Grade ``drafts`` drafts 4 at a time; the requests numbered in ``throttle`` get a
    429 with ``retry-after-ms: 600``. The arrival times and the 429s' times."""
    arrivals: list[float] = []
    throttled_at: list[float] = []
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Any:
        with lock:
            now = time.monotonic()
            arrivals.append(now)
            if len(arrivals) in throttle:
                throttled_at.append(now)
                return http_error(429, "slow down", retry_after_ms="600")
        time.sleep(0.02)
        return verdict_reply(
            {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
        )

    emulator.responder = answer
    states: list[ManyProgress] = []
    out = grade_many(
        [f"d{i}" for i in range(drafts)],
        Rubric.from_dict({"criteria": [TONE]}),
        judge=AnthropicJudge(client=make_client(base_url=emulator.base_url)),
        concurrency=4,
        progress=states.append,
    )
    assert all(e.accepted for e in out)  # the SDK retried each throttled request
    return [t - throttled_at[0] for t in arrivals], states[-1]


def test_a_sparse_429_is_retried_alone_and_the_batch_goes_on(emulator: Emulator) -> None:
    since, last = run(emulator, throttle={20})  # one 429 after 19 successes
    during = [t for t in since if 0.05 < t < 0.55]  # inside the 600 ms it asked for
    assert len(during) >= 4  # the others kept going meanwhile
    assert last.throttled == 1 and last.concurrency == 4  # and the limit is back


def test_dense_429s_still_pause_the_whole_batch(emulator: Emulator) -> None:
    since, last = run(emulator, throttle={1, 2, 3}, drafts=12)  # the first answers: dense
    late = [t for t in since if t > 0.05]
    assert late and min(late) >= 0.5  # nothing new started before the pause was over
    assert last.throttled >= 3
