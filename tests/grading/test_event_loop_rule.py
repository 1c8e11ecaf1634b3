"""The one rule for a sync function that runs an event loop of its own (grade_many,
compare_many): it works wherever it is called. Outside a running loop it runs its loop
in the caller's thread; inside one (asyncio code, Jupyter) in a worker thread while
the caller waits, with the caller's context, and an interrupted wait cancels it."""

from __future__ import annotations

import asyncio
import contextvars
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from gradeloop import Criterion, Verdict, grade_many
from gradeloop.grading import _drivers
from gradeloop.grading._drivers import LoopThread, blocking
from gradeloop.judging import compare_many
from tests.support.judging_fakes import Prefers

RUBRIC = {
    "criteria": [
        {"key": "tone", "description": "Polite."},
        {"key": "brief", "description": "Brief.", "checker": "length", "options": {"max_words": 3}},
    ]
}
CODE_ONLY = {"criteria": [RUBRIC["criteria"][1]]}
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="none")


class Seen:
    """Where the async half of a judge ran: its thread, and the caller's context."""

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.callers: list[str] = []
        self.closed = 0

    def note(self) -> None:
        self.threads.append(threading.current_thread().name)
        self.callers.append(CALLER.get())


class AsyncJudge(Seen):
    """Meets "tone" on drafts that say please; ``aevaluate`` runs on the event loop."""

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        raise AssertionError("an event loop was run: aevaluate must be awaited")

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.note()
        met = "please" in draft
        return Verdict(reasoning="r", criteria_met={"tone": met}, passed=met, issues=[])

    async def aclose(self) -> None:
        self.closed += 1


class AsyncPrefers(Prefers, Seen):
    """:class:`Prefers` with ``aprefer`` (run on the event loop)."""

    def __init__(self) -> None:
        Prefers.__init__(self, "GOOD")
        Seen.__init__(self)

    async def aprefer(self, task: str, first: str, second: str, criteria: Any) -> Any:
        self.note()
        return self.prefer(task, first, second, criteria)

    async def aclose(self) -> None:
        self.closed += 1


def grade_many_entry() -> tuple[Seen, Callable[[], Any]]:
    judge = AsyncJudge()
    drafts = ["please hold", "hold on, wait for me", "no"]
    return judge, lambda: [
        (e.accepted, e.verdict.criteria_met) for e in grade_many(drafts, RUBRIC, judge=judge)
    ]


def compare_many_entry() -> tuple[Seen, Callable[[], Any]]:
    judge = AsyncPrefers()
    pairs = [("plain", "GOOD one"), ("GOOD too", "plain")]
    return judge, lambda: [p.by_key for p in compare_many(pairs, RUBRIC, judge=judge)]


ENTRY_POINTS = {"grade_many": grade_many_entry, "compare_many": compare_many_entry}


def call(inside_a_loop: bool, fn: Callable[[], Any]) -> Any:
    """``fn()`` with CALLER set, from plain sync code or from a coroutine's body."""
    CALLER.set("the caller")
    if not inside_a_loop:
        return fn()

    async def main() -> Any:
        return fn()  # a blocking call, inside the running loop

    return asyncio.run(main())


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_outside_a_running_loop_the_loop_runs_in_the_callers_thread(name: str) -> None:
    judge, fn = ENTRY_POINTS[name]()
    found = contextvars.copy_context().run(call, False, fn)
    assert found  # graded / compared
    assert set(judge.threads) == {threading.current_thread().name}
    assert set(judge.callers) == {"the caller"} and judge.closed == 1


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_inside_a_running_loop_it_runs_in_a_worker_thread_with_the_same_result(
    name: str,
) -> None:
    _, fn = ENTRY_POINTS[name]()
    outside = contextvars.copy_context().run(call, False, fn)
    judge_inside, fn_inside = ENTRY_POINTS[name]()
    inside = contextvars.copy_context().run(call, True, fn_inside)
    assert inside == outside
    assert set(judge_inside.threads) == {"gradeloop-loop"}  # not the caller's loop
    assert set(judge_inside.callers) == {"the caller"}  # the caller's context came along
    assert judge_inside.closed == 1  # the async client that loop used, closed


def test_a_code_only_grade_many_runs_no_loop_anywhere() -> None:
    async def main() -> list[bool]:
        return [e.accepted for e in grade_many(["a b", "a b c d"], CODE_ONLY)]

    assert asyncio.run(main()) == [True, False]
    assert [e.accepted for e in grade_many(["a b", "a b c d"], CODE_ONLY)] == [True, False]


def test_an_interrupted_wait_cancels_the_work_and_propagates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()  # its cleanup ran (grade_many closes the judge's client here)

    def interrupted(self: LoopThread) -> Any:
        assert started.wait(5)
        raise KeyboardInterrupt  # what Ctrl-C raises in the waiting thread

    monkeypatch.setattr(LoopThread, "result", interrupted)

    async def main() -> None:
        blocking(forever)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert cancelled.wait(5)


def test_a_loop_thread_cancelled_before_it_starts_never_runs_main() -> None:
    ran: list[bool] = []

    async def main() -> None:
        ran.append(True)

    gate = threading.Lock()
    with gate:  # hold the thread at its start until cancel() has run
        original = LoopThread._main

        async def held(self: LoopThread, fn: Any) -> Any:
            with gate:
                pass
            return await original(self, fn)

        LoopThread._main = held  # type: ignore[method-assign]
        try:
            worker = LoopThread(main)
            worker.cancel()
        finally:
            LoopThread._main = original  # type: ignore[method-assign]
    with pytest.raises(asyncio.CancelledError):
        worker.result()
    assert ran == []
    done = LoopThread(main)  # the twin: not cancelled, it runs
    assert done.result() is None and ran == [True]


def test_outside_a_loop_blocking_is_asyncio_run() -> None:
    async def where() -> str:
        return threading.current_thread().name

    assert blocking(where) == threading.current_thread().name


# -- the rule is applied everywhere -------------------------------------------------------

SRC = Path(__file__).resolve().parents[2] / "src" / "gradeloop"
OWN_LOOP = re.compile(r"\basyncio\.run\(|\bnew_event_loop\(|\brun_until_complete\(")


def loop_starters(root: Path) -> list[str]:
    """The modules under ``root`` that start an event loop themselves."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if OWN_LOOP.search(p.read_text(encoding="utf-8"))
    )


def test_only_the_rule_starts_an_event_loop() -> None:
    assert loop_starters(SRC) == [str(Path(_drivers.__file__).relative_to(SRC))]


def test_the_scan_sees_a_loop_started_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("async def f(): ...\n", encoding="utf-8")
    assert loop_starters(tmp_path) == []  # the passing twin
    (tmp_path / "runs.py").write_text("import asyncio\nasyncio.run(f())\n", encoding="utf-8")
    assert loop_starters(tmp_path) == ["runs.py"]
