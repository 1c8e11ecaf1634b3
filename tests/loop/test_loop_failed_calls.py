"""Every call a loop made, failed ones included, is in its usage and its history (issue 34).

A small local model writes until ``max_tokens``; the cut-off draft raises, and the
tokens it cost used to vanish: ``gradeloop history`` listed the loop as interrupted
with no tokens and "$0.0000". Here the failed calls count, the loop is recorded as
``generator_failed``, and a model without a price shows its cost as unknown.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import HistoryStore, arun_loop, run_loop
from gradeloop.errors import NotAnAnswer
from gradeloop.models import CallRecord, Usage, record_call
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.fakes import AllMet, FakeGenerator
from tests.support.oai_emulator import OAIEmulator, chat, verdict_chat

RUBRIC = {"criteria": [{"key": "a", "description": "A."}]}
PRICED = Usage(100, 50, cost_usd=0.25)
UNPRICED = Usage(100, 8192, cost_usd=None)


class CutOff:
    """Records one call with ``usage`` per draft, then raises as a cut-off draft does;
    the first ``good`` drafts succeed."""

    def __init__(self, usage: Usage, good: int = 0) -> None:
        self.usage, self.good = usage, good

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        ok = self.good > 0
        self.good -= 1
        record_call(CallRecord("generate", "m", "max_tokens", self.usage, 1.0, ok=ok))
        if ok:
            return f"draft {self.good}"
        raise NotAnAnswer("the reply was cut off at max_tokens", reason="max_tokens")


def test_a_failed_first_draft_is_in_the_history_tokens_and_cost(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.db")
    with pytest.raises(NotAnAnswer):
        run_loop("t", RUBRIC, generator=CutOff(PRICED), judge=AllMet(), store=store)
    loop_id = store.latest_loop_id()
    assert loop_id is not None
    data = store.get(loop_id)
    assert data["status"] == "finished" and data["stop_reason"] == "generator_failed"
    assert data["unrounded_usage"]["output_tokens"] == 50 and data["unrounded_usage"]["calls"] == 1
    assert store.loop_costs([loop_id]) == {loop_id: 0.25}
    assert store.cost_summary()["total"] == 0.25


def test_an_unpriced_failed_draft_makes_the_cost_unknown_never_zero(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    store = HistoryStore(db)
    with pytest.raises(NotAnAnswer):
        run_loop("t", RUBRIC, generator=CutOff(UNPRICED), judge=AllMet(), store=store)
    loop_id = store.latest_loop_id()
    assert loop_id is not None and store.loop_costs([loop_id]) == {loop_id: None}
    store.close()
    listed = cli("history", "--db", str(db))
    assert "unknown" in listed.out and "$0.0000" not in listed.out
    assert "generator_failed" in listed.out
    shown = cli("history", loop_id, "--db", str(db))
    assert "calls in no round (a draft that failed): 1, tokens 100 in/8192 out" in shown.out
    assert "cost unknown" in shown.out


def test_a_failed_revision_counts_in_the_result_and_the_history(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.db")
    judge = _Failing()
    result = run_loop(
        "t", RUBRIC, generator=CutOff(PRICED, good=1), judge=judge, store=store, max_rounds=3
    )
    assert result.stop_reason == "generator_failed"
    assert result.unrounded_usage == PRICED
    assert result.usage == PRICED + PRICED  # the judged draft's call and the failed one
    data = store.get(result.loop_id)
    assert data["unrounded_usage"]["output_tokens"] == 50
    assert store.loop_costs([result.loop_id]) == {result.loop_id: 0.5}


def test_a_loop_without_failed_calls_has_none_in_no_round(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.db")
    result = run_loop("t", RUBRIC, generator=FakeGenerator(["x"]), judge=AllMet(), store=store)
    assert result.passed and result.unrounded_usage == Usage()
    assert "unrounded_usage" not in store.get(result.loop_id)


def test_arun_loop_counts_a_failed_first_draft_too(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.db")
    with pytest.raises(NotAnAnswer):
        asyncio.run(arun_loop("t", RUBRIC, generator=CutOff(PRICED), judge=AllMet(), store=store))
    loop_id = store.latest_loop_id()
    assert loop_id is not None and store.loop_costs([loop_id]) == {loop_id: 0.25}
    assert store.get(loop_id)["stop_reason"] == "generator_failed"


class _Failing:
    """A judge whose every verdict fails the key (so the loop revises)."""

    def evaluate(self, task: str, draft: str, criteria: Any) -> dict[str, Any]:
        return {"reasoning": "r", "criteria_met": {"a": False}, "passed": False, "issues": ["x"]}


# -- the CLI, on a server whose small model writes until max_tokens ---------------------


@pytest.mark.parametrize("engine", ["loop", "graph"])
def test_optimize_max_tokens_reaches_the_server_and_the_cut_off_draft_is_counted(
    oai_emulator: OAIEmulator, tmp_path: Path, engine: str
) -> None:
    oai_emulator.responder = lambda body: chat("word " * 8, finish_reason="length")
    db = str(tmp_path / "h.db")
    model = ["--provider", "openai-compatible", "--base-url", oai_emulator.base_url]
    ran = cli(
        "optimize", "--rubric", str(EXAMPLE / "rubric.toml"), "--task", "Write a guide.",
        "--model", "gemma", "--judge-model", "gemma", "--max-tokens", "8", "--db", db, *model,
        "--engine", engine,
    )  # fmt: skip
    assert ran.code == 2 and "max_tokens" in ran.err
    assert oai_emulator.bodies[0]["max_tokens"] == 8
    listed = cli("history", "--db", db, "--json")
    (loop,) = json.loads(listed.out)
    assert loop["cost_usd"] is None  # gemma has no price: unknown, never $0
    if engine == "loop":
        assert loop["stop_reason"] == "generator_failed"
    shown = json.loads(cli("history", loop["loop_id"], "--db", db, "--json").out)
    assert shown["unrounded_usage"]["output_tokens"] > 0


def test_the_rubric_sets_the_generator_ceiling_and_the_flag_wins(
    oai_emulator: OAIEmulator, tmp_path: Path
) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[generator]\nmax_tokens = 300\n\n[[criteria]]\nkey = "a"\ndescription = "A."\n'
    )
    oai_emulator.responder = lambda body: (
        verdict_chat({"reasoning": "r", "criteria_met": {"a": True}, "passed": True, "issues": []})
        if "response_format" in body
        else chat("# Draft")
    )
    model = ["--provider", "openai-compatible", "--base-url", oai_emulator.base_url]
    base = ["optimize", "--rubric", str(rubric), "--task", "t", "--model", "g", "--no-history"]
    base += ["--judge-model", "g"]
    assert cli(*base, *model).code == 0
    assert oai_emulator.bodies[0]["max_tokens"] == 300
    assert cli(*base, "--max-tokens", "40", *model).code == 0
    assert oai_emulator.bodies[2]["max_tokens"] == 40


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ("[generator]\nmax_tokens = 0\n", "generator.max_tokens must be a whole number"),
        ("[generator]\nmax_tokens = true\n", "generator.max_tokens must be a whole number"),
        ("[generator]\nmax_token = 10\n", "did you mean 'max_tokens'?"),
        ('generator = "big"\n', "'generator' is a table"),
    ],
)
def test_a_bad_generator_table_is_refused_naming_the_field(
    tmp_path: Path, table: str, said: str
) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(table + '\n[[criteria]]\nkey = "a"\ndescription = "A."\n')
    ran = cli("optimize", "--rubric", str(rubric), "--task", "t", "--base-url", "http://x")
    assert ran.code == 2 and said in ran.err and "r.toml" in ran.err


def test_max_tokens_must_be_positive() -> None:
    ran = cli("optimize", "--rubric", str(EXAMPLE / "rubric.toml"), "--max-tokens", "0")
    assert ran.code == 2 and "--max-tokens" in ran.err
