"""Usage figures and per-call records."""

from __future__ import annotations

import time
from types import SimpleNamespace

from gradeloop.models._usage import CallRecord, Metered, Usage
from gradeloop.testing import text_reply


def test_total_input_adds_the_three_input_figures() -> None:
    u = Usage(
        input_tokens=10,
        output_tokens=5,
        cache_creation_input_tokens=100,
        cache_read_input_tokens=1000,
    )
    assert u.total_input == 1110


def test_usages_add_field_by_field_and_sum_from_zero() -> None:
    a = Usage(1, 2, 3, 4)
    b = Usage(10, 20, 30, 40)
    assert a + b == Usage(11, 22, 33, 44)
    assert sum([a, b]) == Usage(11, 22, 33, 44)


def test_to_dict_has_the_four_counts_and_the_total() -> None:
    assert Usage(1, 2, 3, 4).to_dict() == {
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_creation_input_tokens": 3,
        "cache_read_input_tokens": 4,
        "total_input": 8,
    }


def test_usage_is_read_from_a_real_message() -> None:
    u = Usage.of(text_reply("x" * 40, input_tokens=12))
    assert (u.input_tokens, u.output_tokens) == (12, 10)


def test_null_cache_figures_and_missing_usage_read_as_zero() -> None:
    # Servers without caching send null; fakes may send no usage at all.
    raw = SimpleNamespace(
        input_tokens=3,
        output_tokens=4,
        cache_creation_input_tokens=None,
        cache_read_input_tokens=None,
    )
    assert Usage.of(SimpleNamespace(usage=raw)) == Usage(3, 4, 0, 0)
    assert Usage.of(SimpleNamespace()) == Usage()
    assert Usage.of(SimpleNamespace(usage={"input_tokens": 7})) == Usage(7, 0, 0, 0)


def test_call_record_to_dict_nests_usage() -> None:
    rec = CallRecord("evaluate", "m", "end_turn", Usage(1, 1, 0, 0), 2.5)
    out = rec.to_dict()
    assert out["kind"] == "evaluate" and out["ok"] is True and out["error"] is None
    assert out["usage"]["total_input"] == 1


def test_metered_records_success_and_failure_and_sums() -> None:
    m = Metered()
    m._record("generate", "fallback-model", time.perf_counter(), text_reply("abcd" * 3))
    m._record("generate", "fallback-model", time.perf_counter(), error="HTTP 529 Overloaded")
    assert [c.ok for c in m.calls] == [True, False]
    assert m.calls[0].model == "scripted-model"  # the reply's own model wins
    assert m.calls[1].model == "fallback-model" and m.calls[1].usage == Usage()
    assert m.calls[1].error == "HTTP 529 Overloaded"
    assert m.usage == m.calls[0].usage
    assert m.usage_since(1) == Usage()
    assert m.calls[0].latency_ms >= 0
