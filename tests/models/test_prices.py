"""Cost in dollars: the shipped price table, the override file, and Usage.cost_usd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradeloop import AnthropicJudge
from gradeloop.errors import ConfigError
from gradeloop.models import Usage
from gradeloop.models._prices import cost_usd, price_of, price_table
from gradeloop.testing import verdict_reply
from tests.models.test_judge import CRITERIA, good
from tests.support.emulator import Emulator


def test_every_shipped_price_names_its_source_and_the_table_its_date() -> None:
    table = price_table()
    assert table.verified == "2026-12-01"
    assert table.models
    assert all(
        (p.source or "").startswith("https://platform.claude.com/docs/")
        for p in table.models.values()
    )


def test_opus_5_5_is_priced_as_its_overview_page_says() -> None:
    p = price_of("claude-opus-5-5")
    assert p is not None
    assert (p.input, p.output, p.cache_write_5m, p.cache_write_1h, p.cache_read) == (
        4.0,
        20.0,
        5.0,
        8.0,
        0.20,
    )
    assert p.batch_discount == 0.5


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-haiku-5-5", "my-local-llama"])
def test_models_whose_price_could_not_be_verified_cost_none(model: str) -> None:
    assert price_of(model) is None
    assert cost_usd(model, {"input_tokens": 10, "output_tokens": 10}) is None
    assert Usage.from_block({"input_tokens": 10}, model=model).cost_usd is None


def test_the_arithmetic_by_hand() -> None:
    block = {
        "input_tokens": 1_000,
        "output_tokens": 200,
        "cache_creation_input_tokens": 3_000,
        "cache_read_input_tokens": 10_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1_000, "ephemeral_1h_input_tokens": 2_000},
    }
    # 1000*4 + 200*20 + 1000*5 + 2000*8 + 10000*0.2 = 4000+4000+5000+16000+2000 = 31000
    assert cost_usd("claude-opus-5-5", block) == pytest.approx(0.031)
    assert cost_usd("claude-opus-5-5", block, batch=True) == pytest.approx(0.0155)
    no_split = {k: v for k, v in block.items() if k != "cache_creation"}
    # every write at the 5-minute rate: 4000+4000+15000+2000
    assert cost_usd("claude-opus-5-5", no_split) == pytest.approx(0.025)


def test_a_dated_model_id_takes_its_undated_price() -> None:
    assert price_of("claude-opus-4-5-20251101") == price_of("claude-opus-4-5")
    assert price_of("claude-opus-4-5-2025") is None


def test_usage_sums_stay_unknown_when_any_part_is_unknown() -> None:
    known = Usage.from_block({"input_tokens": 1_000_000}, model="claude-haiku-4-5")
    unknown = Usage.from_block({"input_tokens": 5}, model="mystery")
    assert known.cost_usd == pytest.approx(1.0)
    assert (known + known).cost_usd == pytest.approx(2.0)
    assert (known + unknown).cost_usd is None
    assert sum([Usage(), known]).cost_usd == pytest.approx(1.0)  # type: ignore[union-attr]
    assert Usage().cost_usd == 0.0
    assert known == Usage(input_tokens=1_000_000)  # the cost is derived, not compared


def test_a_judge_call_is_priced_from_the_replys_usage(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(good()))
    j = AnthropicJudge(client=emulator.client(), model="claude-opus-5-5")
    j.evaluate("t", "d", CRITERIA)
    [call] = j.calls
    u = call.usage
    expected = (u.input_tokens * 4 + u.output_tokens * 20) / 1e6
    assert u.cost_usd == pytest.approx(expected) and expected > 0
    assert j.usage.to_dict()["cost_usd"] == pytest.approx(expected)


# -- GRADELOOP_PRICES ---------------------------------------------------------------------


def test_an_override_file_adds_and_replaces_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "prices.toml"
    f.write_text(
        '[models."claude-sonnet-5-5"]\ninput = 2\noutput = 10\ncache_write_5m = 2.5\n'
        "cache_write_1h = 4\ncache_read = 0.1\n\n"
        '[models."claude-opus-5-5"]\ninput = 1\noutput = 1\ncache_write_5m = 1\n'
        "cache_write_1h = 1\ncache_read = 1\nbatch_discount = 0\n"
    )
    monkeypatch.setenv("GRADELOOP_PRICES", str(f))
    assert cost_usd("claude-sonnet-5-5", {"cache_read_input_tokens": 1_000_000}) == 0.1
    assert cost_usd("claude-opus-5-5", {"output_tokens": 1_000_000}, batch=True) == 1.0
    assert price_table().sources["claude-opus-5-5"] == str(f)
    assert price_of("claude-haiku-4-5") is not None  # the rest of the shipped table stays


def test_a_json_override_works_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "prices.json"
    entry = {"input": 3, "output": 4, "cache_write_5m": 0, "cache_write_1h": 0, "cache_read": 0}
    f.write_text(json.dumps({"models": {"local": entry}}))
    monkeypatch.setenv("GRADELOOP_PRICES", str(f))
    assert cost_usd("local", {"input_tokens": 1_000_000, "output_tokens": 1_000_000}) == 7.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not = [toml", "is not valid TOML"),
        ('[models."m"]\ninput = 1\n', "output: Field required"),
        (
            '[models."m"]\ninput = -1\noutput = 1\ncache_write_5m = 1\n'
            "cache_write_1h = 1\ncache_read = 1\n",
            "input: Input should be greater than or equal to 0",
        ),
        (
            '[models."m"]\ninput = 1\noutput = 1\ncache_write_5m = 1\n'
            "cache_write_1h = 1\ncache_read = 1\ncahce_read = 2\n",
            "cahce_read: Extra inputs are not permitted",
        ),
        ("price = 1\n", "unknown top-level key 'price'"),
        ("verified = 'x'\n", "no [models"),
    ],
)
def test_a_bad_override_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    f = tmp_path / "prices.toml"
    f.write_text(text)
    monkeypatch.setenv("GRADELOOP_PRICES", str(f))
    with pytest.raises(ConfigError, match="GRADELOOP_PRICES file") as info:
        price_of("m")
    assert message in str(info.value)


def test_a_missing_override_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADELOOP_PRICES", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="cannot be read"):
        price_of("claude-opus-5-5")
    monkeypatch.delenv("GRADELOOP_PRICES")
    assert price_of("claude-opus-5-5") is not None
