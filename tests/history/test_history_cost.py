"""Dollars in the history: per loop, per round, and in stats (unknown prices apart)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicGenerator, AnthropicJudge, HistoryStore, Rubric, run_loop
from gradeloop.testing import text_reply, verdict_reply
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator

RUBRIC = Rubric.from_dict({"criteria": [{"key": "a", "description": "A."}]})


def answer(body: dict[str, Any]) -> Any:
    if "output_config" not in body:
        return text_reply("a draft " * 30)
    return verdict_reply({"reasoning": "r", "criteria_met": {"a": True}, "passed": True,
                          "issues": []})  # fmt: skip


def loop(emulator: Emulator, store: HistoryStore, model: str) -> Any:
    client = emulator.client()
    return run_loop(
        "t", RUBRIC, generator=AnthropicGenerator(client=client, model=model),
        judge=AnthropicJudge(client=client, model=model), store=store,
    )  # fmt: skip


def test_loop_costs_and_the_summary(emulator: Emulator, tmp_path: Path) -> None:
    emulator.responder = answer
    with HistoryStore(tmp_path / "h.db") as store:
        priced = [loop(emulator, store, "claude-opus-5-5") for _ in range(2)]
        unpriced = loop(emulator, store, "local-model")
        costs = store.loop_costs([r.loop_id for r in [*priced, unpriced]])
        for r in priced:
            assert costs[r.loop_id] == pytest.approx(r.usage.cost_usd) and r.usage.cost_usd > 0
        assert costs[unpriced.loop_id] is None
        summary = store.stats()["cost"]
    total = sum(r.usage.cost_usd for r in priced)
    assert summary["total"] == pytest.approx(total, abs=1e-6)
    assert summary["per_loop"] == pytest.approx(total / 2, abs=1e-6)
    assert summary["per_passed_loop"] == pytest.approx(total / 2, abs=1e-6)
    assert (summary["priced_loops"], summary["unpriced_loops"]) == (2, 1)


def test_an_empty_history_costs_nothing_known(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        assert store.loop_costs([]) == {}
        assert store.cost_summary()["total"] is None


def test_the_cli_shows_dollars(emulator: Emulator, gradeloop_home: Path) -> None:
    emulator.responder = answer
    with HistoryStore(gradeloop_home / "history.db") as store:
        r = loop(emulator, store, "claude-opus-5-5")
    listing = cli("history", "--json")
    assert json.loads(listing.out)[0]["cost_usd"] == pytest.approx(r.usage.cost_usd)
    assert "$0.0" in cli("history").out and "$0.0" in cli("history", r.loop_id).out
    stats = cli("stats")
    assert "cost" in stats.out and "a passed loop, over 1 loop" in stats.out


def test_a_file_from_before_costs_is_backfilled_when_opened(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradeloop.history import _sql

    emulator.responder = answer
    path = tmp_path / "old.db"
    migrations = _sql.MIGRATIONS
    with monkeypatch.context() as m:  # a gradeloop from before migration 7
        m.setattr(_sql, "MIGRATIONS", migrations[:6])
        m.setattr(_sql, "SCHEMA_VERSION", 6)
        with HistoryStore(path) as old:
            result = loop(emulator, old, "claude-opus-5-5")
    with HistoryStore(path) as upgraded:
        assert upgraded.loop_costs([result.loop_id]) == {
            result.loop_id: pytest.approx(result.usage.cost_usd)
        }
        assert upgraded.cost_summary()["priced_loops"] == 1
        later = loop(emulator, upgraded, "claude-opus-5-5")  # the triggers carry on
        assert upgraded.cost_summary()["total"] == pytest.approx(
            result.usage.cost_usd + later.usage.cost_usd, abs=1e-6
        )
