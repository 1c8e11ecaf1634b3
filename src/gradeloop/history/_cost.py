"""What the recorded loops cost in dollars, kept as the rounds are written (migration 7).

A round's ``cost_usd`` is None when a model's price was unknown (and absent in
rounds recorded before costs were). Each ``loops`` row carries ``cost_usd`` (its
priced rounds' dollars added up) and ``unpriced_rounds``; a loop with any unpriced
round has an unknown cost: counted apart, never guessed. One ``cost_totals`` row
holds the sums over the loops whose cost is known, kept by triggers like
``loop_totals`` (see :mod:`gradeloop.history._rollup`), so reading them costs the
same at 100 rounds or 100,000.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ._rollup import totals_trigger

__all__ = ["CostRecords", "cost_migration", "unrounded_migration"]

# A record keeps its ``usage`` whole, or (packed, see history/_view.py) only the
# generation and evaluation parts whose sum it is: read whichever is there.
_NUM = "json_type({doc}, '{path}') IN ('real', 'integer')"
_WHOLE = _NUM.replace("{path}", "$.usage.cost_usd")
_PARTS = (
    f"({_NUM.replace('{path}', '$.generation_usage.cost_usd')}"
    f" AND {_NUM.replace('{path}', '$.evaluation_usage.cost_usd')})"
)
_PRICED = f"({_WHOLE} OR {_PARTS})"
_COST = (
    f"CASE WHEN {_WHOLE} THEN json_extract({{doc}}, '$.usage.cost_usd')"
    " ELSE json_extract({doc}, '$.generation_usage.cost_usd')"
    " + json_extract({doc}, '$.evaluation_usage.cost_usd') END"
)

# What one loops row (aliased R) adds to each total.
_SHARES = {
    "priced_loops": "CASE WHEN R.unpriced_rounds = 0 THEN 1 ELSE 0 END",
    "unpriced_loops": "CASE WHEN R.unpriced_rounds > 0 THEN 1 ELSE 0 END",
    "cost_sum": "CASE WHEN R.unpriced_rounds = 0 THEN R.cost_usd ELSE 0.0 END",
    "passed_loops": (
        "CASE WHEN R.unpriced_rounds = 0 AND R.finished_at IS NOT NULL"
        " AND coalesce(R.passed, 0) != 0 THEN 1 ELSE 0 END"
    ),
}


def cost_migration() -> tuple[str, ...]:
    """The statements of migration 7: per-loop columns, backfill, totals, triggers."""
    doc = "i.record_json"
    new = "NEW.record_json"
    sums = ", ".join(f"coalesce(sum({s.replace('R.', 'loops.')}), 0)" for s in _SHARES.values())
    return (
        "ALTER TABLE loops ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0.0",
        "ALTER TABLE loops ADD COLUMN unpriced_rounds INTEGER NOT NULL DEFAULT 0",
        f"""
        UPDATE loops SET
            cost_usd = (SELECT coalesce(sum({_COST.format(doc=doc)}), 0.0)
                        FROM iterations i WHERE i.loop_id = loops.loop_id
                        AND {_PRICED.format(doc=doc)}),
            unpriced_rounds = (SELECT count(*) FROM iterations i
                               WHERE i.loop_id = loops.loop_id
                               AND NOT coalesce({_PRICED.format(doc=doc)}, 0))
        """,
        "CREATE TABLE cost_totals (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "priced_loops INTEGER NOT NULL, unpriced_loops INTEGER NOT NULL, "
        "cost_sum REAL NOT NULL, passed_loops INTEGER NOT NULL)",
        f"INSERT INTO cost_totals SELECT 1, {sums} FROM loops",
        f"""
        CREATE TRIGGER loops_cost_on_iteration AFTER INSERT ON iterations BEGIN
            UPDATE loops SET
                cost_usd = cost_usd + CASE WHEN {_PRICED.format(doc=new)}
                                           THEN {_COST.format(doc=new)} ELSE 0.0 END,
                unpriced_rounds = unpriced_rounds
                                  + NOT coalesce({_PRICED.format(doc=new)}, 0)
            WHERE loop_id = NEW.loop_id;
        END
        """,
        totals_trigger("cost_totals", _SHARES, "INSERT", add="NEW", remove=None),
        totals_trigger("cost_totals", _SHARES, "UPDATE", add="NEW", remove="OLD"),
        totals_trigger("cost_totals", _SHARES, "DELETE", add=None, remove="OLD"),
    )


def unrounded_migration() -> tuple[str, ...]:
    """The statements of migration 8: the usage of a loop's calls that belong to no
    recorded round (a generate that raised: cut off at ``max_tokens``, refused, failed),
    as a usage JSON object summed as they come. Their dollars join the loop's
    ``cost_usd``; a part whose price is unknown counts in ``unpriced_rounds`` (which
    thus counts unpriced *parts*), so the loop's cost reads as unknown, never $0."""
    return ("ALTER TABLE loops ADD COLUMN unrounded_json TEXT",)


_USAGE_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _summed(before: dict[str, Any] | None, usage: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: int(usage.get(k) or 0) + int((before or {}).get(k) or 0) for k in _USAGE_COUNTS
    }
    out["total_input"] = out["input_tokens"] + out["cache_creation_input_tokens"]
    out["total_input"] += out["cache_read_input_tokens"]
    old = (before or {"cost_usd": 0.0}).get("cost_usd")
    new = usage.get("cost_usd")
    out["cost_usd"] = None if old is None or new is None else round(old + new, 8)
    out["calls"] = int((before or {}).get("calls") or 0) + 1
    if (before or {}).get("failures"):
        out["failures"] = before["failures"]  # type: ignore[index]
    return out


class CostRecords:
    """Dollars per loop and over the whole history."""

    if TYPE_CHECKING:

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _require_loop(self, conn: sqlite3.Connection, loop_id: str) -> sqlite3.Row: ...

    def add_loop_usage(self, loop_id: str, usage: Mapping[str, Any]) -> None:
        """Add the usage (``Usage.to_dict()``) of a call the loop made outside any
        recorded round - a generate that raised - to the loop's tokens and cost
        (committed on return). A usage whose ``cost_usd`` is None makes the loop's
        cost unknown."""
        raw = usage.get("cost_usd")
        priced = isinstance(raw, int | float) and not isinstance(raw, bool)
        cost = float(raw) if isinstance(raw, int | float) and priced else 0.0
        with self._write() as conn:
            row = self._require_loop(conn, loop_id)
            before = json.loads(row["unrounded_json"]) if row["unrounded_json"] else None
            conn.execute(
                "UPDATE loops SET unrounded_json = ?, cost_usd = cost_usd + ?,"
                " unpriced_rounds = unpriced_rounds + ? WHERE loop_id = ?",
                (
                    json.dumps(_summed(before, usage)),
                    cost,
                    0 if priced else 1,
                    loop_id,
                ),
            )

    def add_loop_failure(self, loop_id: str, error: str, text: str | None = None) -> None:
        """Keep why a call outside any round failed, and what it wrote before it was cut
        off (``text``, whole): ``gradeloop history ID`` shows both."""
        with self._write() as conn:
            row = self._require_loop(conn, loop_id)
            blob = json.loads(row["unrounded_json"]) if row["unrounded_json"] else {}
            blob["failures"] = [*(blob.get("failures") or []), {"error": error, "text": text}]
            conn.execute(
                "UPDATE loops SET unrounded_json = ? WHERE loop_id = ?",
                (json.dumps(blob), loop_id),
            )

    def loop_usage_outside_rounds(self, loop_id: str) -> dict[str, Any] | None:
        """The summed usage of the loop's calls outside any round (with ``calls``, how
        many), or None when it made none."""
        with self._read() as conn:
            row = self._require_loop(conn, loop_id)
        return json.loads(row["unrounded_json"]) if row["unrounded_json"] else None

    def loop_costs(self, loop_ids: Sequence[str]) -> dict[str, float | None]:
        """Each loop's total cost in dollars (None when a round's price was unknown)."""
        if not loop_ids:
            return {}
        marks = ",".join("?" * len(loop_ids))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT loop_id, cost_usd, unpriced_rounds FROM loops WHERE loop_id IN ({marks})",
                tuple(loop_ids),
            ).fetchall()
        return {str(r[0]): None if r[2] else float(r[1]) for r in rows}

    def cost_summary(self) -> dict[str, Any]:
        """Dollars over every loop whose cost is known: in total, per loop, and per
        passed loop (what an accepted draft cost); loops with an unknown price are
        counted in ``unpriced_loops`` and left out of the figures."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT priced_loops, unpriced_loops, cost_sum, passed_loops"
                " FROM cost_totals WHERE id = 1"
            ).fetchone()
        priced, unpriced, total, passed = (0, 0, 0.0, 0) if row is None else tuple(row)
        return {
            "unit": "USD",
            "total": round(total, 6) if priced else None,
            "per_loop": round(total / priced, 6) if priced else None,
            "per_passed_loop": round(total / passed, 6) if passed else None,
            "priced_loops": priced,
            "unpriced_loops": unpriced,
        }
