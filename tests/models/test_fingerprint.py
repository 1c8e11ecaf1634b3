"""Run fingerprints: what is recorded, what differs, and which model ids are aliases."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import AnthropicJudge, HistoryStore, Rubric, run_loop
from gradeloop.models import fingerprint_warnings, run_fingerprint
from gradeloop.models._fingerprint import (
    fingerprint_differences,
    rubric_digest,
    stored_fingerprint,
    undated_alias,
)
from tests.support.emulator import Emulator
from tests.support.fakes import AllMet, FakeGenerator

RUBRIC = {"criteria": [{"key": "a", "description": "d"}]}


@pytest.mark.parametrize(
    "model",
    [
        "claude-3-5-sonnet-latest",
        "claude-sonnet-4-5",  # before 4.6 a dateless id is an alias of the newest snapshot
        "claude-opus-4-1",
        "claude-3-7-sonnet",
        "claude-haiku-4-5",
        "sonnet",
        "opus",
        "llama3:latest",
        "gemini-1.5-pro-latest",
        "anthropic/claude-sonnet-4-0",
    ],
)
def test_aliases(model: str) -> None:
    assert undated_alias(model)


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5@20251001",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-3-opus-20240229",
        "claude-opus-4-6",  # from 4.6 on the dateless id is the pinned snapshot
        "claude-sonnet-4-6",
        "claude-opus-5-5",
        "claude-sonnet-5",
        "anthropic.claude-opus-4-6-v1",
        "gpt-4o-2024-08-06",
        "qwen2.5-7b-instruct",
        "",
    ],
)
def test_pinned_ids(model: str) -> None:
    assert not undated_alias(model)


@given(st.text(max_size=200))
def test_any_model_name_is_read_without_error(name: str) -> None:
    assert undated_alias(name) in (True, False)


def test_a_long_hostile_name_is_read_in_linear_time() -> None:
    import time

    name = "claude-" + "9-" * 50_000 + "x"
    started = time.perf_counter()
    undated_alias(name)
    assert time.perf_counter() - started < 2.0  # generous: linear is milliseconds


def test_an_anthropic_judges_fingerprint(emulator: Emulator) -> None:
    judge = AnthropicJudge(emulator.client(), model="claude-opus-5-5", samples=3)
    fp = run_fingerprint(judge, RUBRIC)
    host = emulator.base_url.removeprefix("http://")
    assert fp["provider"] == "anthropic" and fp["model"] == "claude-opus-5-5"
    assert fp["base_url_host"] == host and fp["rubric_digest"] == rubric_digest(RUBRIC)
    assert fp["sampling"]["samples"] == 3


def test_no_judge_and_a_custom_one_and_a_jury() -> None:
    assert run_fingerprint(None, RUBRIC)["model"] is None

    class Mine:
        model = "m1"

    assert run_fingerprint(Mine(), RUBRIC)["provider"] == "custom:Mine"

    class Panel:
        def __init__(self) -> None:
            self.judges = [Mine(), Mine()]

    fp = run_fingerprint(Panel(), RUBRIC)
    assert fp["provider"] == "jury" and fp["model"] == "m1 + m1"


def test_the_rubric_digest_ignores_key_order_and_sees_a_change() -> None:
    a = {"criteria": [{"key": "a", "description": "d"}], "name": "n"}
    b = {"name": "n", "criteria": [{"description": "d", "key": "a"}]}
    assert rubric_digest(a) == rubric_digest(b)
    assert rubric_digest(a) != rubric_digest({**a, "name": "m"})


def test_warnings_name_what_differs_and_each_alias_once() -> None:
    one = {
        "provider": "anthropic",
        "model": "claude-3-5-sonnet-latest",
        "rubric_digest": "x",
        "base_url_host": "h",
        "sampling": {"samples": 1},
    }
    two = {**one, "model": "claude-opus-4-6", "sampling": {"samples": 3}}
    out = fingerprint_warnings([("r1", one), ("r2", two), ("r1", one)])
    assert out[0] == "r1 and r2 differ in judge model: claude-3-5-sonnet-latest vs claude-opus-4-6"
    assert out[1] == "r1 and r2 differ in judge sampling: samples=1 vs samples=3"
    assert sum("alias without a date" in w for w in out) == 1 and out[-1].startswith("r1: ")
    assert fingerprint_warnings([("r1", two), ("r2", dict(two))]) == []  # the twin


def test_a_field_one_side_never_recorded_is_no_difference() -> None:
    old = stored_fingerprint({"judge_model": "m"}, RUBRIC)
    new = run_fingerprint(type("J", (), {"model": "m"})(), RUBRIC)
    assert fingerprint_differences(old, new) == []
    assert fingerprint_differences(old, {**new, "model": "n"}) == ["model"]


def _config(store: HistoryStore, loop_id: str) -> dict[str, Any]:
    return store.loop_settings(loop_id)["config"]


def test_every_loop_records_its_fingerprint(tmp_path: Any) -> None:
    rubric = Rubric.from_dict(RUBRIC)
    with HistoryStore(tmp_path / "h.db") as store:
        result = run_loop("t", rubric, generator=FakeGenerator(), judge=AllMet(), store=store)
        fp = _config(store, result.loop_id)["fingerprint"]
    assert fp["provider"] == "custom:AllMet" and fp["rubric_digest"] == rubric_digest(
        rubric.to_dict()
    )


class _Named(AllMet):
    def __init__(self, model: str) -> None:
        super().__init__()
        self.model = model


def test_compare_from_history_warns_when_the_loops_differ(tmp_path: Any) -> None:
    from tests.support.cli_helpers import cli

    rubric_path = tmp_path / "r.toml"
    rubric_path.write_text(
        '[[criteria]]\nkey = "short"\ndescription = "d"\nchecker = "length"\n'
        "options = { max_words = 50 }\n",
        encoding="utf-8",
    )
    rubric = Rubric.load(rubric_path)
    db = tmp_path / "h.db"

    def loops(*models: str) -> None:
        with HistoryStore(db) as store:
            for m in models:
                run_loop("t", rubric, generator=FakeGenerator(), judge=_Named(m), store=store)

    loops("m1", "m1")
    args = ("compare", "--from-history", "--rubric", str(rubric_path), "--db", str(db))
    ran = cli(*args)
    assert ran.code == 0, ran.err
    assert "differ" not in ran.err  # the twin: one judge throughout
    loops("claude-3-5-sonnet-latest")
    ran = cli(*args)
    assert "the drafts come from loops that differ" in ran.err
    assert "differ in judge model: claude-3-5-sonnet-latest vs m1" in ran.err
