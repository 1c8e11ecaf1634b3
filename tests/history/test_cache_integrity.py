"""Stored replies are bound to their request: an edited verdict-cache row or cassette
entry is never used (the cache asks again, a replay-only cassette fails); a damaged
cache file is set aside with one warning, grading goes on, and `cache clear` works."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, JudgeCache, Rubric, grade
from gradeloop.errors import CacheWarning, HistoryError, JudgeError
from gradeloop.testing import Cassette, CassetteMiss, assert_graded, verdict_reply
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator
from tests.testing.test_assert_graded import ANSWER, RUBRIC

RULES = Rubric.from_dict({"criteria": [{"key": "tone", "description": "Polite."}]})


def verdict(met: bool) -> Any:
    return verdict_reply(
        {"reasoning": "r", "criteria_met": {"tone": met}, "passed": met,
         "issues": [] if met else ["tone: rude"]}
    )  # fmt: skip


def judge_on(emulator: Emulator, cache: Any) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), model="claude-j", cache=cache)


def edit_rows(path: Path, sql: str, *args: Any) -> None:
    with sqlite3.connect(path) as raw:
        raw.execute(sql, args)


# -- the verdict cache: bound to its request ---------------------------------------------


def test_an_edited_row_never_turns_a_rejected_draft_accepted(
    emulator: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "cache.db"
    emulator.enqueue(verdict(False), verdict(False))
    with JudgeCache(path) as cache:
        assert grade("draft", RULES, task="t", judge=judge_on(emulator, cache)).accepted is False
    passing = json.dumps({"reasoning": "r", "criteria_met": {"tone": True}, "passed": True,
                          "issues": []})  # fmt: skip
    edit_rows(path, "UPDATE replies SET text = ?", passing)
    with JudgeCache(path) as cache:
        again = grade("draft", RULES, task="t", judge=judge_on(emulator, cache))
        assert again.accepted is False and cache.rejected == 1
        assert len(emulator.requests) == 2  # asked again, not answered by the edited row
        assert cache.stats().session_rejected == 1


def test_an_untouched_row_is_reused(emulator: Emulator, tmp_path: Path) -> None:
    emulator.enqueue(verdict(False))
    with JudgeCache(tmp_path / "cache.db") as cache:
        grade("draft", RULES, task="t", judge=judge_on(emulator, cache))
    with JudgeCache(tmp_path / "cache.db") as cache:
        assert grade("draft", RULES, task="t", judge=judge_on(emulator, cache)).accepted is False
        assert cache.hits == 1 and cache.rejected == 0 and len(emulator.requests) == 1


def test_a_reply_moved_to_another_request_is_rejected(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.db") as cache:
        cache.put("a", "reply for a", model="m")
        cache.put("b", "reply for b", model="m")
    with sqlite3.connect(tmp_path / "c.db") as raw:
        [(text, mac)] = raw.execute("SELECT text, mac FROM replies WHERE key = 'a'").fetchall()
        raw.execute("UPDATE replies SET text = ?, mac = ? WHERE key = 'b'", (text, mac))
    with JudgeCache(tmp_path / "c.db") as cache:
        assert cache.get("a") == "reply for a" and cache.get("b") is None
        assert cache.rejected == 1 and len(cache) == 1  # the bad entry is gone


def test_rows_written_under_another_homes_secret_are_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADELOOP_CACHE_SECRET", "the ci secret of branch one")
    with JudgeCache(tmp_path / "c.db") as cache:
        cache.put("k", "text", model="m")
        assert cache.get("k") == "text"
    monkeypatch.setenv("GRADELOOP_CACHE_SECRET", "another secret altogether")
    with JudgeCache(tmp_path / "c.db") as cache:
        assert cache.get("k") is None and cache.rejected == 1


def test_the_homes_secret_is_made_once_and_private(gradeloop_home: Path, tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "one.db") as one:
        one.put("k", "text", model="m")
    secret = gradeloop_home / "cache.secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(secret.read_bytes()) == 32
    with JudgeCache(tmp_path / "one.db") as again:
        assert again.get("k") == "text"  # the same secret, read back


def test_a_version_1_cache_is_upgraded_and_its_unbound_rows_are_misses(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as raw:
        raw.execute(
            "CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT "
            "NULL, created_at REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0, last_hit_at REAL)"
        )
        raw.execute("INSERT INTO replies VALUES ('k', 'm', 'old text', 0, 0, NULL)")
        raw.execute("PRAGMA user_version = 1")
    with JudgeCache(path) as cache:
        assert cache.get("k") is None and cache.rejected == 1
        cache.put("k", "new text", model="m")
        assert cache.get("k") == "new text"


# -- a damaged cache file ---------------------------------------------------------------


def damaged_cache(path: Path) -> None:
    """A cache whose pages past the first few are overwritten: it opens, then fails."""
    with JudgeCache(path) as cache:
        for i in range(300):
            cache.put(f"k{i}", "x" * 2000, model="m")
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with path.open("r+b") as f:
        f.seek(4096 * 2)
        f.write(b"\xff" * 4096 * 3)


def test_a_damaged_cache_is_set_aside_with_one_warning_and_a_new_one_works(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.db"
    damaged_cache(path)
    cache = JudgeCache(path)
    with pytest.warns(CacheWarning, match=f"{path} is damaged") as seen:
        assert cache.get("k5") is None
    [warning] = seen
    [aside] = tmp_path.glob("cache.db.damaged-*[0-9]")
    assert str(aside) in str(warning.message)
    cache.put("k", "text", model="m")
    assert cache.get("k") == "text" and len(cache) == 1
    cache.close()


def test_judging_goes_on_past_a_damaged_cache(emulator: Emulator, gradeloop_home: Path) -> None:
    damaged_cache(gradeloop_home / "cache.db")
    emulator.enqueue(verdict(True))
    with JudgeCache() as cache, pytest.warns(CacheWarning):
        assert grade("draft", RULES, task="t", judge=judge_on(emulator, cache)).accepted


def test_cache_stats_and_clear_work_on_a_damaged_cache(gradeloop_home: Path) -> None:
    damaged_cache(gradeloop_home / "cache.db")
    ran = cli("cache", "stats")
    assert ran.code == 0 and "entries: 0" in ran.out
    [line] = ran.err.splitlines()
    assert line.startswith("gradeloop: warning: the judge cache") and "set aside as" in line
    damaged_cache(gradeloop_home / "cache.db")
    ran = cli("cache", "clear")
    assert ran.code == 0 and "deleted 0 cached entries" in ran.out
    assert "set aside" in ran.err
    assert len(list(gradeloop_home.glob("cache.db.damaged-*[0-9]"))) == 2
    ran = cli("cache", "clear")
    assert ran.code == 0 and ran.err == ""


def test_a_file_that_is_no_database_is_named_and_never_moved(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a cache\n" * 200)
    ran = cli("cache", "--file", str(notes), "clear")
    assert ran.code == 2 and "is not a gradeloop judge cache" in ran.err
    assert notes.read_text().startswith("my notes") and os.listdir(tmp_path) == ["notes.txt"]
    with pytest.raises(HistoryError, match="not a gradeloop judge cache"):
        JudgeCache(notes)


# -- cassettes --------------------------------------------------------------------------


def record(emulator: Emulator, path: Path) -> None:
    emulator.enqueue(verdict_reply(ANSWER))
    cassette = Cassette.load(path, "new")
    assert_graded("Hello!", RUBRIC, task="greet", judge=judge_on(emulator, cassette))
    cassette.save()


def tamper(path: Path) -> None:
    data = json.loads(path.read_text())
    [entry] = data["requests"].values()
    entry["reply"] = entry["reply"].replace("warm", "cold")
    assert "cold" in entry["reply"]
    path.write_text(json.dumps(data))


def test_an_edited_cassette_entry_fails_replay_only(emulator: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(emulator, path)
    [entry] = json.loads(path.read_text())["requests"].values()
    assert entry["digest"].startswith("sha256:")
    replay = Cassette.load(path, "none")
    assert assert_graded("Hello!", RUBRIC, task="greet", judge=judge_on(emulator, replay))
    tamper(path)
    replay = Cassette.load(path, "none")
    with pytest.raises((CassetteMiss, JudgeError), match="does not match its digest"):
        assert_graded("Hello!", RUBRIC, task="greet", judge=judge_on(emulator, replay))
    assert len(emulator.bodies) == 1  # nothing was sent


def test_an_edited_cassette_entry_is_asked_again_in_new_mode(
    emulator: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "c.json"
    record(emulator, path)
    tamper(path)
    emulator.enqueue(verdict_reply(ANSWER))
    again = Cassette.load(path, "new")
    assert_graded("Hello!", RUBRIC, task="greet", judge=judge_on(emulator, again))
    assert len(emulator.bodies) == 2 and again.save() == 1
    assert Cassette.load(path, "none").get(next(iter(again.entries))) is not None
