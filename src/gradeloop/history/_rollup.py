"""Running totals behind ``gradeloop stats``, kept by SQLite triggers (migration 5).

The four figures of :func:`~gradeloop.history._stats.compute_stats` need every loop's
rounds and its first and last judged score. Reading those for 100,000 rounds takes
a second, so they are kept as the rounds are written instead:

* each ``loops`` row carries its own roll-up: ``rounds``, ``complete_rounds``,
  ``judged_rounds``, and the iteration number and overall score of its first and
  last judged round (``first_judged``/``first_score``, ``last_judged``/``last_score``),
  updated by a trigger on every insert into ``iterations``;
* one ``loop_totals`` row holds the sums over all loops of what each loop adds to
  the figures (see :data:`CONTRIBUTIONS`); triggers on ``loops`` add a new row's
  share, swap an updated row's old share for its new one, and take a deleted row's
  share away.

* one ``key_agreement`` row per judge key sampled more than once holds how many
  sampled evaluations it had, their agreements added up and how many split, taken
  from each record's detail as it is written (``key_stability``).

So ``stats`` reads a few rows, however large the history grows. The triggers live in
the database file, so every writer keeps the totals, whichever gradeloop it runs.
Iteration rows are never updated or deleted on their own (only with their loop);
the roll-up relies on that. The quality figure's sum is kept by adding and
subtracting floats: it may differ from a fresh sum in the last few bits.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["CONTRIBUTIONS", "TOTALS", "rollup_migration", "totals_trigger"]

# What one ``loops`` row (aliased R) adds to each total, as SQL over its columns.
_FINISHED = "R.finished_at IS NOT NULL"
_GAINED = "R.judged_rounds >= 2 AND R.first_score > 0"
CONTRIBUTIONS: dict[str, str] = {
    "loops": "1",
    "finished": f"CASE WHEN {_FINISHED} THEN 1 ELSE 0 END",
    "passed": f"CASE WHEN {_FINISHED} AND coalesce(R.passed, 0) != 0 THEN 1 ELSE 0 END",
    "passed_rounds": (
        f"CASE WHEN {_FINISHED} AND coalesce(R.passed, 0) != 0 THEN R.rounds ELSE 0 END"
    ),
    "stagnated": f"CASE WHEN {_FINISHED} AND R.stop_reason = 'stagnation' THEN 1 ELSE 0 END",
    "iterations": "R.rounds",
    "complete": "R.complete_rounds",
    "gain_sum": (
        f"CASE WHEN {_GAINED} THEN (R.last_score - R.first_score) / R.first_score * 100.0"
        " ELSE 0.0 END"
    ),
    "gain_loops": f"CASE WHEN {_GAINED} THEN 1 ELSE 0 END",
    "zero_start": "CASE WHEN R.judged_rounds >= 2 AND R.first_score <= 0 THEN 1 ELSE 0 END",
}
TOTALS = tuple(CONTRIBUTIONS)


def _share(alias: str, name: str) -> str:
    return CONTRIBUTIONS[name].replace("R.", f"{alias}.")


def totals_trigger(
    table: str, shares: Mapping[str, str], event: str, *, add: str | None, remove: str | None
) -> str:
    """A trigger on ``loops`` keeping ``table``'s one row of running totals.

    ``shares`` maps each total's column to a loop row's share of it, written over
    the row alias ``R.``; ``add``/``remove`` are the rows (NEW, OLD) the event adds
    and removes.
    """
    changes = []
    for name, share in shares.items():
        expr = name
        if add is not None:
            expr += f" + ({share.replace('R.', add + '.')})"
        if remove is not None:
            expr += f" - ({share.replace('R.', remove + '.')})"
        changes.append(f"{name} = {expr}")
    return (
        f"CREATE TRIGGER {table}_on_{event.lower()} AFTER {event} ON loops BEGIN "
        f"UPDATE {table} SET {', '.join(changes)} WHERE id = 1; END"
    )


# An iteration that is judged and earlier (later) than the loop's first (last) judged
# round so far becomes the new first (last); rows may arrive in any order.
_EARLIER = (
    "NEW.overall_score IS NOT NULL AND (first_judged IS NULL OR NEW.iteration < first_judged)"
)
_LATER = "NEW.overall_score IS NOT NULL AND (last_judged IS NULL OR NEW.iteration > last_judged)"

_ITERATION_TRIGGER = f"""
CREATE TRIGGER loops_rollup_on_iteration AFTER INSERT ON iterations BEGIN
    UPDATE loops SET
        rounds = rounds + 1,
        complete_rounds = complete_rounds + (NEW.complete != 0),
        judged_rounds = judged_rounds + (NEW.overall_score IS NOT NULL),
        first_score = CASE WHEN {_EARLIER} THEN NEW.overall_score ELSE first_score END,
        first_judged = CASE WHEN {_EARLIER} THEN NEW.iteration ELSE first_judged END,
        last_score = CASE WHEN {_LATER} THEN NEW.overall_score ELSE last_score END,
        last_judged = CASE WHEN {_LATER} THEN NEW.iteration ELSE last_judged END
    WHERE loop_id = NEW.loop_id;
END
"""

_JUDGED = "i.loop_id = loops.loop_id AND i.overall_score IS NOT NULL"

# Per judge key sampled more than once, how often the samples agreed (the figures of
# `key_stability`): taken from each stored record's detail as it is written.
_AGREEMENTS = """
SELECT coalesce(CAST(json_extract(c.value, '$.key') AS TEXT), 'None') AS key,
       json_extract(c.value, '$.agreement') AS agreement
FROM json_each(CASE WHEN json_valid({doc}) AND json_type({doc}, '$.detail.criteria') = 'array'
                    THEN {doc} ELSE '{{"detail": {{"criteria": []}}}}' END,
               '$.detail.criteria') AS c
WHERE json_type(c.value, '$.agreement') IN ('integer', 'real')
"""


def _agreement_triggers(table: str) -> tuple[str, str]:
    rows = _AGREEMENTS.format(doc="NEW.record_json")
    gone = _AGREEMENTS.format(doc="OLD.record_json")
    return (
        f"""
        CREATE TRIGGER key_agreement_on_{table} AFTER INSERT ON {table} BEGIN
            INSERT INTO key_agreement (key, evaluations, agreement_sum, split)
            SELECT key, 1, agreement, agreement < 1 FROM ({rows}) WHERE true
            ON CONFLICT (key) DO UPDATE SET
                evaluations = evaluations + 1,
                agreement_sum = agreement_sum + excluded.agreement_sum,
                split = split + excluded.split;
        END
        """,
        f"""
        CREATE TRIGGER key_agreement_off_{table} AFTER DELETE ON {table} BEGIN
            UPDATE key_agreement SET
                evaluations = evaluations
                    - (SELECT count(*) FROM ({gone}) AS g WHERE g.key = key_agreement.key),
                agreement_sum = agreement_sum
                    - (SELECT total(g.agreement) FROM ({gone}) AS g
                       WHERE g.key = key_agreement.key),
                split = split
                    - (SELECT count(*) FROM ({gone}) AS g
                       WHERE g.key = key_agreement.key AND g.agreement < 1)
            WHERE key IN (SELECT key FROM ({gone}));
        END
        """,
    )


def rollup_migration() -> tuple[str, ...]:
    """The statements of migration 4: columns, backfill, totals, triggers, indexes."""
    columns = (
        ("rounds", "INTEGER NOT NULL DEFAULT 0"),
        ("complete_rounds", "INTEGER NOT NULL DEFAULT 0"),
        ("judged_rounds", "INTEGER NOT NULL DEFAULT 0"),
        ("first_judged", "INTEGER"),
        ("first_score", "REAL"),
        ("last_judged", "INTEGER"),
        ("last_score", "REAL"),
    )
    sums = ", ".join(f"coalesce(sum({_share('loops', name)}), 0)" for name in TOTALS)
    return (
        *(f"ALTER TABLE loops ADD COLUMN {name} {kind}" for name, kind in columns),
        # the roll-up of the loops already stored (once, when the file is upgraded)
        f"""
        UPDATE loops SET
            rounds = (SELECT count(*) FROM iterations i WHERE i.loop_id = loops.loop_id),
            complete_rounds = (SELECT count(*) FROM iterations i
                               WHERE i.loop_id = loops.loop_id AND i.complete != 0),
            judged_rounds = (SELECT count(*) FROM iterations i WHERE {_JUDGED}),
            first_judged = (SELECT min(iteration) FROM iterations i WHERE {_JUDGED}),
            last_judged = (SELECT max(iteration) FROM iterations i WHERE {_JUDGED})
        """,
        """
        UPDATE loops SET
            first_score = (SELECT overall_score FROM iterations i
                           WHERE i.loop_id = loops.loop_id AND i.iteration = loops.first_judged),
            last_score = (SELECT overall_score FROM iterations i
                          WHERE i.loop_id = loops.loop_id AND i.iteration = loops.last_judged)
        """,
        "CREATE TABLE loop_totals (id INTEGER PRIMARY KEY CHECK (id = 1), "
        + ", ".join(
            f"{name} {'REAL' if name == 'gain_sum' else 'INTEGER'} NOT NULL" for name in TOTALS
        )
        + ")",
        f"INSERT INTO loop_totals SELECT 1, {sums} FROM loops",
        _ITERATION_TRIGGER,
        totals_trigger("loop_totals", CONTRIBUTIONS, "INSERT", add="NEW", remove=None),
        totals_trigger("loop_totals", CONTRIBUTIONS, "UPDATE", add="NEW", remove="OLD"),
        totals_trigger("loop_totals", CONTRIBUTIONS, "DELETE", add=None, remove="OLD"),
        # shadow outcomes are read (and cascade-deleted) by loop
        "CREATE INDEX shadow_results_by_loop ON shadow_results (loop_id)",
        """
        CREATE TABLE key_agreement (
            key           TEXT PRIMARY KEY NOT NULL,
            evaluations   INTEGER NOT NULL,
            agreement_sum REAL NOT NULL,
            split         INTEGER NOT NULL
        )
        """,
        "INSERT INTO key_agreement SELECT key, count(*), sum(agreement), sum(agreement < 1)"
        " FROM ("
        + " UNION ALL ".join(
            _AGREEMENTS.format(doc=f"{t}.record_json").replace(
                "FROM json_each", f"FROM {t}, json_each"
            )
            for t in ("iterations", "graded_drafts")
        )
        + ") GROUP BY key",
        *_agreement_triggers("iterations"),
        *_agreement_triggers("graded_drafts"),
    )
