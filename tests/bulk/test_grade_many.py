"""agrade, grade_many and agrade_many: same grading as grade(), many drafts at once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from gradeloop import (
    AnthropicJudge,
    CheckResult,
    Criterion,
    JudgeCache,
    Rubric,
    Verdict,
    agrade,
    agrade_many,
    grade,
    grade_many,
    make_client,
)
from gradeloop.bulk import ManyProgress
from gradeloop.errors import JudgeError, JudgeRequiredError
from gradeloop.grading import Registry
from gradeloop.migration import DraftItem
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator, http_error
from tests.support.fakes import AllMet, FakeJudge, verdict


def short(text: str, *, max_words: int = 5) -> CheckResult:
    threads.append(threading.current_thread().name)
    n = len(text.split())
    return CheckResult(n <= max_words, [] if n <= max_words else [f"{n} words > {max_words}"])


threads: list[str] = []


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.add("short", short)
    return r


SHORT = {"key": "short", "description": "At most 5 words.", "checker": "short"}
TONE = {"key": "tone", "description": "Polite."}
CLARITY = {"key": "clarity", "description": "Clear.", "scale": "score"}


def rubric(reg: Registry, *criteria: dict[str, Any]) -> Rubric:
    return Rubric.from_dict({"criteria": list(criteria)}, registry=reg)


class SlowAsyncJudge:
    """An async judge: meets every key; sleeps per draft; counts how many overlap."""

    def __init__(self, delay: float = 0.01, fail_on: str | None = None) -> None:
        self.delay, self.fail_on = delay, fail_on
        self.in_flight = self.peak = 0
        self.seen: list[tuple[str, str]] = []

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        raise AssertionError("the async path must await aevaluate")

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.seen.append((task, draft))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            # later drafts finish first, so input order must be restored on purpose
            await asyncio.sleep(self.delay / (1 + len(self.seen) % 5))
            if self.fail_on is not None and self.fail_on in draft:
                raise JudgeError("scripted refusal", reason="refusal")
            return verdict(
                True,
                {c.key: True for c in criteria if c.scale != "score"},
                scores={c.key: 9 for c in criteria if c.scale == "score"},
            )
        finally:
            self.in_flight -= 1


# -- agrade ---------------------------------------------------------------------------------


def test_agrade_grades_exactly_as_grade(reg: Registry) -> None:
    r = rubric(reg, SHORT, TONE, CLARITY)
    for draft in ("a short polite draft", "this draft is far too long to pass the word limit"):
        sync = grade(draft, r, task="t", judge=AllMet(), registry=reg)
        async_ = asyncio.run(agrade(draft, r, task="t", judge=AllMet(), registry=reg))
        assert async_.to_json() == sync.to_json()
        assert async_.verdict == sync.verdict


def test_agrade_awaits_aevaluate_and_runs_a_sync_judge_in_a_worker(reg: Registry) -> None:
    r = rubric(reg, SHORT, TONE)
    judge = SlowAsyncJudge()
    assert asyncio.run(agrade("fine", r, task="t", judge=judge, registry=reg)).accepted
    assert judge.seen == [("t", "fine")]
    names: list[str] = []

    class SyncOnly(AllMet):
        def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
            names.append(threading.current_thread().name)
            return super().evaluate(task, draft, criteria)

    threads.clear()
    assert asyncio.run(agrade("fine", r, judge=SyncOnly(), registry=reg)).accepted
    assert names and names[0] != threading.main_thread().name
    assert threads and threads[0] != threading.main_thread().name  # the checker too


def test_agrade_types_judge_failures_like_grade(reg: Registry) -> None:
    r = rubric(reg, TONE)

    class Junk:
        def evaluate(self, task: str, draft: str, criteria: object) -> object:
            return 42

    for judge in (Junk(), FakeJudge(ValueError("boom"))):
        with pytest.raises(JudgeError) as sync_err:
            grade("d", r, judge=judge if isinstance(judge, Junk) else FakeJudge(ValueError("boom")))
        with pytest.raises(JudgeError) as async_err:
            asyncio.run(agrade("d", r, judge=judge))
        assert (async_err.value.reason, str(async_err.value)) == (
            sync_err.value.reason,
            str(sync_err.value),
        )
    with pytest.raises(JudgeRequiredError):
        asyncio.run(agrade("d", r))


# -- grade_many ---------------------------------------------------------------------------


def test_results_come_back_in_input_order_with_ids(reg: Registry) -> None:
    drafts = [f"draft number {i}" for i in range(20)]
    judge = SlowAsyncJudge()
    out = grade_many(
        drafts, rubric(reg, SHORT, TONE), task="t", judge=judge, concurrency=6, registry=reg
    )
    assert [e.output_id for e in out] == [f"draft-{i + 1}" for i in range(20)]
    assert sorted(judge.seen) == sorted(("t", d) for d in drafts)
    assert all(e.accepted for e in out)


def test_draft_items_carry_their_own_task_and_id(reg: Registry) -> None:
    judge = SlowAsyncJudge()
    items = [DraftItem("a", "task A", "first"), DraftItem("b", "task B", "second"), "third"]
    out = grade_many(items, rubric(reg, TONE), task="default task", judge=judge, registry=reg)
    assert [e.output_id for e in out] == ["a", "b", "draft-3"]
    assert sorted(judge.seen) == [
        ("default task", "third"),
        ("task A", "first"),
        ("task B", "second"),
    ]


def test_one_drafts_judge_failure_is_that_drafts_failed_evaluation(reg: Registry) -> None:
    judge = SlowAsyncJudge(fail_on="bad")
    drafts = ["ok one", "bad one", "ok two"]
    out = grade_many(drafts, rubric(reg, SHORT, TONE), judge=judge, concurrency=3, registry=reg)
    good, bad, good2 = out
    assert good.accepted and good2.accepted and good.judge_error is None
    assert not bad.accepted and bad.judge_error == "refusal: scripted refusal"
    assert bad["tone"].passed is False and "the judge gave no verdict" in bad["tone"].issues
    assert bad["short"].passed is True  # the code keys were still graded
    assert bad.to_json()["judge_error"] == "refusal: scripted refusal"
    assert "the judge failed: refusal: scripted refusal" in bad.issues


def test_concurrency_is_bounded_and_used(reg: Registry) -> None:
    judge = SlowAsyncJudge(delay=0.02)
    grade_many(
        [f"d{i}" for i in range(30)], rubric(reg, TONE), judge=judge, concurrency=4, registry=reg
    )
    assert judge.peak == 4


def test_checkers_run_off_the_event_loop(reg: Registry) -> None:
    threads.clear()
    grade_many(["a", "b", "c"], rubric(reg, SHORT), registry=reg)
    assert len(threads) == 3 and threading.main_thread().name not in threads


def test_grade_many_inside_a_running_loop_grades_as_agrade_many_does(reg: Registry) -> None:
    # the rule for sync functions that run an event loop: tests/grading/test_event_loop_rule.py
    async def inside() -> tuple[list[bool], list[bool]]:
        judge = SlowAsyncJudge()
        drafts = ["a", "b c d e f g"]
        blocked = grade_many(drafts, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
        awaited = await agrade_many(drafts, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
        return [e.accepted for e in blocked], [e.accepted for e in awaited]

    blocked, awaited = asyncio.run(inside())
    assert blocked == awaited == [True, False]


def both(driver: str, *args: Any, **kw: Any) -> list[Any]:
    """grade_many, or agrade_many awaited: the two drivers of one batch."""
    if driver == "grade_many":
        return grade_many(*args, **kw)
    return asyncio.run(agrade_many(*args, **kw))


@pytest.mark.parametrize("driver", ["grade_many", "agrade_many"])
@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_bad_concurrency_is_refused(reg: Registry, bad: Any, driver: str) -> None:
    with pytest.raises(ValueError, match="concurrency must be an integer >= 1"):
        both(driver, ["a"], rubric(reg, SHORT), concurrency=bad, registry=reg)
    assert both(driver, ["a"], rubric(reg, SHORT), concurrency=1, registry=reg)[0].accepted


def test_judge_keys_without_a_judge_fail_before_any_work(reg: Registry) -> None:
    threads.clear()
    with pytest.raises(JudgeRequiredError):
        grade_many(["a"], rubric(reg, SHORT, TONE), registry=reg)
    assert threads == []
    assert grade_many([], rubric(reg, SHORT)) == []


def test_a_draft_of_the_wrong_type_is_named(reg: Registry) -> None:
    with pytest.raises(TypeError, match=r"drafts\[1\] is int"):
        grade_many(["a", 3], rubric(reg, SHORT), registry=reg)  # type: ignore[list-item]


def test_progress_reports_every_draft(reg: Registry) -> None:
    states: list[tuple[int, int]] = []
    final: list[ManyProgress] = []

    def on_progress(state: ManyProgress) -> None:
        states.append((state.done, state.accepted))
        final[:] = [state]

    grade_many(["a", "b c d e f g", "c"], rubric(reg, SHORT), progress=on_progress, registry=reg)
    assert [d for d, _ in states] == [1, 2, 3]
    assert final[0].accepted == 2 and final[0].total == 3 and final[0].eta_s == 0


# -- through the SDK: usage, cost, the cache, and 429s --------------------------------------


def test_usage_and_cache_through_the_real_client(emulator: Emulator, tmp_path: Any) -> None:
    emulator.responder = lambda body: verdict_reply(
        {"reasoning": "fine", "criteria_met": {"tone": True}, "passed": True, "issues": []}
    )
    r = Rubric.from_dict({"criteria": [TONE]})
    judge = AnthropicJudge(client=emulator.client(), model="claude-opus-5-5")
    drafts = [f"draft {i}" for i in range(12)]
    with JudgeCache(tmp_path / "c.db") as cache:
        first: list[ManyProgress] = []
        out = grade_many(drafts, r, judge=judge, cache=cache, progress=first.append)
        assert len(emulator.requests) == 12 and judge.cache is None  # the caller's judge
        assert all(len(e.judge_calls) == 1 and not e.judge_cached for e in out)
        assert all(e.judge_usage.cost_usd > 0 for e in out)
        state = first[-1]
        assert (state.judge_calls, state.cached) == (12, 0) and state.tokens > 0
        again: list[ManyProgress] = []
        out2 = grade_many(drafts, r, judge=judge, cache=cache, progress=again.append)
        assert len(emulator.requests) == 12  # the re-run sent nothing
        assert all(e.judge_cached and e.judge_usage.total_input == 0 for e in out2)
        assert [e.to_json()["criteria"] for e in out2] == [e.to_json()["criteria"] for e in out]
        assert (again[-1].judge_calls, again[-1].cached, again[-1].cost_usd) == (0, 12, 0.0)
        assert out2[0].to_json()["judge"] == {"calls": 0, "cached": 1, "cost_usd": 0.0}


@pytest.mark.parametrize("driver", ["grade_many", "agrade_many"])
def test_a_cache_needs_a_judge_that_takes_one(reg: Registry, tmp_path: Any, driver: str) -> None:
    with JudgeCache(tmp_path / "c.db") as cache, pytest.raises(TypeError, match="no 'cache'"):
        both(driver, ["a"], rubric(reg, TONE), judge=AllMet(), cache=cache, registry=reg)


@pytest.mark.parametrize("built_by", ["hand", "gradeloop, aiohttp", "gradeloop, httpx"])
def test_a_429_pauses_the_whole_batch_for_retry_after(
    emulator: Emulator, built_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if built_by.endswith("httpx"):
        without_aiohttp(monkeypatch)
    arrivals: list[float] = []
    throttled_at: list[float] = []
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Any:
        with lock:
            now = time.monotonic()
            arrivals.append(now)
            if not throttled_at:
                throttled_at.append(now)
                return http_error(429, "slow down", retry_after_ms="600")
        time.sleep(0.02)
        return verdict_reply(
            {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
        )

    emulator.responder = answer
    # a caller's own client runs as it is in worker threads; gradeloop's is awaited
    client = emulator.client() if built_by == "hand" else make_client(base_url=emulator.base_url)
    judge = AnthropicJudge(client=client)
    states: list[ManyProgress] = []
    out = grade_many(
        [f"d{i}" for i in range(12)],
        Rubric.from_dict({"criteria": [TONE]}),
        judge=judge,
        concurrency=4,
        progress=states.append,
    )
    assert all(e.accepted for e in out)  # the SDK retried the throttled request
    t0 = throttled_at[0]
    # the other requests on the wire when the 429 came (at most concurrency - 1 = 3)
    # may land after it, however late a busy machine delivers them; every request
    # started later waits out the pause (without it, the 8 drafts left would all
    # arrive within it, 20 ms apart)
    early = [round(t - t0, 3) for t in arrivals[1:] if t - t0 < 0.55]
    assert len(early) <= 3, early
    assert len(arrivals) == 13  # 12 drafts and the throttled one's retry
    assert states[-1].throttled == 1


def without_aiohttp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the SDK's aiohttp client unavailable, as it is without the aiohttp extra."""
    import anthropic

    class Missing:
        def __init__(self, **kwargs: Any) -> None:
            raise RuntimeError("To use the aiohttp client you must have installed the package")

    monkeypatch.setattr(anthropic, "DefaultAioHttpClient", Missing)


def agents_and_http(emulator: Emulator, client: Any, concurrency: int = 3) -> tuple[set[str], Any]:
    """The SDK clients (by user agent) a batch's requests came from, and the HTTP
    client class of the judge's async twin (None when there was none)."""
    rubric = Rubric.from_dict({"criteria": [TONE]})
    judge = AnthropicJudge(client=client)
    seen: list[Any] = []

    async def run() -> list[Any]:
        out = await agrade_many(["a", "b", "c"], rubric, judge=judge, concurrency=concurrency)
        twin = judge._async.client()
        seen.append(None if twin is None else type(twin._client))
        await judge.aclose()
        return out

    emulator.requests.clear()
    out = asyncio.run(run())
    assert all(e.accepted and len(e.judge_calls) == 1 for e in out)
    return {r.headers["user-agent"].split("/")[0] for r in emulator.requests}, seen[0]


def test_a_batch_awaits_the_sdks_async_client_and_runs_a_callers_client_as_it_is(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anthropic

    emulator.responder = lambda body: verdict_reply(
        {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
    )
    # built by gradeloop: the async twin on the SDK's aiohttp client (the extra is in dev)
    agents, http = agents_and_http(emulator, make_client(base_url=emulator.base_url))
    assert agents == {"AsyncAnthropic"} and issubclass(http, anthropic.DefaultAioHttpClient)
    # the caller's own client, used as it is (its sync calls in worker threads)
    agents, http = agents_and_http(emulator, emulator.client())
    assert agents == {"Anthropic"} and http is None
    # without aiohttp: the SDK's httpx async client
    without_aiohttp(monkeypatch)
    agents, http = agents_and_http(emulator, make_client(base_url=emulator.base_url))
    assert agents == {"AsyncAnthropic"} and http is anthropic.DefaultAsyncHttpxClient


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
@pytest.mark.parametrize("concurrency", [3, 140])
def test_the_connection_pool_is_sized_to_the_batch(
    concurrency: int, http: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's default pool keeps 100 idle connections: a batch of more drafts in
    # flight would close and reopen connections on every wave; sized to the batch,
    # each connection is opened once and reused.
    if http == "httpx":
        without_aiohttp(monkeypatch)
    server = Emulator(keep_alive=True, latency=0.05)
    try:
        server.responder = lambda body: verdict_reply(
            {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
        )
        judge = AnthropicJudge(client=make_client(base_url=server.base_url))
        out = grade_many(
            [f"d{i}" for i in range(3 * concurrency)],
            Rubric.from_dict({"criteria": [TONE]}),
            judge=judge,
            concurrency=concurrency,
        )
    finally:
        server.close()
    assert all(e.accepted for e in out)
    assert len(server.requests) == 3 * concurrency
    assert len({r.peer for r in server.requests}) <= concurrency


@pytest.mark.parametrize("samples", [1, 3])
def test_a_batch_asks_for_a_pool_as_wide_as_its_requests_in_flight(
    emulator: Emulator, samples: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's default pool holds 1,000 connections (100 idle with httpx): a batch of
    # more in flight would queue in the pool (or reconnect), so the twin's pool is
    # the batch's concurrency times the requests one draft has in flight at once.
    from gradeloop.models import _aclient

    asked: list[int | None] = []
    real = _aclient.async_http_client

    def recording(connections: int | None = None) -> Any:
        asked.append(connections)
        return real(connections)

    monkeypatch.setattr(_aclient, "async_http_client", recording)
    emulator.responder = lambda body: verdict_reply(
        {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
    )
    judge = AnthropicJudge(client=make_client(base_url=emulator.base_url), samples=samples)
    rubric = Rubric.from_dict({"criteria": [TONE]})
    assert all(e.accepted for e in grade_many(["a", "b"], rubric, judge=judge, concurrency=7))
    assert asked == [7 * samples]

    async def one_then_a_wide_batch() -> None:
        await agrade("a", rubric, judge=judge)  # outside a batch: the SDK's own limits
        await agrade_many(["b"] * 3, rubric, judge=judge, concurrency=300)
        await agrade_many(["c"] * 3, rubric, judge=judge, concurrency=2)  # served already
        await judge.aclose()

    asked.clear()
    asyncio.run(one_then_a_wide_batch())
    assert asked == [None, 300 * samples]


def test_an_async_grade_asks_the_judge_while_its_checkers_run() -> None:
    # The checker waits (off the event loop) until the judge has been asked: the
    # request does not wait for the checkers. grade() runs the checkers first.
    asked = threading.Event()
    during: list[bool] = []

    def waits_for_the_judge(text: str) -> CheckResult:
        during.append(asked.wait(timeout=5))
        return CheckResult(True, [])

    reg = Registry(autoload=False)
    reg.add("waits", waits_for_the_judge)
    r = rubric(reg, {"key": "w", "description": "W.", "checker": "waits"}, TONE)

    class Asked(AllMet):
        async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
            asked.set()
            await asyncio.sleep(0)
            return self.evaluate(task, draft, criteria)

    out = asyncio.run(agrade("d", r, task="t", judge=Asked(), registry=reg))
    assert out.accepted and out["w"].passed and during == [True]
    out = asyncio.run(agrade_many(["d"], r, task="t", judge=Asked(), registry=reg))
    assert out[0].accepted and during == [True, True]
    asked.clear()
    during.clear()

    def quick(text: str) -> CheckResult:
        during.append(asked.is_set())
        return CheckResult(True, [])

    reg.add("quick", quick)
    r = rubric(reg, {"key": "w", "description": "W.", "checker": "quick"}, TONE)
    assert grade("d", r, task="t", judge=Asked(), registry=reg).accepted
    assert during == [False]  # the twin: the sync grade checked before it asked


def test_a_judge_failure_during_the_checks_still_keeps_the_checked_keys(reg: Registry) -> None:
    r = rubric(reg, SHORT, TONE)
    out = asyncio.run(
        agrade_many(
            ["fine", "far too many words in this one draft"],
            r,
            task="t",
            judge=SlowAsyncJudge(fail_on="many"),
            registry=reg,
        )
    )
    assert out[0].accepted and out[0]["short"].passed
    assert out[1].judge_error and not out[1].accepted
    assert not out[1]["short"].passed and out[1]["short"].issues  # the checker's own finding


# -- a library leaves the process as it found it ---------------------------------------


def seeing(probe: Any) -> tuple[list[Any], Rubric, Registry]:
    """A rubric whose one checker notes ``probe()`` as it runs, and the notes."""
    notes: list[Any] = []

    def sees(text: str) -> CheckResult:
        notes.append(probe())
        return CheckResult(True, [])

    reg = Registry(autoload=False)
    reg.add("sees", sees)
    return notes, rubric(reg, {"key": "s", "description": "S.", "checker": "sees"}), reg


def process_state() -> tuple[Any, ...]:
    import gc
    import sys

    return gc.isenabled(), gc.get_freeze_count(), gc.get_threshold(), sys.getswitchinterval()


def test_a_batch_changes_nothing_process_wide_while_it_runs() -> None:
    before = process_state()
    seen, r, reg = seeing(process_state)
    grade_many(["a", "b", "c"], r, registry=reg, concurrency=2)
    assert seen == [before] * 3
    assert process_state() == before


def test_a_batch_uses_its_own_threads_and_leaves_the_loops_executor_alone() -> None:
    from concurrent.futures import ThreadPoolExecutor

    names, r, reg = seeing(lambda: threading.current_thread().name)
    r = rubric(reg, {"key": "s", "description": "S.", "checker": "sees"}, TONE)
    judged_in: list[str] = []

    class SyncJudge(AllMet):  # only a sync evaluate: it runs in a worker thread
        def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
            judged_in.append(threading.current_thread().name)
            return super().evaluate(task, draft, criteria)

    async def main() -> tuple[str, str]:
        loop = asyncio.get_running_loop()
        mine = ThreadPoolExecutor(2, thread_name_prefix="callers")
        loop.set_default_executor(mine)
        out = await agrade_many(
            ["a", "b", "c", "d"], r, registry=reg, concurrency=2, judge=SyncJudge()
        )
        assert all(e.accepted for e in out)
        # the loop's default executor is still the caller's, and it still works
        after = await loop.run_in_executor(None, lambda: threading.current_thread().name)
        return after, await asyncio.to_thread(lambda: threading.current_thread().name)

    after, again = asyncio.run(main())
    assert after.startswith("callers") and again.startswith("callers")
    # checkers run in the watched runner threads (grading/_watch.py), handed their
    # work from the batch's own pool
    assert len(names) == 4 and all(n.startswith("gradeloop-checks") for n in names)
    assert len(judged_in) == 4 and all(n.startswith("gradeloop-batch") for n in judged_in)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and batch_threads():
        time.sleep(0.01)
    assert not batch_threads()  # the batch's pool was shut down: none outlive it


def batch_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("gradeloop-batch")]


def test_each_code_only_draft_sees_its_own_task_and_metadata() -> None:
    # text drafts without a reference or metadata share one context per task; the rest
    # get their own: every checker still sees its draft's task and metadata
    from gradeloop.grading import CheckContext

    def echo(text: str, *, context: CheckContext) -> CheckResult:
        seen = f"{context.task}|{dict(context.metadata)}|{context.reference}"
        return CheckResult(seen == text, [f"saw {seen}"])

    reg = Registry()
    reg.add("echo", echo)
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "d", "checker": "echo"}]}, registry=reg
    )
    items = [
        DraftItem("a", "task A", "task A|{}|None"),
        DraftItem("b", "task B", "task B|{}|None"),
        DraftItem("a2", "task A", "task A|{}|None"),
        DraftItem("m", "task A", "task A|{'n': 1}|None", metadata={"n": 1}),
        DraftItem("r", "task B", "task B|{}|ref", reference="ref"),
        "shared task|{}|None",
    ]
    evals = grade_many(items, rubric, task="shared task", registry=reg, concurrency=1)
    assert [e.accepted for e in evals] == [True] * 6, [e.issues for e in evals]
