"""JudgeCache and the request digest: only identical requests reuse a reply, and only
valid replies are ever stored."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, JudgeCache
from gradeloop.errors import HistoryError, JudgeError
from gradeloop.history._cache import default_cache_path
from gradeloop.models import request_digest
from gradeloop.testing import refusal, text_reply, truncated, verdict_reply
from tests.models.test_judge import CRITERIA, good
from tests.support.emulator import Emulator, http_error


@pytest.fixture
def cache(tmp_path: Path) -> Any:
    with JudgeCache(tmp_path / "cache.db") as c:
        yield c


def judge(emulator: Emulator, cache: JudgeCache, **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), cache=cache, **kw)


# -- the digest ---------------------------------------------------------------------------

BASE: dict[str, Any] = {
    "model": "m",
    "max_tokens": 100,
    "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
    "messages": [{"role": "user", "content": "task and draft"}],
}


def test_the_digest_ignores_cache_markers_and_transport_options() -> None:
    other = {**BASE, "system": [{"type": "text", "text": "s"}], "extra_headers": {"x": "1"}}
    other["timeout"] = 30
    assert request_digest(other) == request_digest(BASE)


@pytest.mark.parametrize(
    "change",
    [
        {"model": "m2"},
        {"max_tokens": 101},
        {"system": [{"type": "text", "text": "s2"}]},
        {"messages": [{"role": "user", "content": "task and draft!"}]},
        {"output_config": {"format": {"type": "json_schema", "schema": {}}}},
        {"extra_body": {"temperature": 0.5}},
        {"extra_body": {"thinking": {"type": "enabled", "budget_tokens": 1024}}},
    ],
)
def test_everything_that_shapes_the_reply_changes_the_digest(change: dict[str, Any]) -> None:
    assert request_digest({**BASE, **change}) != request_digest(BASE)


def test_samples_are_different_keys_and_sample_zero_is_the_plain_request() -> None:
    keys = {request_digest(BASE, sample=i) for i in range(4)}
    assert len(keys) == 4 and request_digest(BASE, sample=0) == request_digest(BASE)
    with pytest.raises(ValueError, match="sample"):
        request_digest(BASE, sample=-1)


def test_a_criterion_named_cache_control_stays_in_the_schema() -> None:
    schema = {"properties": {"cache_control": {"type": "boolean"}}}
    with_key = {**BASE, "output_config": {"format": {"schema": schema}}}
    without = {**BASE, "output_config": {"format": {"schema": {"properties": {}}}}}
    assert request_digest(with_key) != request_digest(without)


# -- through the judge ------------------------------------------------------------------


def test_an_identical_request_is_answered_from_the_cache(
    emulator: Emulator, cache: JudgeCache
) -> None:
    emulator.enqueue(verdict_reply(good()))
    j = judge(emulator, cache)
    first = j.evaluate("task", "draft", CRITERIA)
    second = j.evaluate("task", "draft", CRITERIA)
    assert first == second and len(emulator.requests) == 1
    fresh, reused = j.calls
    assert (fresh.cached, reused.cached) == (False, True)
    assert reused.usage.total_input == 0 and reused.usage.output_tokens == 0
    assert fresh.usage.output_tokens > 0
    assert (cache.hits, cache.misses) == (1, 1)


def test_another_judge_and_another_process_reuse_the_file(
    emulator: Emulator, tmp_path: Path
) -> None:
    emulator.enqueue(verdict_reply(good()))
    with JudgeCache(tmp_path / "c.db") as one:
        judge(emulator, one).evaluate("t", "d", CRITERIA)
    with JudgeCache(tmp_path / "c.db") as two:
        judge(emulator, two).evaluate("t", "d", CRITERIA)
        assert len(emulator.requests) == 1 and two.hits == 1


@pytest.mark.parametrize(
    ("kw", "task", "draft"),
    [
        ({}, "t", "another draft"),
        ({}, "another task", "d"),
        ({"model": "claude-sonnet-5-5"}, "t", "d"),
        ({"max_tokens": 99}, "t", "d"),
        ({"extra_body": {"temperature": 0}}, "t", "d"),
        ({"structured": "json"}, "t", "d"),
    ],
)
def test_any_difference_in_the_request_is_a_miss(
    emulator: Emulator, cache: JudgeCache, kw: dict[str, Any], task: str, draft: str
) -> None:
    emulator.responder = lambda body: verdict_reply(good())
    judge(emulator, cache).evaluate("t", "d", CRITERIA)
    judge(emulator, cache, **kw).evaluate(task, draft, CRITERIA)
    assert len(emulator.requests) == 2


def test_the_prompt_cache_ttl_is_not_part_of_the_key(emulator: Emulator, cache: JudgeCache) -> None:
    emulator.enqueue(verdict_reply(good()))
    judge(emulator, cache).evaluate("t", "d", CRITERIA)
    judge(emulator, cache, cache_ttl="1h").evaluate("t", "d", CRITERIA)
    assert len(emulator.requests) == 1


@pytest.mark.parametrize(
    "bad",
    [
        refusal(),
        truncated('{"reasoning": "cut'),
        verdict_reply(good(criteria_met={})),
        http_error(400, "bad"),
    ],
    ids=["refusal", "truncated", "invalid", "api_error"],
)
def test_failures_are_never_cached(emulator: Emulator, cache: JudgeCache, bad: Any) -> None:
    emulator.enqueue(bad, verdict_reply(good()))
    j = judge(emulator, cache, structured="native")
    with pytest.raises(JudgeError):
        j.evaluate("t", "d", CRITERIA)
    assert len(cache) == 0
    j.evaluate("t", "d", CRITERIA)  # asked again, not answered from the cache
    assert len(emulator.requests) == 2 and len(cache) == 1


def test_a_repaired_reply_is_cached_under_the_repair_request_only(
    emulator: Emulator, cache: JudgeCache
) -> None:
    emulator.enqueue(text_reply("not json"), verdict_reply(good()), text_reply("still not"))
    j = judge(emulator, cache, structured="json")
    j.evaluate("t", "d", CRITERIA)
    assert len(cache) == 1  # the invalid first reply was not stored
    # the same first request is sent again; its new reply differs, so the repair differs too
    with pytest.raises(JudgeError):
        j.evaluate("t", "d", CRITERIA)


def test_an_entry_that_no_longer_validates_is_dropped_and_asked_again(
    emulator: Emulator, cache: JudgeCache
) -> None:
    emulator.enqueue(verdict_reply(good()), verdict_reply(good(passed=False, issues=["x"])))
    j = judge(emulator, cache)
    j.evaluate("t", "d", CRITERIA)
    [key] = [r[0] for r in sqlite3.connect(cache.path).execute("SELECT key FROM replies")]
    cache.put(key, '{"reasoning": "r", "criteria_met": {}, "passed": true}', model="m")
    v = j.evaluate("t", "d", CRITERIA)
    assert v.passed is False and len(emulator.requests) == 2
    assert not any(c.cached for c in j.calls)


def test_async_evaluations_share_the_cache(emulator: Emulator, cache: JudgeCache) -> None:
    import asyncio

    emulator.enqueue(verdict_reply(good()))
    j = judge(emulator, cache)
    j.evaluate("t", "d", CRITERIA)

    async def go() -> Any:
        try:
            return await j.aevaluate("t", "d", CRITERIA)
        finally:
            await j.aclose()

    assert asyncio.run(go()).passed and len(emulator.requests) == 1
    assert j.calls[-1].cached


# -- the file -----------------------------------------------------------------------------


def test_ttl_makes_old_entries_misses(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.db", ttl=60) as c:
        c.put("k", "v", model="m")
        assert c.get("k") == "v"
        with sqlite3.connect(c.path) as raw:
            raw.execute("UPDATE replies SET created_at = created_at - 61")
        assert c.get("k") is None
    with pytest.raises(ValueError, match="ttl must be positive"):
        JudgeCache(tmp_path / "c.db", ttl=0)


def test_stats_and_clear(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.db") as c:
        c.put("a", "one", model="m1")
        c.put("b", "twö", model="m2")
        c.put("c", "three", model="m2")
        c.get("a")
        c.get("a")
        c.get("zzz")
        s = c.stats()
        assert (s.entries, s.hits, s.session_hits, s.session_misses) == (3, 2, 2, 1)
        assert s.by_model == {"m1": 1, "m2": 2}
        assert s.text_bytes == len("one") + len("twö".encode()) + len("three")
        assert s.file_bytes > 0 and s.oldest is not None and s.oldest <= s.newest  # type: ignore[operator]
        with sqlite3.connect(c.path) as raw:
            raw.execute("UPDATE replies SET created_at = created_at - 100 WHERE key = 'a'")
        assert c.clear(older_than=50) == 1 and len(c) == 2
        assert c.clear() == 2 and len(c) == 0


def test_the_default_path_is_in_gradeloop_home(gradeloop_home: Path) -> None:
    assert default_cache_path() == gradeloop_home / "cache.db"
    with JudgeCache() as c:
        assert c.path == gradeloop_home / "cache.db" and c.path.exists()
    assert (gradeloop_home / "cache.db").stat().st_mode & 0o077 == 0


def test_threads_share_one_cache(tmp_path: Path) -> None:
    c = JudgeCache(tmp_path / "c.db")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(30):
                c.put(f"{n}-{i}", "x" * i, model="m")
                assert c.get(f"{n}-{i}") == "x" * i
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(c) == 240
    c.close()
    c.close()
    with pytest.raises(HistoryError, match="closed"):
        c.get("0-0")


def test_a_file_that_is_not_a_cache_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "cache.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(HistoryError, match="not a gradeloop judge cache"):
        JudgeCache(bad)


def test_entries_outlive_the_object_that_stored_them(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.db") as c:
        c.put("k", "v", model="m")
    with JudgeCache(tmp_path / "c.db") as again:
        assert again.get("k") == "v"
