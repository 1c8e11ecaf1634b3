"""Dollars on the command line: optimize's --max-cost and per-round cost, the live
status on a terminal, and the graph engine refusing --max-cost."""

from __future__ import annotations

from tests.cli_helpers import cli
from tests.emulator import Emulator
from tests.test_cli_optimize import Model, judged, optimize


def test_rounds_show_dollars_and_max_cost_stops_the_loop(emulator: Emulator) -> None:
    emulator.responder = Model([judged(False)] * 5)
    ran = optimize(
        emulator, "--model", "claude-opus-5-5", "--judge-model", "claude-opus-5-5",
        "--max-rounds", "5", "--stagnation-rounds", "0", "--max-cost", "0.000001",
        "--no-history",
    )  # fmt: skip
    assert ran.code == 1
    [line] = [ln for ln in ran.err.splitlines() if ln.startswith("round ")]
    assert "$0.0" in line  # the round's cost, priced
    assert "NOT PASSED: cost_budget after 1 round(s)" in ran.err and "cost $0." in ran.err


def test_an_unpriced_model_shows_an_unknown_cost(emulator: Emulator) -> None:
    emulator.responder = Model([judged(True)])
    ran = optimize(emulator, "--model", "local-llm", "--judge-model", "local-llm", "--no-history")
    assert ran.code == 0 and "$?" in ran.err and "cost $?" in ran.err


def test_the_status_line_follows_the_loop_events() -> None:
    from gradeloop.cli._optimize import _Progress
    from gradeloop.loop._run import LoopEvent

    shown: list[str] = []

    class Status:
        def update(self, text: str) -> None:
            shown.append(text)

    progress = _Progress(3)
    progress.status = Status()
    for kind, round_no in [("generate_start", 1), ("evaluate_start", 1), ("generate_start", 2)]:
        progress.event(LoopEvent(kind, "loop_x", round_no))  # type: ignore[arg-type]
    assert shown == ["round 1: drafting…", "round 1: judging…", "round 2: revising…"]
    progress.status = None
    progress.event(LoopEvent("evaluate_start", "loop_x", 3))  # no terminal: nothing to do


def test_the_graph_engine_refuses_max_cost(emulator: Emulator) -> None:
    ran = cli(
        "optimize", "--rubric", "x.toml", "--task", "t", "--engine", "graph",
        "--max-cost", "1", "--base-url", emulator.base_url,
    )  # fmt: skip
    assert ran.code == 2 and "--max-cost" in ran.err
