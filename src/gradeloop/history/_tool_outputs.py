"""What a tool-driven loop needs to go on, kept in the history store (schema 6).

The function-calling tools find an output again by its text and let a revision join
the loop of the output it revises (:mod:`gradeloop.tools._ledger`). Keeping that
index only in memory made a long-lived server grow with every call and forget every
loop when it restarted. So each output the tools hand out gets a row here: its loop,
a hash of its text, where it came from, and, until its iteration record is written,
the output itself (``pending``). A restarted server, or one that let a loop fall out
of its memory, reads the loop back from these rows and the iteration records.

A mixin of :class:`~gradeloop.HistoryStore`, in its short transactions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ._scrub import scrub_text, scrub_values

__all__ = ["ToolOutputs", "tool_outputs_migration"]


def tool_outputs_migration() -> tuple[str, ...]:
    """The statements of migration 6."""
    return (
        """
        CREATE TABLE tool_outputs (
            output_id         TEXT PRIMARY KEY,
            loop_id           TEXT NOT NULL REFERENCES loops (loop_id) ON DELETE CASCADE,
            content_key       TEXT NOT NULL,
            iteration         INTEGER NOT NULL,
            source            TEXT NOT NULL,
            parent_id         TEXT,
            revision_feedback TEXT,
            pending_json      TEXT
        )
        """,
        "CREATE INDEX tool_outputs_by_key ON tool_outputs (content_key)",
        "CREATE INDEX tool_outputs_by_loop ON tool_outputs (loop_id, iteration)",
    )


class ToolOutputs:
    """Store and read the outputs of tool-driven loops."""

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def add_tool_output(
        self,
        loop_id: str,
        output_id: str,
        *,
        content_key: str,
        iteration: int,
        source: str,
        parent_id: str | None,
        revision_feedback: str | None,
        pending: Mapping[str, Any],
    ) -> None:
        """Record an output handed out by a tool; ``pending`` is its unrecorded iteration."""
        row = (
            output_id,
            loop_id,
            content_key,
            iteration,
            source,
            parent_id,
            None if revision_feedback is None else scrub_text(revision_feedback),
            _dumps(scrub_values(pending)),
        )
        with self._write() as conn:
            conn.execute("INSERT INTO tool_outputs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def settle_tool_output(self, output_id: str) -> None:
        """Its iteration record is written: the pending copy is no longer needed."""
        with self._write() as conn:
            conn.execute(
                "UPDATE tool_outputs SET pending_json = NULL WHERE output_id = ?", (output_id,)
            )

    def tool_output_for(self, content_key: str) -> tuple[str, str] | None:
        """``(loop_id, output_id)`` of the latest output with this text key, if any."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT loop_id, output_id FROM tool_outputs WHERE content_key = ?"
                " ORDER BY rowid DESC LIMIT 1",
                (content_key,),
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def tool_outputs(self, loop_id: str) -> list[dict[str, Any]]:
        """The loop's tool outputs in iteration order (``pending`` None once recorded)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT output_id, iteration, source, parent_id, revision_feedback, pending_json"
                " FROM tool_outputs WHERE loop_id = ? ORDER BY iteration",
                (loop_id,),
            ).fetchall()
        return [
            {
                "output_id": str(r[0]),
                "iteration": int(r[1]),
                "source": str(r[2]),
                "parent_id": r[3],
                "revision_feedback": r[4],
                "pending": None if r[5] is None else json.loads(r[5]),
            }
            for r in rows
        ]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
