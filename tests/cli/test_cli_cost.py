"""Dollars on the command line: optimize's --max-cost and per-round cost, the live
status on a terminal, and the graph engine refusing --max-cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.test_cli_optimize import EXAMPLE, RUBRIC, Model, judged, optimize
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator


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
    assert "NOT PASSED: cost_budget after 1 round" in ran.err and "cost $0." in ran.err


def test_an_unpriced_model_shows_an_unknown_cost(emulator: Emulator) -> None:
    emulator.responder = Model([judged(True)])
    ran = optimize(emulator, "--model", "local-llm", "--judge-model", "local-llm", "--no-history")
    assert ran.code == 0 and "  cost unknown  " in ran.err and "out, cost unknown;" in ran.err
    assert "$0.0000" not in ran.err  # unknown, never $0


def test_the_status_line_follows_the_loop_events() -> None:
    from gradeloop.cli._optimize import _Progress
    from gradeloop.loop import LoopEvent

    shown: list[str] = []

    class Status:
        def update(self, text: str, spinner: str = "") -> None:
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


def test_each_rounds_line_is_printed_before_the_next_round_starts(emulator: Emulator) -> None:
    import sys

    model = Model([judged(False), judged(True)])
    seen_when_revising: list[str] = []

    def answer(body: dict[str, Any]) -> Any:
        if "output_config" not in body and model.drafts == 1:  # round 2's revision request
            seen_when_revising.append(sys.stderr.getvalue())  # the CLI's captured stderr
        return model(body)

    emulator.responder = answer
    ran = optimize(emulator, "--no-history")
    assert ran.code == 0, ran.err
    [before] = seen_when_revising
    assert "round 1/3  score 4.00  fail" in before  # printed as it happened, not at the end
    assert "round 2/3" not in before


def test_a_cached_verdict_is_marked_in_the_history_and_costs_nothing(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    from gradeloop import HistoryStore

    ids = []
    for _ in range(2):  # the same draft twice: the second verdict comes from the cache
        emulator.responder = Model([judged(True)])
        ran = optimize(emulator, "--judge-model", "claude-opus-5-5")
        assert ran.code == 0, ran.err
        with HistoryStore(gradeloop_home / "history.db") as store:
            ids.append(store.latest_loop_id())
    assert len(emulator.requests) == 3  # two drafts, one judge request
    with HistoryStore(gradeloop_home / "history.db") as store:
        first, second = (store.iterations(i)[0] for i in ids)
    assert (first["evaluation"]["judge"]["calls"], first["evaluation"]["judge"]["cached"]) == (1, 0)
    assert second["evaluation"]["judge"] == {"calls": 0, "cached": 1, "cost_usd": 0.0}
    assert second["evaluation_usage"]["input_tokens"] == 0
    assert first["evaluation_usage"]["input_tokens"] > 0


def test_compare_and_calibrate_with_jobs_give_the_same_report_and_its_dollars(
    emulator: Emulator,
) -> None:
    from tests.migration.test_compare import stand_in
    from tests.support.cli_helpers import EXAMPLE

    emulator.responder = stand_in().respond
    common = (
        "--rubric", str(EXAMPLE / "rubric-shadow.toml"), "--task-file", str(EXAMPLE / "task.md"),
        "--base-url", emulator.base_url, "--judge-model", "claude-opus-5-5", "--no-cache",
    )  # fmt: skip
    compared = [
        cli("compare", str(EXAMPLE / "drafts.jsonl"), *common, "--no-history", "--jobs", jobs)
        for jobs in ("1", "4")
    ]
    assert compared[0].code == 0, compared[0].err
    assert compared[0].out == compared[1].out  # the same report, whatever the concurrency
    assert "per draft), $0." in compared[0].out  # dollars in total and per draft
    calibrated = cli("calibrate", str(EXAMPLE / "labels.jsonl"), *common, "--jobs", "4")
    assert calibrated.code == 0, calibrated.err
    assert "tokens, $0." in calibrated.out and " a draft)" in calibrated.out


def test_a_terminal_sees_each_phase_of_a_round_as_it_starts(emulator: Emulator) -> None:
    emulator.responder = Model([judged(False), judged(True)])
    ran = cli(
        "optimize", "--rubric", RUBRIC, "--task-file", str(EXAMPLE / "task.md"),
        "--base-url", emulator.base_url, "--max-rounds", "3", "--no-history", tty=True,
    )  # fmt: skip
    assert ran.code == 0
    shown = [phase for phase in PHASES if phase in ran.err]
    assert shown == PHASES  # each phase was on the status line while its call ran
    assert ran.err.index("round 1: drafting") < ran.err.index("round 1/3")


def test_piped_stderr_gets_the_round_lines_only(emulator: Emulator) -> None:
    emulator.responder = Model([judged(False), judged(True)])
    ran = optimize(emulator, "--max-rounds", "3", "--no-history")
    assert ran.code == 0 and "round 1/3" in ran.err and "round 2/3" in ran.err
    assert not any(phase in ran.err for phase in PHASES)


PHASES = ["round 1: drafting", "round 1: judging", "round 2: revising", "round 2: judging"]
