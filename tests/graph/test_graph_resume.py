"""Checkpoint and resume: a run whose generator or judge raised (or whose process died)
continues with ``invoke(None, config)`` and never re-runs a node that finished."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from gradeloop import HistoryStore, Rubric, Verdict
from gradeloop.errors import HistoryError, JudgeError
from gradeloop.grading import Registry
from gradeloop.graph import build_graph, final_result
from tests.support import graph_helpers
from tests.support.cli_helpers import ROOT
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

KEYS = ("api_cited", "errors_named", "no_invention")
CONFIG: Any = {"configurable": {"thread_id": "t1"}}


@pytest.fixture
def rubric() -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": k, "description": f"{k} holds"} for k in KEYS]},
        registry=Registry(autoload=False),
    )


def fail() -> Verdict:
    return verdict(False, dict.fromkeys(KEYS, False), ["add caveats"])


class FlakyGenerator(FakeGenerator):
    """Raises once, on attempt ``fail_on`` (from 1), before writing anything."""

    def __init__(self, fail_on: int, calls: list[str]) -> None:
        super().__init__(calls=calls)
        self.fail_on, self.attempts = fail_on, 0

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.attempts += 1
        if self.attempts == self.fail_on:
            raise ConnectionError("network down")
        return super().generate(task, draft, issues)


def test_a_run_whose_generator_raised_resumes_without_rerunning_finished_nodes(
    rubric: Rubric,
) -> None:
    calls: list[str] = []
    gen, judge = FlakyGenerator(2, calls), FakeJudge(fail(), fail(), fail(), calls=calls)
    graph = build_graph(rubric, generator=gen, judge=judge, checkpointer=InMemorySaver())
    with pytest.raises(ConnectionError, match="network down"):
        graph.invoke({"task": "t"}, CONFIG)
    stopped = graph.get_state(CONFIG)
    assert stopped.next == ("generate",) and stopped.values["rounds"] == 1
    final = graph.invoke(None, CONFIG)
    assert final_result(final) == ("d2", False) and final["rounds"] == 3
    assert calls == ["generate", "evaluate"] * 3  # d0 and its verdict were not redone
    assert [s["draft"] for s in judge.seen] == ["d0", "d1", "d2"]
    assert gen.attempts == 4  # three drafts, plus the one attempt that raised
    assert gen.prompts[1] == {
        "task": gen.prompts[0]["task"],
        "draft": "d0",
        "issues": ["add caveats"],
    }


def test_a_run_whose_judge_raised_resumes_at_the_judge(rubric: Rubric) -> None:
    calls: list[str] = []
    judge = FakeJudge(
        fail(), JudgeError("overloaded", reason="api_error"), fail(), fail(), calls=calls
    )
    graph = build_graph(
        rubric,
        generator=FakeGenerator(calls=calls),
        judge=judge,
        checkpointer=InMemorySaver(),
        judge_errors="raise",
    )
    with pytest.raises(JudgeError, match="overloaded"):
        graph.invoke({"task": "t"}, CONFIG)
    assert graph.get_state(CONFIG).next == ("evaluate",)
    final = graph.invoke(None, CONFIG)
    assert final_result(final) == ("d2", False)
    assert [s["draft"] for s in judge.seen] == ["d0", "d1", "d1", "d2"]  # d1 judged again
    assert calls.count("generate") == 3  # and not written again
    assert final["judge_error"] is None and final["judge_failures"] == 0


def test_a_finished_thread_resumed_makes_no_call(rubric: Rubric) -> None:
    calls: list[str] = []
    graph = build_graph(
        rubric,
        generator=FakeGenerator(calls=calls),
        judge=FakeJudge(fail(), fail(), fail(), calls=calls),
        checkpointer=InMemorySaver(),
    )
    first = graph.invoke({"task": "t"}, CONFIG)
    again = graph.invoke(None, CONFIG)
    assert again == first and len(calls) == 6


def test_a_process_killed_mid_run_resumes_in_another_process(tmp_path: Path) -> None:
    db, log, history = tmp_path / "checkpoints.db", tmp_path / "calls.log", tmp_path / "h.db"
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.graph_helpers",
            str(db),
            str(log),
            "d1",
            str(history),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == graph_helpers.CRASH_EXIT, child.stderr
    died = log.read_text().splitlines()
    assert died == ["generate d0", "evaluate d0", "generate d1", "evaluate d1"]

    with SqliteSaver.from_conn_string(str(db)) as saver, HistoryStore(history) as store:
        graph = build_graph(
            graph_helpers.rubric(),
            generator=graph_helpers.LogGenerator(log),
            judge=graph_helpers.LogJudge(log),
            checkpointer=saver,
            store=store,
        )
        thread: Any = graph_helpers.THREAD
        assert graph.get_state(thread).next == ("evaluate",)
        final = graph.invoke(None, thread, durability="sync")
        recorded = store.get(final["loop_id"])
    assert final_result(final) == ("d2", False) and final["rounds"] == 3
    # only the node that was running when the process died ran again
    assert log.read_text().splitlines()[len(died) :] == [
        "evaluate d1",
        "generate d2",
        "evaluate d2",
    ]
    assert [it["content"] for it in recorded["iterations"]] == ["d0", "d1", "d2"]
    assert recorded["status"] == "finished" and recorded["final_output_id"] == final["output_id"]
    assert recorded["iterations"][1]["feedback"] == "- fix d1"


class _Store:
    """A history store that fails once, either after or instead of a write."""

    def __init__(self, real: HistoryStore, *, after: bool) -> None:
        self.real, self.after, self.failed = real, after, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def add_iteration(self, loop_id: str, record: Mapping[str, Any]) -> None:
        if record["iteration"] == 2 and not self.failed:
            self.failed = True
            if not self.after:
                raise HistoryError("disk full")
            self.real.add_iteration(loop_id, record)
            raise RuntimeError("killed after the write, before the checkpoint")
        self.real.add_iteration(loop_id, record)


def test_an_iteration_recorded_before_a_crash_is_not_recorded_twice(
    rubric: Rubric, tmp_path: Path
) -> None:
    with HistoryStore(tmp_path / "h.db") as real:
        store = _Store(real, after=True)
        graph = build_graph(
            rubric,
            generator=FakeGenerator(),
            judge=FakeJudge(fail(), fail(), fail(), fail()),
            checkpointer=InMemorySaver(),
            store=store,
        )
        with pytest.raises(RuntimeError, match="killed after the write"):
            graph.invoke({"task": "t"}, CONFIG)
        final = graph.invoke(None, CONFIG)
        records = real.iterations(final["loop_id"])
    assert [r["content"] for r in records] == ["d0", "d1", "d2"]


def test_a_history_error_that_is_not_a_replay_still_stops_the_run(
    rubric: Rubric, tmp_path: Path
) -> None:
    with HistoryStore(tmp_path / "h.db") as real:
        graph = build_graph(
            rubric,
            generator=FakeGenerator(),
            judge=FakeJudge(fail(), fail(), fail()),
            checkpointer=InMemorySaver(),
            store=_Store(real, after=False),
        )
        with pytest.raises(HistoryError, match="disk full"):
            graph.invoke({"task": "t"}, CONFIG)
