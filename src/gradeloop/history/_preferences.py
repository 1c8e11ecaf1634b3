"""Pairwise comparisons kept in the history store: the loop's ``select="pairwise"``
choices and ``gradeloop prefer`` runs, for the report.

Each row holds the two drafts it compared (output ids, or the file names the user
gave), the one chosen and why, and the :class:`~gradeloop.judging.Preference`'s JSON (per key
the choice, both orders' answers, whether they agreed). Draft texts are not copied:
a loop's are in its iterations, a user's are the user's files.

A mixin of :class:`~gradeloop.HistoryStore`, in its short transactions.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ._scrub import scrub_text, scrub_values

__all__ = ["PreferenceRecords", "preferences_migration"]


def preferences_migration() -> tuple[str, ...]:
    """The statements of the migration that adds the ``preferences`` table."""
    return (
        """
        CREATE TABLE preferences (
            preference_id TEXT PRIMARY KEY,
            created_at    REAL NOT NULL,
            origin        TEXT NOT NULL,
            loop_id       TEXT REFERENCES loops (loop_id) ON DELETE CASCADE,
            a_ref         TEXT,
            b_ref         TEXT,
            chosen_ref    TEXT,
            winner        TEXT,
            reason        TEXT,
            error         TEXT,
            detail_json   TEXT
        )
        """,
        "CREATE INDEX preferences_by_loop ON preferences (loop_id, created_at)",
    )


class PreferenceRecords:
    """Store and read pairwise comparisons."""

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def add_preference(
        self,
        preference: Mapping[str, Any] | None,
        *,
        origin: str,
        loop_id: str | None = None,
        a_output_id: str | None = None,
        b_output_id: str | None = None,
        chosen_output_id: str | None = None,
        reason: str | None = None,
        error: str | None = None,
    ) -> str:
        """Record one comparison (``preference`` is ``Preference.to_json()``, or None when
        it failed); returns its id."""
        preference_id = f"pref_{uuid.uuid4().hex[:12]}"
        detail = None
        if preference is not None:
            detail = json.dumps(scrub_values(dict(preference)), ensure_ascii=False, allow_nan=False)
        row = (
            preference_id,
            time.time(),
            origin,
            loop_id,
            a_output_id,
            b_output_id,
            chosen_output_id,
            None if preference is None else str(preference.get("winner")),
            None if reason is None else scrub_text(reason),
            None if error is None else scrub_text(error),
            detail,
        )
        with self._write() as conn:
            conn.execute("INSERT INTO preferences VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        return preference_id

    def preferences(self, *, loop_id: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Recorded comparisons, oldest first: a loop's, or the latest ``limit`` of all."""
        where, args = ("WHERE loop_id = ?", (loop_id,)) if loop_id is not None else ("", ())
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM (SELECT preference_id, created_at, origin, loop_id, a_ref, b_ref,"
                f" chosen_ref, winner, reason, error, detail_json FROM preferences {where}"
                " ORDER BY created_at DESC LIMIT ?) ORDER BY created_at",
                (*args, limit),
            ).fetchall()
        return [preference_row(r) for r in rows]


def preference_row(r: Any) -> dict[str, Any]:
    """One ``preferences`` row (a tuple or sqlite3.Row in the column order above) as a dict."""
    return {
        "preference_id": r[0],
        "created_at": r[1],
        "origin": r[2],
        "loop_id": r[3],
        "a_output_id": r[4],
        "b_output_id": r[5],
        "chosen_output_id": r[6],
        "winner": r[7],
        "reason": r[8],
        "error": r[9],
        "preference": None if r[10] is None else json.loads(r[10]),
    }
