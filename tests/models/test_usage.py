"""Usage figures and per-call records."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop.models import CallRecord, Usage, metered, record_call
from gradeloop.models._usage import Metered
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


def test_to_dict_has_the_four_counts_the_total_and_the_cost() -> None:
    assert Usage(1, 2, 3, 4).to_dict() == {
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_creation_input_tokens": 3,
        "cache_read_input_tokens": 4,
        "total_input": 8,
        "cost_usd": None,  # counts with no model: the price is unknown
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
    assert m.calls[0].latency_ms >= 0


def _rec(tokens: int) -> CallRecord:
    return CallRecord("evaluate", "m", "end_turn", Usage(tokens, 0), 1.0)


def test_a_meter_sees_the_calls_made_inside_its_block_only() -> None:
    m = Metered()
    m._record("generate", "m", time.perf_counter(), text_reply("ab"))  # before: not seen
    with metered() as meter:
        m._record("generate", "m", time.perf_counter(), text_reply("abcd" * 3))
        record_call(_rec(5))  # a custom model reporting its own call
    m._record("generate", "m", time.perf_counter(), text_reply("ab"))  # after: not seen
    assert meter.calls == 2
    assert meter.records[0] is m.calls[1]
    assert meter.usage == m.calls[1].usage + Usage(5, 0)


def test_meters_nest_and_the_outer_one_sees_everything() -> None:
    with metered() as outer:
        record_call(_rec(1))
        with metered() as inner:
            record_call(_rec(10))
        record_call(_rec(100))
    assert inner.usage == Usage(10, 0)
    assert outer.usage == Usage(111, 0)


def test_no_meter_open_records_nowhere_and_costs_nothing() -> None:
    record_call(_rec(1))  # must not raise, must not leak into a later meter
    with metered() as meter:
        pass
    assert meter.calls == 0 and meter.usage == Usage()


def test_each_thread_sees_its_own_calls_on_a_shared_model() -> None:
    shared = Metered()
    barrier = threading.Barrier(8)
    seen: dict[int, int] = {}

    def work(n: int) -> None:
        with metered() as meter:
            barrier.wait()  # every thread records while the others' meters are open
            for _ in range(n):
                shared._record("evaluate", "m", time.perf_counter(), text_reply("abcd"))
                time.sleep(0)
        seen[n] = meter.calls

    threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {n: n for n in range(1, 9)}
    assert len(shared.calls) == sum(range(1, 9))


def test_asyncio_tasks_and_worker_threads_attribute_to_their_own_meter() -> None:
    async def one(n: int) -> int:
        with metered() as meter:
            for _ in range(n):
                await asyncio.sleep(0)
                record_call(_rec(1))
            await asyncio.to_thread(record_call, _rec(1000))  # a sync model in a worker
        return meter.usage.input_tokens

    async def main() -> list[int]:
        return await asyncio.gather(*(one(n) for n in range(1, 6)))

    assert asyncio.run(main()) == [1000 + n for n in range(1, 6)]


@given(
    counts=st.lists(st.integers(0, 10**7), min_size=4, max_size=4),
    cost=st.one_of(st.none(), st.floats(0, 1000, allow_nan=False)),
)
def test_a_usage_comes_back_from_its_dict_with_its_cost(
    counts: list[int], cost: float | None
) -> None:
    usage = Usage(*counts, cost_usd=cost)
    back = Usage.from_dict(usage.to_dict())
    assert back == usage  # the four counts
    if usage.cost_usd is None:
        assert back.cost_usd is None  # unknown stays unknown, never $0
    else:
        assert back.cost_usd == pytest.approx(usage.cost_usd, abs=1e-8)  # never int()-ed


def test_a_usage_dict_with_junk_reads_as_zeros_and_an_unknown_cost() -> None:
    back = Usage.from_dict({"input_tokens": "12", "output_tokens": True, "cost_usd": "1.5"})
    assert back == Usage() and back.cost_usd == 0.0  # no tokens cost nothing
    assert Usage.from_dict({"input_tokens": 3, "cost_usd": None}).cost_usd is None
    assert Usage.from_dict(None) == Usage()
