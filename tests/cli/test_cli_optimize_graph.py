"""`gradeloop optimize --engine graph` and `--resume` against the emulator: checkpoints
in $GRADELOOP_HOME/checkpoints.db, resume after an API error or a killed process,
without re-running what finished. Commands run in this process (``cli``); only the
run that must die for real is a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gradeloop import HistoryStore, Rubric
from gradeloop.cli._optimize_graph import CHECKPOINTS, _Threads
from tests.cli.test_cli_optimize import RUBRIC, Model, judged
from tests.support.cli_helpers import EXAMPLE, Ran, cli, kill_when_blocked
from tests.support.emulator import Emulator, HTTPError

NO_RETRY = {"x-should-retry": "false"}


def graph(emulator: Emulator, *extra: str) -> Ran:
    return cli(
        "optimize",
        "--engine",
        "graph",
        "--rubric",
        RUBRIC,
        "--task-file",
        str(EXAMPLE / "task.md"),
        "--base-url",
        emulator.base_url,
        *extra,
    )


def kinds(emulator: Emulator) -> list[str]:
    return ["evaluate" if "output_config" in b else "generate" for b in emulator.bodies]


class FailOnce(Model):
    """A Model whose ``kind`` request number ``n`` (from 0) fails once, unretried."""

    def __init__(self, verdicts: list[Any], kind: str, n: int) -> None:
        super().__init__(verdicts)
        self.kind, self.n, self.seen, self.failed = kind, n, 0, False

    def __call__(self, body: dict[str, Any]) -> Any:
        if ("output_config" in body) == (self.kind == "evaluate"):
            if self.seen == self.n and not self.failed:
                self.failed = True
                return HTTPError(500, "upstream died", headers=NO_RETRY)
            self.seen += 1
        return super().__call__(body)


def test_graph_engine_runs_prints_rounds_and_records_history(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    emulator.responder = Model([judged(False), judged(True)])
    ran = graph(emulator, "--thread", "guide-1")
    assert ran.code == 0, ran.err
    assert ran.out == "# Guide\n\nDraft number 1. It is short.\n"
    assert (
        "thread guide-1 (if this run stops, continue it with `gradeloop optimize "
        "--resume guide-1`)" in ran.err
    )
    lines = [ln for ln in ran.err.splitlines() if ln.startswith("round ")]
    assert lines[0].startswith("round 1/3  score 4.00  fail  failed: api_cited, errors_named")
    assert lines[1].startswith("round 2/3  score 10.00  pass")
    assert "PASSED: passed after 2 rounds" in ran.err and "thread guide-1" in ran.err
    assert kinds(emulator) == ["generate", "evaluate"] * 2
    assert (gradeloop_home / "checkpoints.db").exists()
    with HistoryStore(gradeloop_home / "history.db") as store:
        loop_id = store.latest_loop_id()
        assert loop_id is not None
        config = store.loop_settings(loop_id)["config"]
        records = store.iterations(loop_id)
    assert config["engine"] == "graph" and config["thread_id"] == "guide-1"
    assert [r["feedback"] for r in records] == ["- cite 4.4 for retries", None]

    again = cli(
        "optimize",
        "--engine",
        "graph",
        "--thread",
        "guide-1",
        "--rubric",
        RUBRIC,
        "--task",
        "t",
        "--base-url",
        emulator.base_url,
    )
    assert again.code == 2
    assert "graph thread 'guide-1' already exists" in again.err
    assert "--resume guide-1" in again.err


def test_a_run_stopped_by_an_api_error_resumes_where_it_stopped(emulator: Emulator) -> None:
    emulator.responder = FailOnce([judged(False), judged(True)], "generate", 1)
    ran = graph(emulator, "--thread", "t2", "--no-history")
    assert ran.code == 2
    assert "the run stopped:" in ran.err and "upstream died" in ran.err
    assert "continue it with `gradeloop optimize --resume t2`" in ran.err
    assert kinds(emulator) == ["generate", "evaluate", "generate"]

    resumed = cli("optimize", "--resume", "t2", "--json")  # the base URL is the thread's
    assert resumed.code == 0, resumed.err
    assert "resuming t2" in resumed.err
    data = json.loads(resumed.out)
    assert data["thread_id"] == "t2" and data["engine"] == "graph"
    assert data["passed"] is True and data["stop_reason"] == "passed" and data["rounds"] == 2
    assert data["improvement_trajectory"] == [4.0, 10.0]
    # the first draft and its verdict were not asked for again
    assert kinds(emulator) == ["generate", "evaluate", "generate", "generate", "evaluate"]

    finished = cli("optimize", "--resume", "t2")
    assert finished.code == 0 and "had already finished" in finished.err
    assert finished.out == "# Guide\n\nDraft number 1. It is short.\n"
    assert len(emulator.bodies) == 5


def test_judge_errors_can_stop_the_run_for_a_resume(emulator: Emulator) -> None:
    emulator.responder = FailOnce([judged(False), judged(True)], "evaluate", 1)
    ran = cli(
        "optimize",
        "--engine",
        "graph",
        "--thread",
        "t3",
        "--rubric",
        RUBRIC,
        "--task",
        "t",
        "--base-url",
        emulator.base_url,
        "--on-judge-error",
        "raise",
        "--no-history",
    )
    assert ran.code == 2 and "--resume t3" in ran.err and "upstream died" in ran.err
    resumed = cli("optimize", "--resume", "t3", "--base-url", emulator.base_url)
    assert resumed.code == 0, resumed.err
    assert kinds(emulator) == ["generate", "evaluate", "generate", "evaluate", "evaluate"]
    judged_drafts = [b["messages"][0]["content"] for b in emulator.bodies if "output_config" in b]
    assert judged_drafts[1] == judged_drafts[2]  # the same draft, judged again


def test_a_killed_run_resumes_from_its_last_checkpoint(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    model = Model([judged(False)] * 3, block_on_draft=2)
    emulator.responder = model
    kill_when_blocked(
        model,
        [
            "optimize",
            "--engine",
            "graph",
            "--thread",
            "k1",
            "--rubric",
            RUBRIC,
            "--task",
            "write",
            "--base-url",
            emulator.base_url,
        ],
    )
    model.block_on_draft = None
    resumed = cli("optimize", "--resume", "k1")
    assert resumed.code == 1, resumed.err
    assert "NOT PASSED: max_rounds after 3 rounds" in resumed.err
    assert resumed.out == "# Guide\n\nDraft number 3. It is short.\n"
    # drafts 0 and 1 and their verdicts come from the checkpoint; only draft 2 is redone
    assert kinds(emulator) == ["generate", "evaluate"] * 2 + ["generate"] * 2 + ["evaluate"]
    with HistoryStore(gradeloop_home / "history.db") as store:
        loop_id = store.latest_loop_id()
        assert loop_id is not None
        data = store.get(loop_id)
    assert data["status"] == "finished" and len(data["iterations"]) == 3


def test_graph_flags_that_cannot_work_are_exit_2(emulator: Emulator) -> None:
    for args, message in (
        (
            ["optimize", "--resume", "nope"],
            "no graph thread 'nope': no graph run has been started yet",
        ),
        (
            ["optimize", "--resume", "nope", "--rubric", RUBRIC],
            "--rubric cannot be used with --resume: the thread keeps the settings it started with",
        ),
        (
            [
                "optimize",
                "--engine",
                "graph",
                "--rubric",
                RUBRIC,
                "--task",
                "t",
                "--token-budget",
                "5",
            ],
            "--token-budget cannot be used with --engine graph",
        ),
        (
            ["optimize", "--rubric", RUBRIC, "--task", "t", "--thread", "x"],
            "--thread needs --engine graph",
        ),
        (["optimize", "--resume", "x", "--engine", "loop"], "drop --engine loop"),
        (
            [
                "optimize",
                "--engine",
                "graph",
                "--rubric",
                RUBRIC,
                "--task",
                "t",
                "--return",
                "last",
            ],
            "--return cannot be used with --engine graph: the graph runs the basic loop",
        ),
        (
            ["optimize", "--task", "t", "--base-url", emulator.base_url],
            "give --rubric FILE (or --resume THREAD to continue a graph run)",
        ),
    ):
        ran = cli(*args)
        assert ran.code == 2 and message in ran.err, (args, ran.err)
    assert cli("optimize", "--resume", "nope").err.startswith(
        "gradeloop: error: no graph thread 'nope'"
    )
    assert emulator.bodies == []


def test_single_shot_and_cap_0_on_the_graph_engine(emulator: Emulator) -> None:
    emulator.responder = Model([judged(False)] * 3)
    base = [
        "optimize",
        "--engine",
        "graph",
        "--rubric",
        RUBRIC,
        "--task",
        "t",
        "--base-url",
        emulator.base_url,
        "--no-history",
    ]
    single = cli(*base, "--single-shot")
    assert single.code == 1 and "NOT PASSED: max_rounds after 1 round" in single.err
    assert kinds(emulator) == ["generate", "evaluate"]
    unjudged = cli(*base, "--max-rounds", "0")
    assert unjudged.code == 1 and "NOT PASSED: max_rounds after 0 rounds" in unjudged.err
    assert "scored -/10" in unjudged.err
    assert kinds(emulator) == ["generate", "evaluate", "generate"]


def test_a_thread_that_died_before_its_first_checkpoint_starts_over(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    settings = {
        "rubric": Rubric.load(RUBRIC).to_dict(),
        "max_rounds": 2,
        "history": False,
        "base_url": emulator.base_url,
    }
    with _Threads(gradeloop_home / CHECKPOINTS) as threads:
        threads.create("early", "write the guide", settings)
    emulator.responder = Model([judged(True)])
    ran = cli("optimize", "--resume", "early")
    assert ran.code == 0, ran.err
    assert kinds(emulator) == ["generate", "evaluate"]
    assert "write the guide" in emulator.bodies[0]["messages"][0]["content"]
    unknown = cli("optimize", "--resume", "late")
    assert unknown.code == 2 and "(recent threads: early)" in unknown.err


# -- the same loop, call for call: usage and cost equal on both engines -------------------


def _rounds_usage(store: HistoryStore, loop_id: str) -> list[tuple[Any, Any]]:
    return [(r["generation_usage"], r["evaluation_usage"]) for r in store.iterations(loop_id)]


def _engine_run(emulator: Emulator, engine: str, model: str) -> tuple[Ran, str]:
    emulator.responder = Model([judged(False)] * 3)
    extra = ["--stagnation-rounds", "0"] if engine == "loop" else []
    ran = cli(
        "optimize", "--engine", engine, "--rubric", RUBRIC, "--task-file",
        str(EXAMPLE / "task.md"), "--base-url", emulator.base_url, "--model", model,
        "--judge-model", model, "--max-rounds", "3", "--no-cache", *extra,
    )  # fmt: skip
    assert ran.code == 1, ran.err
    with HistoryStore() as store:
        loop_id = store.latest_loop_id()
    assert loop_id is not None
    return ran, loop_id


def test_both_engines_record_the_same_usage_and_cost_call_for_call(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    """A priced model: the graph kept its dollars (it used to record $0.0000); an
    unpriced one: the graph reaches round 2 (it used to crash on int(None))."""
    for model, priced in (("claude-opus-5-5", True), ("local-llm", False)):
        loop_ran, loop_id = _engine_run(emulator, "loop", model)
        graph_ran, graph_id = _engine_run(emulator, "graph", model)
        with HistoryStore() as store:
            by_loop, by_graph = _rounds_usage(store, loop_id), _rounds_usage(store, graph_id)
            costs = store.loop_costs([loop_id, graph_id])
        assert len(by_loop) == 3 and by_loop == by_graph  # tokens and dollars, round by round
        if priced:
            assert costs[loop_id] is not None and costs[loop_id] > 0
            assert costs[graph_id] == costs[loop_id]
        else:
            assert costs == {loop_id: None, graph_id: None}
        # and both print the same total: dollars, or "unknown" for a model with no price
        totals = [_cost(ran.err) for ran in (loop_ran, graph_ran)]
        assert totals[0] == totals[1] and (totals[0] != "unknown") == priced, totals


def _cost(err: str) -> str:
    [line] = [ln for ln in err.splitlines() if ln.startswith("NOT PASSED: max_rounds after 3")]
    return line.split("cost ", 1)[1].split(";", 1)[0]


def test_a_bug_inside_a_graph_node_is_exit_3_and_the_thread_can_resume(
    emulator: Emulator, gradeloop_home: Path, monkeypatch: Any, capsys: Any
) -> None:
    from gradeloop.cli import main
    from gradeloop.graph import _nodes

    def broken(data: Any) -> Any:
        raise TypeError("int() argument must be a string, not 'NoneType'")

    monkeypatch.setattr(_nodes, "usage_from", broken)
    emulator.responder = Model([judged(False)] * 3)
    code = main(
        ["optimize", "--engine", "graph", "--thread", "bug-1", "--rubric", RUBRIC,
         "--task", "t", "--base-url", emulator.base_url]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3, err
    assert "internal error: TypeError" in err and "please report it" in err
    assert "continue it with `gradeloop optimize --resume bug-1`" in err
