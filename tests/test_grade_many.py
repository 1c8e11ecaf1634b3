"""agrade, grade_many and agrade_many: same grading as grade(), many drafts at once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from gradeloop import (
    CheckResult,
    Criterion,
    DraftItem,
    JudgeCache,
    ManyProgress,
    Rubric,
    Verdict,
    agrade,
    agrade_many,
    grade,
    grade_many,
    make_client,
)
from gradeloop.errors import JudgeError, JudgeRequiredError
from gradeloop.grading._registry import Registry
from gradeloop.models._judge import AnthropicJudge
from gradeloop.testing import verdict_reply
from tests.emulator import Emulator, http_error
from tests.fakes import AllMet, FakeJudge, verdict


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


def test_grade_many_inside_a_running_loop_points_to_agrade_many(reg: Registry) -> None:
    async def inside() -> None:
        grade_many(["a"], rubric(reg, SHORT), registry=reg)

    with pytest.raises(RuntimeError, match=r"await agrade_many\(\.\.\.\)"):
        asyncio.run(inside())
    out = asyncio.run(agrade_many(["a", "b c d e f g"], rubric(reg, SHORT), registry=reg))
    assert [e.accepted for e in out] == [True, False]


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_bad_concurrency_is_refused(reg: Registry, bad: Any) -> None:
    with pytest.raises(ValueError, match="concurrency must be an integer >= 1"):
        grade_many(["a"], rubric(reg, SHORT), concurrency=bad, registry=reg)


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


def test_a_cache_needs_a_judge_that_takes_one(reg: Registry, tmp_path: Any) -> None:
    with JudgeCache(tmp_path / "c.db") as cache, pytest.raises(TypeError, match="no 'cache'"):
        grade_many(["a"], rubric(reg, TONE), judge=AllMet(), cache=cache, registry=reg)


@pytest.mark.parametrize("built_by", ["hand", "gradeloop", "gradeloop, httpx's stack"])
def test_a_429_pauses_the_whole_batch_for_retry_after(
    emulator: Emulator, built_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if built_by.endswith("stack"):  # the sync client in worker threads (see below)
        monkeypatch.setenv("GRADELOOP_HTTPX_TRANSPORT", "1")
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
    # awaited on the async twin, but the sync client in worker threads without the
    # lean transports
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
    # requests already on the wire when the 429 came may land just after it; none
    # started later may come before the pause is over
    late = [t - t0 for t in arrivals if t > t0 + 0.05]
    assert late and min(late) >= 0.55
    assert states[-1].throttled == 1


def test_grade_many_awaits_the_lean_async_twin_unless_only_httpxs_stack_is_allowed(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.responder = lambda body: verdict_reply(
        {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
    )
    rubric = Rubric.from_dict({"criteria": [TONE]})

    def agents_of_a_run() -> set[str]:
        emulator.requests.clear()
        judge = AnthropicJudge(client=make_client(base_url=emulator.base_url))
        out = grade_many(["a", "b", "c"], rubric, judge=judge, concurrency=3)
        assert all(e.accepted and len(e.judge_calls) == 1 for e in out)
        return {r.headers["user-agent"].split("/")[0] for r in emulator.requests}

    # the async twin, on the lean asyncio transport: the least CPU a request
    assert agents_of_a_run() == {"AsyncAnthropic"}
    # without the lean transports (a proxy, or the opt-out) the async twin would run on
    # httpx's own async stack, which costs more than the sync client in worker threads
    monkeypatch.setenv("GRADELOOP_HTTPX_TRANSPORT", "1")
    assert agents_of_a_run() == {"Anthropic"}
    judge = AnthropicJudge(client=make_client(base_url=emulator.base_url))
    emulator.requests.clear()
    again = asyncio.run(agrade_many(["d", "e"], rubric, judge=judge, concurrency=2))
    assert all(e.accepted for e in again)
    agents = {r.headers["user-agent"].split("/")[0] for r in emulator.requests}
    assert agents == {"AsyncAnthropic"}  # agrade_many always awaits the async twin


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


# -- the collector's full passes during a batch -----------------------------------------


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The suite freezes its heap once collected (conftest.py): undone for the test."""
    import gc

    gc.unfreeze()
    try:
        yield
    finally:
        gc.freeze()


def seeing(probe: Any) -> tuple[list[Any], Rubric, Registry]:
    """A rubric whose one checker notes ``probe()`` as it runs, and the notes."""
    notes: list[Any] = []

    def sees(text: str) -> CheckResult:
        notes.append(probe())
        return CheckResult(True, [])

    reg = Registry(autoload=False)
    reg.add("sees", sees)
    return notes, rubric(reg, {"key": "s", "description": "S.", "checker": "sees"}), reg


def test_a_batch_freezes_the_heap_it_found_and_unfreezes_it_after(unfrozen: None) -> None:
    import gc

    frozen, r, reg = seeing(gc.get_freeze_count)
    assert gc.get_freeze_count() == 0
    grade_many(["a", "b"], r, registry=reg)
    assert frozen and all(n > 1000 for n in frozen)  # the modules, the rubric...
    assert gc.get_freeze_count() == 0  # all back with the collector afterwards


def test_a_freeze_or_a_disabled_collector_of_the_callers_is_left_alone(unfrozen: None) -> None:
    import gc

    from gradeloop.bulk._process import quiet_heap

    reg = Registry(autoload=False)
    reg.add("short", short)
    r = rubric(reg, SHORT)
    gc.freeze()  # e.g. a pre-fork server's
    try:
        grade_many(["a"], r, registry=reg)
        # not undone by the batch (that would leave 0; a frozen object that dies
        # meanwhile, e.g. another test's leftover thread, lowers the count by one)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with quiet_heap():
            assert gc.get_freeze_count() == 0  # the caller manages the collector
    finally:
        gc.enable()
    with quiet_heap():  # overlapping batches share one freeze, undone by the last
        with quiet_heap():
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


# -- the switch interval during a batch ------------------------------------------------


def test_a_batch_shortens_the_switch_interval_and_puts_it_back() -> None:
    import sys

    seen, r, reg = seeing(sys.getswitchinterval)
    assert sys.getswitchinterval() == 0.005
    grade_many(["a", "b"], r, registry=reg)
    assert seen == [0.002, 0.002]
    assert sys.getswitchinterval() == 0.005


def test_a_switch_interval_of_the_callers_is_left_alone() -> None:
    import sys

    from gradeloop.bulk._process import prompt_loop

    seen, r, reg = seeing(sys.getswitchinterval)
    sys.setswitchinterval(0.01)
    try:
        grade_many(["a"], r, registry=reg)
        assert seen == [0.01] and sys.getswitchinterval() == 0.01
    finally:
        sys.setswitchinterval(0.005)
    with prompt_loop():  # overlapping batches: put back when the last one ends
        with prompt_loop():
            pass
        assert sys.getswitchinterval() == 0.002
        sys.setswitchinterval(0.003)  # changed by the caller meanwhile: theirs stays
    try:
        assert sys.getswitchinterval() == 0.003
    finally:
        sys.setswitchinterval(0.005)
    with prompt_loop():
        pass
    assert sys.getswitchinterval() == 0.005
