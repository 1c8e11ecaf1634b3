"""The history store at scale: stats from running totals, ids by index, usage once.

What makes reads flat is pinned by the query plans (no full scan of ``loops`` or
``iterations`` on any read path) and by the totals always equalling the figures
computed from every row.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradeloop import HistoryStore, Rubric, Verdict, run_loop
from gradeloop.errors import LoopNotFoundError
from gradeloop.grading import Registry
from gradeloop.history._sql import MIGRATIONS
from gradeloop.history._stats import compute_stats, key_stability
from gradeloop.history._view import pack_usage, unpack_usage
from gradeloop.models import Usage

RUBRIC = {"criteria": [{"key": "tone", "description": "Warm."}]}


def record(
    iteration: int,
    score: float | None,
    *,
    complete: bool = True,
    agreements: dict[str, float] | None = None,
) -> dict[str, Any]:
    evaluation = (
        None
        if score is None
        else {"output_id": f"o{iteration}", "criteria": [], "overall_score": score, "passed": False}
    )
    out: dict[str, Any] = {
        "iteration": iteration,
        "output_id": f"o{iteration}",
        "content": f"draft {iteration}",
        "generation_time_ms": 1.0,
        "evaluation": evaluation,
        "judge_error": None if score is not None else "judge refused",
        "usage": Usage(3, 4).to_dict(),
    }
    if agreements is not None:  # keys judged with samples > 1
        criteria = [{"key": k, "met": True, "agreement": a} for k, a in agreements.items()]
        out["detail"] = {"reasoning": "r", "issues": [], "criteria": criteria}
    if not complete:
        del out["usage"]
    return out


def fresh_stats(path: Path) -> dict[str, Any]:
    """The four figures computed from every row, the way `stats` used to."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        loops = [dict(r) for r in conn.execute("SELECT * FROM loops")]
        its = [
            dict(r)
            for r in conn.execute(
                "SELECT loop_id, overall_score, complete FROM iterations"
                " ORDER BY loop_id, iteration"
            )
        ]
        records = [
            json.loads(r[0])
            for table in ("iterations", "graded_drafts")
            for r in conn.execute(f"SELECT record_json FROM {table}")
        ]
    finally:
        conn.close()
    out = compute_stats(loops, its)
    out["key_stability"] = key_stability(records)
    out["cost"] = fresh_cost(path)
    return out


def fresh_cost(path: Path) -> dict[str, Any]:
    """The cost figures computed from every record in Python (the triggers' oracle)."""
    conn = sqlite3.connect(path)
    try:
        loops = {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT loop_id, passed, finished_at FROM loops")}  # fmt: skip
        rounds: dict[str, list[float | None]] = {k: [] for k in loops}
        for loop_id, doc in conn.execute("SELECT loop_id, record_json FROM iterations"):
            rec = unpack_usage(json.loads(doc))
            cost = (rec.get("usage") or {}).get("cost_usd")
            rounds[loop_id].append(cost if isinstance(cost, int | float) else None)
    finally:
        conn.close()
    priced = {k: sum(c for c in v if c is not None) for k, v in rounds.items() if None not in v}
    total = sum(priced.values())
    passed = [k for k in priced if loops[k][0] and loops[k][1] is not None]
    return {
        "unit": "USD",
        "total": round(total, 6) if priced else None,
        "per_loop": round(total / len(priced), 6) if priced else None,
        "per_passed_loop": round(total / len(passed), 6) if passed else None,
        "priced_loops": len(priced),
        "unpriced_loops": len(loops) - len(priced),
    }


def same_figures(got: dict[str, Any], want: dict[str, Any]) -> None:
    stable_got, stable_want = got.pop("key_stability"), want.pop("key_stability")
    assert stable_got == stable_want
    quality_got, quality_want = got.pop("quality_improvement"), want.pop("quality_improvement")
    assert got == want
    value = quality_got.pop("value")
    assert value == pytest.approx(quality_want.pop("value"))
    assert quality_got == quality_want


# -- stats: running totals equal the figures from every row ------------------------------

_AGREEMENTS = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["tone", "facts"]), st.sampled_from([0.5, 2 / 3, 1.0])),
)
_LOOP = st.tuples(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from([0.0, 2.5, 5.0, 7.5, 10.0])),
            st.booleans(),
            _AGREEMENTS,
        ),
        max_size=5,
    ),
    st.one_of(
        st.none(),
        st.tuples(st.sampled_from(["passed", "stagnation", "max_rounds"]), st.booleans()),
    ),
    st.booleans(),  # iterations written in reverse order
    st.booleans(),  # finished twice, the second ending different
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_LOOP, max_size=6))
def test_stats_from_totals_equal_stats_from_every_row(tmp_path: Path, loops: list[Any]) -> None:
    path = tmp_path / f"h{abs(hash(repr(loops)))}.db"
    with HistoryStore(path) as store:
        for n, (rounds, ending, backwards, twice) in enumerate(loops):
            loop_id = f"loop-{n}"
            store.start_loop(loop_id, task="t", rubric=RUBRIC, config={}, started_at=n)
            numbered = list(enumerate(rounds, 1))
            for i, (score, complete, agreed) in reversed(numbered) if backwards else numbered:
                store.add_iteration(loop_id, record(i, score, complete=complete, agreements=agreed))
            endings = [ending] if ending else []
            if ending and twice:
                endings.insert(0, ("max_rounds", not ending[1]))
            for reason, passed in endings:
                store.finish_loop(
                    loop_id,
                    final_output_id="o1",
                    passed=passed,
                    stop_reason=reason,
                    total_time_ms=1.0,
                    final_score=None,
                )
        got = store.stats()
    same_figures(got, fresh_stats(path))


def test_a_deleted_loop_leaves_the_totals(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    with HistoryStore(path) as store:
        for loop_id in ("a", "b"):
            store.start_loop(loop_id, task="t", rubric=RUBRIC, config={})
            store.add_iteration(loop_id, record(1, 5.0, agreements={"tone": 0.5}))
            store.add_iteration(loop_id, record(2, 7.5, agreements={"tone": 1.0}))
        store._connection().execute("DELETE FROM loops WHERE loop_id = 'a'")
        got = store.stats()
    assert got["loops"] == 1 and got["history_completeness"]["iterations"] == 2
    assert got["key_stability"]["keys"][0]["evaluations"] == 2
    same_figures(got, fresh_stats(path))


def test_an_older_file_is_rolled_up_when_it_is_upgraded(tmp_path: Path) -> None:
    # A schema-3 file with loops already in it, as an earlier gradeloop left it.
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statements in MIGRATIONS[:3]:
        for statement in statements:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    rows = [("a", [4.0, None, 6.0], ("passed", 1)), ("b", [2.0, 2.0], None), ("c", [], None)]
    for n, (loop_id, scores, ending) in enumerate(rows):
        conn.execute(
            "INSERT INTO loops (loop_id, started_at, task, rubric_json, config_json,"
            " writer_host, writer_pid, finished_at, stop_reason, passed)"
            " VALUES (?, ?, 't', '{}', '{}', 'h', 1, ?, ?, ?)",
            (loop_id, n, 1.0 if ending else None, *(ending or (None, None))),
        )
        for i, score in reversed(list(enumerate(scores, 1))):
            conn.execute(
                "INSERT INTO iterations VALUES (?, ?, ?, ?, 0, ?, 1, 0, ?)",
                (
                    loop_id,
                    i,
                    f"o{i}",
                    score,
                    int(score is None),
                    json.dumps(record(i, score, agreements={"tone": 0.5 * i})),
                ),
            )
    conn.commit()
    conn.close()
    with HistoryStore(path) as store:
        got = store.stats()
        rounds = {s.loop_id: s.rounds for s in store.list_loops()}
    assert rounds == {"a": 3, "b": 2, "c": 0}
    assert got["key_stability"]["keys"][0]["evaluations"] == 5
    assert got["iterations_to_pass"]["value"] == 3
    assert got["quality_improvement"]["value"] == pytest.approx(25.0)  # a: 4 -> 6; b: 0 %
    same_figures(got, fresh_stats(path))


# -- every read path uses an index -------------------------------------------------------


def plan(store: HistoryStore, sql: str, *args: Any) -> str:
    rows = store._connection().execute(f"EXPLAIN QUERY PLAN {sql}", args).fetchall()
    return " | ".join(str(r[3]) for r in rows)


class Recording(sqlite3.Connection):
    """Remembers every statement run on it."""

    seen: list[str]

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        self.seen.append(sql)
        return super().execute(sql, *args)


def statements_of(store: HistoryStore, action: Any) -> list[str]:
    conn = sqlite3.connect(store.path, factory=Recording, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.seen = []
    own, store._conn = store._conn, conn
    try:
        action()
    finally:
        store._conn = own
        conn.close()
    return [s for s in conn.seen if s.lstrip().upper().startswith("SELECT")]


@pytest.fixture
def filled(tmp_path: Path) -> HistoryStore:
    store = HistoryStore(tmp_path / "h.db")
    for n in range(30):
        store.start_loop(f"loop_{n:04d}_x", task="t", rubric=RUBRIC, config={}, started_at=n)
        store.add_iteration(f"loop_{n:04d}_x", record(1, 5.0))
    return store


@pytest.mark.parametrize(
    "action",
    [
        lambda s: s.stats(),
        lambda s: s.resolve("loop_0012_x"),
        lambda s: s.resolve("loop_0012"),
        lambda s: s.get("loop_0012_x"),
        lambda s: s.iterations("loop_0012_x"),
        lambda s: s.list_loops(limit=20),
        lambda s: s.latest_loop_id(),
        lambda s: s.shadow_results(loop_id="loop_0012_x"),
    ],
    ids=[
        "stats",
        "resolve-full",
        "resolve-prefix",
        "get",
        "iterations",
        "list",
        "latest",
        "shadow",
    ],
)
def test_no_read_scans_a_whole_table(filled: HistoryStore, action: Any) -> None:
    with filled:
        for sql in statements_of(filled, lambda: action(filled)):
            shown = plan(filled, sql, *([None] * sql.count("?")))
            for table in ("loops", "iterations", "shadow_results"):
                assert f"SCAN {table} " not in shown + " " or "USING INDEX" in shown, (sql, shown)
            assert "SCAN iterations" not in shown, (sql, shown)
            assert not (" SCAN loops" in f" {shown}" and "LIMIT" not in sql.upper()), (sql, shown)


def test_shadow_outcomes_are_found_by_loop_through_an_index(filled: HistoryStore) -> None:
    with filled:
        shown = plan(filled, "SELECT id FROM shadow_results WHERE loop_id = ? ORDER BY id", "x")
    assert "INDEX shadow_results_by_loop" in shown


# -- resolving ids ---------------------------------------------------------------------


@pytest.fixture
def ids(tmp_path: Path) -> HistoryStore:
    store = HistoryStore(tmp_path / "h.db")
    for n, loop_id in enumerate(["ab", "abc", "abd", "a%c", "a_c", "zé1", "zé2"]):
        store.start_loop(loop_id, task="t", rubric=RUBRIC, config={}, started_at=n)
    return store


@pytest.mark.parametrize(
    ("prefix", "found"),
    [
        ("ab", "ab"),  # a full id wins over the longer ids it starts
        ("abc", "abc"),
        ("a%", "a%c"),  # no LIKE wildcards
        ("a_", "a_c"),
        ("zé1", "zé1"),
    ],
)
def test_an_exact_id_or_a_unique_prefix_resolves(
    ids: HistoryStore, prefix: str, found: str
) -> None:
    with ids:
        assert ids.resolve(prefix) == found


@pytest.mark.parametrize(
    ("prefix", "error"), [("a", "ambiguous"), ("zé", "ambiguous"), ("b", "no loop id")]
)
def test_an_ambiguous_or_unknown_prefix_is_refused(
    ids: HistoryStore, prefix: str, error: str
) -> None:
    with ids, pytest.raises(LoopNotFoundError, match=error):
        ids.resolve(prefix)


# -- storage: each call's usage once -------------------------------------------------------


def test_a_loop_round_stores_its_usage_once_and_reads_back_whole(tmp_path: Path) -> None:
    rubric = Rubric.from_dict(RUBRIC, registry=Registry(autoload=False))

    class Gen:
        def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
            return "a draft"

    class Judge:
        def evaluate(self, task: str, draft: str, criteria: Any) -> Verdict:
            return Verdict(reasoning="r", criteria_met={"tone": True}, passed=True, issues=[])

    with HistoryStore(tmp_path / "h.db") as store:
        result = run_loop("t", rubric, generator=Gen(), judge=Judge(), store=store)
        written = result.history[0].to_record()
        raw = store._connection().execute("SELECT record_json FROM iterations").fetchone()[0]
        read = store.iterations(result.loop_id)[0]
    stored = json.loads(raw)
    assert "usage" not in stored and "total_input" not in raw
    assert set(stored["generation_usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cost_usd",
    }
    assert read == json.loads(json.dumps(written))  # the full record, as written
    assert list(read) == list(written)  # in the same order
    assert ", " not in raw and '": ' not in raw  # compact JSON


def test_a_record_whose_usage_is_not_the_sum_of_its_parts_is_kept_whole() -> None:
    parts = {"generation_usage": Usage(1, 2).to_dict(), "evaluation_usage": Usage(3, 4).to_dict()}
    odd = {"usage": Usage(9, 9).to_dict(), **parts}
    assert pack_usage(odd) == odd
    only_total = {"usage": Usage(9, 9).to_dict()}
    assert pack_usage(only_total) == only_total == unpack_usage(dict(only_total))
    good = {"usage": Usage(4, 6).to_dict(), **parts}
    assert unpack_usage(pack_usage(good)) == good
