"""The loop history store: round trips, crash safety, concurrency, migrations, secrets."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from gradeloop import HistoryStore, get_optimization_history
from gradeloop.errors import HistoryError, LoopNotFoundError
from gradeloop.history import LoopSummary
from gradeloop.history import _sql as _history_sql
from gradeloop.history._paths import default_history_path
from gradeloop.history._scrub import REDACTED, looks_secret, scrub_text
from gradeloop.history._sql import retry_locked
from gradeloop.history._stats import QUALITY_BASIS

RUBRIC = {
    "criteria": [
        {"key": "clarity", "description": "Clear.", "weight": 0.3},
        {"key": "persuasiveness", "description": "Persuades.", "weight": 0.4},
        {"key": "technical_accuracy", "description": "Accurate.", "weight": 0.3},
    ]
}
CONFIG = {"max_rounds": 3, "models": {"generator": "gen-model"}, "return_policy": "best"}
TASK = "Write a product description for a wireless headphone"

# Seed 003's few-shot example: 7.5 and not passed, then 8.8 and passed.
EVAL_1 = {
    "output_id": "out-1",
    "criteria": [
        {"name": "clarity", "weight": 0.3, "score": 8, "passed": True},
        {
            "name": "persuasiveness",
            "weight": 0.4,
            "score": 6,
            "passed": False,
            "feedback": "Add more emotional appeal",
        },
        {"name": "technical_accuracy", "weight": 0.3, "score": 9, "passed": True},
    ],
    "overall_score": 7.5,
    "passed": False,
}
EVAL_2 = {
    "output_id": "out-2",
    "criteria": [
        {"name": "clarity", "weight": 0.3, "score": 9, "passed": True},
        {"name": "persuasiveness", "weight": 0.4, "score": 8, "passed": True},
        {"name": "technical_accuracy", "weight": 0.3, "score": 9.5, "passed": True},
    ],
    "overall_score": 8.8,
    "passed": True,
    "improvement_from_previous": 1.3,
}
USAGE = {
    "input_tokens": 120,
    "output_tokens": 80,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


def make_record(
    iteration: int,
    score: float | None = None,
    *,
    passed: bool = False,
    evaluation: dict[str, Any] | None = None,
    judge_error: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An iteration record as the loop writes it. ``score=None`` and no evaluation
    means the judge failed (unless ``judge_error`` says otherwise)."""
    output_id = extra.pop("output_id", f"out-{iteration}")
    if evaluation is None and score is not None:
        evaluation = {
            "output_id": output_id,
            "criteria": [],
            "overall_score": score,
            "passed": passed,
        }
    if evaluation is None and judge_error is None:
        judge_error = "judge refused"
    record = {
        "iteration": iteration,
        "output_id": output_id,
        "content": f"draft {iteration}",
        "generation_time_ms": 12.5,
        "evaluation": evaluation,
        "judge_error": judge_error,
        "reused_from": None,
        "feedback": None,
        "evaluation_time_ms": 3.0 if evaluation is not None else None,
        "usage": dict(USAGE),
        "failed_keys": [],
    }
    record.update(extra)
    return record


def seed_loop(store: HistoryStore, loop_id: str = "loop-seed") -> None:
    store.start_loop(loop_id, task=TASK, rubric=RUBRIC, config=CONFIG, started_at=1000.0)
    store.add_iteration(
        loop_id,
        make_record(
            1,
            evaluation=EVAL_1,
            feedback="- persuasiveness: Add more emotional appeal",
            failed_keys=["persuasiveness"],
        ),
    )
    store.add_iteration(loop_id, make_record(2, evaluation=EVAL_2))
    store.finish_loop(
        loop_id,
        final_output_id="out-2",
        passed=True,
        stop_reason="passed",
        total_time_ms=1234.5,
        final_score=8.8,
    )


SEED_HISTORY = {
    "loop_id": "loop-seed",
    "iterations": [
        {
            "output_id": "out-1",
            "content": "draft 1",
            "evaluation": {"overall_score": 7.5, "passed": False},
            "feedback": "- persuasiveness: Add more emotional appeal",
        },
        {
            "output_id": "out-2",
            "content": "draft 2",
            "evaluation": {"overall_score": 8.8, "passed": True},
        },
    ],
    "final_output_id": "out-2",
    "total_time_ms": 1234.5,
    "improvement_trajectory": [7.5, 8.8],
    "task": TASK,
    "status": "finished",
    "stop_reason": "passed",
    "passed": True,
    "final_score": 8.8,
    "started_at": 1000.0,
}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "history.db"


@pytest.fixture
def store(db: Path) -> Any:
    with HistoryStore(db) as opened:
        yield opened


# -- round trip ----------------------------------------------------------------------


def test_seed_example_round_trips_in_the_seed_shape(store: HistoryStore) -> None:
    seed_loop(store)
    assert store.get("loop-seed") == SEED_HISTORY


def test_a_fresh_store_on_the_same_file_reads_everything_back(db: Path) -> None:
    with HistoryStore(db) as first:
        seed_loop(first)
        written = first.iterations("loop-seed")
    with HistoryStore(db) as second:
        assert second.get("loop-seed") == SEED_HISTORY
        assert second.iterations("loop-seed") == written
        assert written[1]["evaluation"] == EVAL_2
        assert written[0]["failed_keys"] == ["persuasiveness"]


def test_full_records_keep_unknown_keys(store: HistoryStore) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 5.0, model="gen-model", extra={"a": [1, 2]}))
    [stored] = store.iterations("x")
    assert stored["model"] == "gen-model"
    assert stored["extra"] == {"a": [1, 2]}
    assert stored["usage"] == USAGE


def test_each_write_is_committed_before_returning(store: HistoryStore, db: Path) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 5.0))
    # Another connection sees the row while the store is still open mid-loop.
    with sqlite3.connect(db) as other:
        count = other.execute("SELECT count(*) FROM iterations").fetchone()[0]
    other.close()
    assert count == 1


def test_judge_failure_is_null_score_with_error(store: HistoryStore) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 6.0))
    store.add_iteration("x", make_record(2, judge_error="judge refused: declined"))
    history = store.get("x")
    assert history["iterations"][0]["evaluation"] == {"overall_score": 6.0, "passed": False}
    assert history["iterations"][1]["evaluation"] == {
        "overall_score": None,
        "passed": False,
        "error": "judge refused: declined",
    }
    assert history["improvement_trajectory"] == [6.0]


def test_a_failed_judgement_never_reads_as_passed(store: HistoryStore) -> None:
    # A stale passing evaluation riding along with a judge error must not count.
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 9.0, passed=True, judge_error="invalid reply"))
    store.add_iteration("x", make_record(2, 9.0, passed=True))
    first, second = store.get("x")["iterations"]
    assert first["evaluation"]["passed"] is False
    assert first["evaluation"]["overall_score"] is None
    assert second["evaluation"] == {"overall_score": 9.0, "passed": True}


# -- interrupted loops -----------------------------------------------------------------

KILLED_WRITER = """
import os, signal, sys
from gradeloop.history._store import HistoryStore
store = HistoryStore(sys.argv[1])
store.start_loop("killed", task="t", rubric={"criteria": []}, config={})
for number, score in ((1, 7.0), (2, 6.0)):
    store.add_iteration("killed", {
        "iteration": number, "output_id": f"out-{number}", "content": f"draft {number}",
        "generation_time_ms": 1.0, "usage": {}, "judge_error": None, "failed_keys": [],
        "evaluation": {"output_id": f"out-{number}", "criteria": [],
                       "overall_score": score, "passed": False}})
if sys.argv[2] == "sigkill":
    os.kill(os.getpid(), signal.SIGKILL)
os._exit(1)
"""

KILL_METHODS = ["exit", *(["sigkill"] if hasattr(signal, "SIGKILL") else [])]


@pytest.mark.parametrize("method", KILL_METHODS)
def test_a_killed_writer_leaves_its_iterations_as_interrupted(db: Path, method: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(db), method],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0, proc.stderr
    assert "Traceback" not in proc.stderr
    with HistoryStore(db) as store:
        history = store.get("killed")
        [summary] = store.list_loops()
    assert [it["output_id"] for it in history["iterations"]] == ["out-1", "out-2"]
    assert history["status"] == "interrupted"
    assert history["final_output_id"] == "out-1"  # the best judged so far
    assert history["stop_reason"] is None and history["passed"] is False
    assert history["total_time_ms"] >= 0
    assert (summary.status, summary.rounds, summary.stop_reason) == ("interrupted", 2, None)


def test_an_unfinished_loop_of_a_live_writer_is_running(store: HistoryStore) -> None:
    store.start_loop("live", task="t", rubric=RUBRIC, config={}, started_at=100.0)
    store.add_iteration("live", make_record(1, 7.0))
    store.add_iteration("live", make_record(2, 7.0))
    history = store.get("live")
    assert history["status"] == "running"
    assert history["final_output_id"] == "out-2"  # ties go to the latest
    assert history["total_time_ms"] > 0  # measured up to the last iteration


def test_an_unfinished_loop_without_judged_drafts_points_at_the_last(
    store: HistoryStore,
) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    assert store.get("x")["final_output_id"] is None
    store.add_iteration("x", make_record(1, judge_error="boom"))
    store.add_iteration("x", make_record(2, judge_error="boom"))
    assert store.get("x")["final_output_id"] == "out-2"


def test_finish_marks_the_loop_finished(store: HistoryStore) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 7.0))
    assert store.get("x")["status"] == "running"
    store.finish_loop(
        "x",
        final_output_id="out-1",
        passed=False,
        stop_reason="max_rounds",
        total_time_ms=5.0,
        final_score=7.0,
    )
    history = store.get("x")
    assert (history["status"], history["stop_reason"], history["total_time_ms"]) == (
        "finished",
        "max_rounds",
        5.0,
    )


# -- concurrency ---------------------------------------------------------------------


def _write_many(path: str, worker: int, count: int, barrier: Any) -> None:
    barrier.wait()  # every process opens the brand-new file at the same moment
    with HistoryStore(path) as store:
        loop_id = f"worker-{worker}"
        store.start_loop(loop_id, task=f"task {worker}", rubric=RUBRIC, config={})
        for number in range(1, count + 1):
            store.add_iteration(loop_id, make_record(number, float(number % 10)))
        store.finish_loop(
            loop_id,
            final_output_id=f"out-{count}",
            passed=False,
            stop_reason="max_rounds",
            total_time_ms=1.0,
            final_score=None,
        )


def test_concurrent_processes_lose_nothing(db: Path) -> None:
    workers, count = 4, 25
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers)
    procs = [
        ctx.Process(target=_write_many, args=(str(db), w, count, barrier)) for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0] * workers
    with HistoryStore(db) as store:
        assert len(store.list_loops(limit=100)) == workers
        for w in range(workers):
            numbers = [r["iteration"] for r in store.iterations(f"worker-{w}")]
            assert numbers == list(range(1, count + 1))


def test_threads_may_share_one_store(store: HistoryStore) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    errors: list[BaseException] = []

    def write(base: int) -> None:
        try:
            for number in range(base + 1, base + 26):
                store.add_iteration("x", make_record(number, 5.0))
        except BaseException as exc:  # surfaced below; a thread cannot fail the test
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(25 * t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [r["iteration"] for r in store.iterations("x")] == list(range(1, 101))


def test_a_store_refuses_use_from_a_forked_child(
    store: HistoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})  # passes in its own process
    monkeypatch.setattr(os, "getpid", lambda: -12345)
    with pytest.raises(HistoryError, match="child process"):
        store.add_iteration("x", make_record(1, 5.0))


def _flaky(failures: int, message: str, calls: list[int]) -> Any:
    def action() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise sqlite3.OperationalError(message)
        return "ok"

    return action


def test_opening_retries_a_transient_lock() -> None:
    calls: list[int] = []
    assert retry_locked(_flaky(2, "database is locked", calls), timeout=30) == "ok"
    assert len(calls) == 3


def test_opening_does_not_retry_other_errors() -> None:
    calls: list[int] = []
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        retry_locked(_flaky(2, "no such table: x", calls), timeout=30)
    assert len(calls) == 1


def test_opening_gives_up_on_a_lock_at_the_deadline() -> None:
    calls: list[int] = []
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retry_locked(_flaky(10**9, "database is locked", calls), timeout=0)
    assert len(calls) == 1


# -- migrations and bad files ------------------------------------------------------------


def _user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_an_empty_file_is_migrated_to_the_current_schema(db: Path) -> None:
    db.touch()
    with HistoryStore(db) as store:
        assert store.list_loops() == []
        mode = store._connection().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    assert _user_version(db) == _history_sql.SCHEMA_VERSION >= 1


def test_reopening_is_idempotent_and_keeps_data(db: Path) -> None:
    with HistoryStore(db) as store:
        seed_loop(store)
    with HistoryStore(db), HistoryStore(db) as again:
        assert again.get("loop-seed") == SEED_HISTORY
    assert _user_version(db) == _history_sql.SCHEMA_VERSION


def test_a_new_migration_is_applied_on_open(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with HistoryStore(db) as store:
        seed_loop(store)
    extra = ("CREATE TABLE notes (loop_id TEXT, note TEXT)",)
    monkeypatch.setattr(_history_sql, "MIGRATIONS", (*_history_sql.MIGRATIONS, extra))
    monkeypatch.setattr(_history_sql, "SCHEMA_VERSION", _history_sql.SCHEMA_VERSION + 1)
    with HistoryStore(db) as store:
        store._connection().execute("SELECT * FROM notes").fetchall()
        assert store.get("loop-seed") == SEED_HISTORY
    assert _user_version(db) == _history_sql.SCHEMA_VERSION


def test_a_failing_migration_is_rolled_back_whole(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with HistoryStore(db):
        pass
    before = _user_version(db)
    broken = ("CREATE TABLE notes (x)", "THIS IS NOT SQL")
    monkeypatch.setattr(_history_sql, "MIGRATIONS", (*_history_sql.MIGRATIONS, broken))
    monkeypatch.setattr(_history_sql, "SCHEMA_VERSION", _history_sql.SCHEMA_VERSION + 1)
    with pytest.raises(HistoryError, match=re.escape(str(db))):
        HistoryStore(db)
    assert _user_version(db) == before
    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert "notes" not in tables


def test_a_database_from_a_newer_gradeloop_is_refused(db: Path) -> None:
    with HistoryStore(db):
        pass
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {_history_sql.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(HistoryError, match="newer gradeloop") as info:
        HistoryStore(db)
    assert str(db) in str(info.value)


def test_a_database_at_the_current_version_opens(db: Path) -> None:
    with HistoryStore(db):
        pass
    with HistoryStore(db) as store:
        assert store.latest_loop_id() is None


def test_a_file_that_is_not_sqlite_is_refused_by_path(db: Path) -> None:
    db.write_text("this is a text file, not a database\n" * 50)
    with pytest.raises(HistoryError, match="not a SQLite database") as info:
        HistoryStore(db)
    assert str(db) in str(info.value)


def test_a_directory_path_is_refused_by_path(tmp_path: Path) -> None:
    with pytest.raises(HistoryError) as info:
        HistoryStore(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_the_default_store_creates_its_home_on_demand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "new" / "home"
    monkeypatch.setenv("GRADELOOP_HOME", str(home))
    assert not home.exists()
    with HistoryStore() as store:
        assert store.path == default_history_path() == home / "history.db"
    assert (home / "history.db").is_file()


def test_the_database_file_is_private(db: Path) -> None:
    with HistoryStore(db):
        pass
    assert db.is_file()
    if os.name == "posix":  # Windows has no group/other permission bits to check
        assert db.stat().st_mode & 0o077 == 0


def test_a_closed_store_refuses_use(db: Path) -> None:
    store = HistoryStore(db)
    assert store.latest_loop_id() is None  # passes while open
    store.close()
    store.close()  # twice is harmless
    with pytest.raises(HistoryError, match="closed"):
        store.latest_loop_id()


def test_an_in_memory_store_works() -> None:
    with HistoryStore(":memory:") as store:
        seed_loop(store)
        assert store.get("loop-seed") == SEED_HISTORY


# -- secrets -----------------------------------------------------------------------------

ANTHROPIC_KEY = "sk-ant-api03-abcDEF123_456-xyz"
SECRETS = [
    ANTHROPIC_KEY,
    "hunter2",
    "tok-999",
    "Bearer zzz",
    "pw-in-url",
    "opt-token-1",
    "aws-secret",
    "xk-apikey",
]


def _secret_config() -> dict[str, Any]:
    return {
        "max_rounds": 3,
        "max_tokens": 4096,
        "return_policy": "best",
        "api_key": ANTHROPIC_KEY,
        "models": {"generator": "gen-model", "judge": "judge-model"},
        "client": {
            "base_url": "https://alice:pw-in-url@llm.example.com/v1",
            "default_headers": {
                "Authorization": "Bearer zzz",
                "X-Api-Key": "xk-apikey",
                "User-Agent": "gradeloop",
            },
            "auth_token": "tok-999",
        },
        "accounts": [{"name": "ci", "Password": "hunter2", "AWS_SECRET_ACCESS_KEY": "aws-secret"}],
        "note": f"key was {ANTHROPIC_KEY}",
    }


def _secret_rubric() -> dict[str, Any]:
    return {
        "criteria": [
            {"key": "secret_sauce", "description": "Names the secret sauce."},
            {
                "key": "fetch",
                "description": "Fetches.",
                "checker": "http_ok",
                "options": {"token": "opt-token-1", "url": "https://example.com/health"},
            },
        ]
    }


def _raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_no_secret_reaches_the_database_file(db: Path) -> None:
    with HistoryStore(db) as store:
        store.start_loop(
            "x",
            task=f"use {ANTHROPIC_KEY} to call the API",
            rubric=_secret_rubric(),
            config=_secret_config(),
        )
        store.add_iteration(
            "x",
            make_record(
                1,
                7.0,
                content=f"The key is {ANTHROPIC_KEY}.",
                feedback="see https://bob:hunter2@host/x",
            ),
        )
        raw_while_open = _raw_bytes(db)
        settings = store.loop_settings("x")
        history = store.get("x")
        record = store.iterations("x")[0]
    for secret in SECRETS:
        assert secret.encode() not in raw_while_open
        assert secret.encode() not in _raw_bytes(db)
        assert secret not in repr((settings, history, record))
    assert REDACTED in history["task"]
    assert record["content"] == f"The key is {REDACTED}."
    assert record["feedback"] == "see https://host/x"


def test_scrubbing_keeps_what_is_not_secret(store: HistoryStore) -> None:
    store.start_loop("x", task="plain task", rubric=_secret_rubric(), config=_secret_config())
    store.add_iteration("x", make_record(1, 7.0, content="see https://example.com/a@b"))
    settings = store.loop_settings("x")
    config, rubric = settings["config"], settings["rubric"]
    assert config["max_rounds"] == 3 and config["max_tokens"] == 4096
    assert config["return_policy"] == "best"
    assert config["models"] == {"generator": "gen-model", "judge": "judge-model"}
    assert config["client"]["base_url"] == "https://llm.example.com/v1"
    assert config["client"]["default_headers"] == {"User-Agent": "gradeloop"}
    assert config["accounts"] == [{"name": "ci"}]
    assert [c["key"] for c in rubric["criteria"]] == ["secret_sauce", "fetch"]
    assert rubric["criteria"][1]["options"] == {"url": "https://example.com/health"}
    assert store.get("x")["task"] == "plain task"
    [record] = store.iterations("x")
    assert record["usage"] == USAGE
    assert record["content"] == "see https://example.com/a@b"  # '@' in a path is not userinfo


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "API_KEY",
        "key",
        "x-api-key",
        "apiKey",
        "token",
        "access_token",
        "auth_token",
        "secret",
        "client_secret",
        "password",
        "DB_PASSWORD",
        "Authorization",
        "credentials",
        "private_key",
        "cookie",
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize(
    "name",
    [
        "max_tokens",
        "input_tokens",
        "keys",
        "failed_keys",
        "model",
        "models",
        "return_policy",
        "base_url",
        "keyword",
        "stop_reason",
        "monkey_business",
    ],
)
def test_ordinary_names(name: str) -> None:
    assert not looks_secret(name)


def test_scrub_text_redacts_keys_and_userinfo_only() -> None:
    assert scrub_text(f"k={ANTHROPIC_KEY};") == f"k={REDACTED};"
    assert scrub_text("git+ssh://git@github.com/o/r") == "git+ssh://github.com/o/r"
    assert scrub_text("mail me: ada@example.com, sk-ant is a prefix") == (
        "mail me: ada@example.com, sk-ant is a prefix"
    )


# -- stats -------------------------------------------------------------------------------


def _hand_built(store: HistoryStore) -> None:
    loops: list[tuple[str, list[float | None], tuple[str, bool] | None]] = [
        ("A", [7.5, 8.8], ("passed", True)),
        ("B", [9.0], ("passed", True)),
        ("C", [5.0, 5.0, 5.0], ("stagnation", False)),
        ("D", [4.0, None, 6.0], ("max_rounds", False)),
        ("E", [0.0, 3.0], None),  # never finished; first score 0
    ]
    for start, (loop_id, scores, ending) in enumerate(loops):
        store.start_loop(loop_id, task=loop_id, rubric=RUBRIC, config={}, started_at=start)
        for number, score in enumerate(scores, 1):
            record = make_record(
                number, score, passed=ending is not None and ending[1] and number == len(scores)
            )
            if loop_id == "C" and number == 3:
                del record["usage"]  # the one incompletely logged iteration
            store.add_iteration(loop_id, record)
        if ending is not None:
            store.finish_loop(
                loop_id,
                final_output_id=f"out-{len(scores)}",
                passed=ending[1],
                stop_reason=ending[0],
                total_time_ms=1.0,
                final_score=scores[-1],
            )


def test_stats_match_hand_computed_figures(store: HistoryStore) -> None:
    _hand_built(store)
    stats = store.stats()
    assert stats["loops"] == 5
    assert stats["iterations_to_pass"] == {"value": 1.5, "unit": "iterations", "loops_passed": 2}
    quality = stats["quality_improvement"]
    # A: (8.8 - 7.5) / 7.5 = 17.33 %, C: 0 %, D: (6 - 4) / 4 = 50 %; B has one score, E starts at 0
    assert quality["value"] == pytest.approx((1.3 / 7.5 * 100 + 0.0 + 50.0) / 3)
    assert (quality["loops"], quality["excluded_zero_first_score"]) == (3, 1)
    assert quality["basis"] == QUALITY_BASIS
    assert stats["stagnation_exits"] == {
        "value": 25.0,
        "unit": "percent",
        "stagnation_loops": 1,
        "finished_loops": 4,
    }
    completeness = stats["history_completeness"]
    assert completeness["value"] == pytest.approx(10 / 11 * 100)
    assert (completeness["complete_iterations"], completeness["iterations"]) == (10, 11)


def test_stats_on_an_empty_store_are_none(store: HistoryStore) -> None:
    stats = store.stats()
    assert stats["loops"] == 0
    for name in (
        "iterations_to_pass",
        "quality_improvement",
        "stagnation_exits",
        "history_completeness",
    ):
        assert stats[name]["value"] is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", None),
        ("content", 3),
        ("generation_time_ms", None),
        ("generation_time_ms", "fast"),
        ("generation_time_ms", True),
        ("usage", None),
        ("usage", "lots"),
    ],
)
def test_an_iteration_missing_a_field_is_incomplete(
    store: HistoryStore, field: str, value: Any
) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 5.0))  # the complete twin
    store.add_iteration("x", make_record(2, 5.0, **{field: value}))
    incomplete = make_record(3, 5.0)
    del incomplete[field]  # absent altogether
    store.add_iteration("x", incomplete)
    figure = store.stats()["history_completeness"]
    assert (figure["complete_iterations"], figure["iterations"]) == (1, 3)


def test_an_iteration_with_neither_verdict_nor_error_is_incomplete(
    store: HistoryStore,
) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, judge_error="judge refused"))  # complete
    store.add_iteration("x", make_record(2, judge_error=""))  # empty error, no evaluation
    figure = store.stats()["history_completeness"]
    assert (figure["complete_iterations"], figure["iterations"]) == (1, 2)


# -- listing, resolving, not found -------------------------------------------------------


def _three_loops(store: HistoryStore) -> None:
    for start, loop_id in enumerate(["abc111", "abc222", "def333"]):
        store.start_loop(
            loop_id,
            task=f"task {loop_id} " + "x" * 200,
            rubric=RUBRIC,
            config={},
            started_at=100.0 + start,
        )
    store.add_iteration("abc111", make_record(1, 9.0, passed=True))
    store.finish_loop(
        "abc111",
        final_output_id="out-1",
        passed=True,
        stop_reason="passed",
        total_time_ms=2.0,
        final_score=9.0,
    )


def test_list_loops_newest_first_with_summaries(store: HistoryStore) -> None:
    _three_loops(store)
    loops = store.list_loops()
    assert [s.loop_id for s in loops] == ["def333", "abc222", "abc111"]
    assert loops[2] == LoopSummary(
        loop_id="abc111",
        started_at=100.0,
        task="task abc111 " + "x" * 200,
        rounds=1,
        stop_reason="passed",
        passed=True,
        final_score=9.0,
        status="finished",
    )
    assert (loops[0].rounds, loops[0].stop_reason, loops[0].passed) == (0, None, False)
    assert [s.loop_id for s in store.list_loops(limit=1, offset=1)] == ["abc222"]
    assert store.latest_loop_id() == "def333"


def test_latest_loop_id_of_an_empty_store_is_none(store: HistoryStore) -> None:
    assert store.latest_loop_id() is None
    assert store.list_loops() == []


def test_resolve_unique_prefix_and_exact_id(store: HistoryStore) -> None:
    _three_loops(store)
    assert store.resolve("d") == "def333"
    assert store.resolve("abc1") == "abc111"
    store.start_loop("abc", task="t", rubric=RUBRIC, config={})
    assert store.resolve("abc") == "abc"  # an exact id wins over longer ids it prefixes


def test_resolve_ambiguous_prefix_lists_candidates(store: HistoryStore) -> None:
    _three_loops(store)
    with pytest.raises(LoopNotFoundError, match="ambiguous") as info:
        store.resolve("abc")
    assert "abc111" in str(info.value) and "abc222" in str(info.value)


@pytest.mark.parametrize("prefix", ["zzz", "", "ABC", "%", "abc_"])
def test_resolve_unknown_prefix(store: HistoryStore, prefix: str) -> None:
    _three_loops(store)
    with pytest.raises(LoopNotFoundError, match="gradeloop history"):
        store.resolve(prefix)


def test_unknown_loop_id_raises_loop_not_found(store: HistoryStore) -> None:
    seed_loop(store)
    for call in (
        lambda: store.get("nope"),
        lambda: store.iterations("nope"),
        lambda: store.loop_settings("nope"),
        lambda: store.add_iteration("nope", make_record(1, 1.0)),
        lambda: store.finish_loop(
            "nope",
            final_output_id="o",
            passed=False,
            stop_reason="max_rounds",
            total_time_ms=0,
            final_score=None,
        ),
    ):
        with pytest.raises(LoopNotFoundError) as info:
            call()
        assert isinstance(info.value, LookupError) and isinstance(info.value, HistoryError)
        assert "'nope'" in str(info.value) and "gradeloop history" in str(info.value)


def test_get_optimization_history_latest_prefix_and_default_store(db: Path) -> None:
    with HistoryStore(db) as store:
        _three_loops(store)
        seed_loop(store)
        assert get_optimization_history(store=store) == SEED_HISTORY  # latest started
        assert get_optimization_history("def", store=store)["loop_id"] == "def333"
    with HistoryStore() as default:  # under the test's GRADELOOP_HOME
        seed_loop(default)
    assert get_optimization_history("loop-seed") == SEED_HISTORY
    assert get_optimization_history() == SEED_HISTORY


def test_get_optimization_history_on_an_empty_store(store: HistoryStore) -> None:
    with pytest.raises(LoopNotFoundError, match="no loops"):
        get_optimization_history(store=store)


# -- write guards ------------------------------------------------------------------------


def test_a_loop_id_can_be_started_once(store: HistoryStore) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.start_loop("y", task="t", rubric=RUBRIC, config={})
    with pytest.raises(HistoryError, match="already"):
        store.start_loop("x", task="other", rubric=RUBRIC, config={})
    assert store.get("x")["task"] == "t"


def test_an_iteration_number_can_be_added_once(store: HistoryStore) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    store.add_iteration("x", make_record(1, 5.0))
    store.add_iteration("x", make_record(2, 6.0))
    with pytest.raises(HistoryError, match="already has iteration 1"):
        store.add_iteration("x", make_record(1, 9.0, output_id="other"))
    assert [r["output_id"] for r in store.iterations("x")] == ["out-1", "out-2"]


@pytest.mark.parametrize("bad", [0, -1, "1", True, 1.0, None])
def test_an_iteration_number_must_be_an_int_from_one(store: HistoryStore, bad: Any) -> None:
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    record = make_record(1, 5.0)
    record["iteration"] = bad
    with pytest.raises(HistoryError, match="iteration"):
        store.add_iteration("x", record)
    assert store.iterations("x") == []


@pytest.mark.parametrize("bad", ["", None, 7])
def test_ids_must_be_non_empty_strings(store: HistoryStore, bad: Any) -> None:
    with pytest.raises(HistoryError, match="loop_id"):
        store.start_loop(bad, task="t", rubric=RUBRIC, config={})
    store.start_loop("x", task="t", rubric=RUBRIC, config={})
    with pytest.raises(HistoryError, match="output_id"):
        store.add_iteration("x", make_record(1, 5.0, output_id=bad))


def test_non_json_values_are_stored_as_text(store: HistoryStore) -> None:
    store.start_loop(
        "x",
        task="t",
        rubric=RUBRIC,
        config={"path": Path("/tmp/r.toml"), "ratio": float("nan"), "tags": ("a", "b")},
    )
    config = store.loop_settings("x")["config"]
    assert config == {"path": str(Path("/tmp/r.toml")), "ratio": None, "tags": ["a", "b"]}
