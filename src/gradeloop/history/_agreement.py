"""The history store's records of shadow outcomes and judge calibration runs.

A mixin of :class:`~gradeloop.HistoryStore` (schema version 2): it uses the
store's own short write transactions and read snapshots, and scrubs everything
it stores the way loop records are scrubbed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HistoryError
from ..grading._shadow import ShadowResult
from ._scrub import scrub_rubric, scrub_values

__all__ = ["AgreementRecords"]


class AgreementRecords:
    """Store and read shadow outcomes and calibration runs."""

    path: Path

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    # -- shadow outcomes ---------------------------------------------------------

    def add_shadow_results(
        self,
        output_id: str,
        results: Sequence[ShadowResult],
        *,
        loop_id: str | None = None,
        origin: str = "loop",
    ) -> int:
        """Store each shadowed key's outcome on draft ``output_id``; returns the count.

        Every outcome is kept (agreements too, so rates can be computed later);
        :meth:`shadow_results` with ``disagreements_only=True`` lists the rest.
        ``origin`` says what graded the draft (``"loop"``, ``"compare"``...).
        """
        if not isinstance(output_id, str) or not output_id:
            raise HistoryError(f"output_id must be a non-empty string, got {output_id!r}")
        now = time.time()
        rows = []
        for r in results:
            record = scrub_values({**r.to_json(), "output_id": output_id})
            agree = None if r.agree is None else int(r.agree)
            rows.append(
                (
                    now,
                    origin,
                    loop_id,
                    output_id,
                    r.key,
                    r.primary.filled_by,
                    r.shadow.filled_by,
                    r.status,
                    agree,
                    _dumps(record),
                )
            )
        if not rows:
            return 0
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO shadow_results (recorded_at, origin, loop_id, output_id, key,"
                " primary_by, shadow_by, status, agree, record_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def shadow_results(
        self,
        *,
        key: str | None = None,
        loop_id: str | None = None,
        disagreements_only: bool = False,
        limit: int = 1000,
    ) -> list[ShadowResult]:
        """Stored outcomes, oldest first, optionally for one key / loop, or only
        the disagreements (both sides answered, differently)."""
        where, args = ["1"], []
        if key is not None:
            where.append("key = ?")
            args.append(key)
        if loop_id is not None:
            where.append("loop_id = ?")
            args.append(loop_id)
        if disagreements_only:
            where.append("agree = 0")
        sql = (
            f"SELECT record_json FROM shadow_results WHERE {' AND '.join(where)}"
            " ORDER BY id LIMIT ?"
        )
        with self._read() as conn:
            rows = conn.execute(sql, (*args, max(0, int(limit)))).fetchall()
        return [ShadowResult.from_json(json.loads(r[0])) for r in rows]

    # -- calibration runs --------------------------------------------------------

    def add_calibration(self, report: Mapping[str, Any]) -> str:
        """Store a calibration run (``CalibrationReport.to_json()``); returns its id."""
        run_id = report.get("run_id")
        if not isinstance(run_id, str) or not run_id:
            raise HistoryError(f"a calibration run needs a run_id, got {run_id!r}")
        stored = scrub_values(report)
        stored["rubric"] = scrub_rubric(report.get("rubric") or {})
        keys = [
            (
                run_id,
                k["key"],
                k["role"],
                k["rated_by"],
                k["scale"],
                k["labels"],
                k.get("agreement"),
                k.get("kappa"),
                k.get("mae"),
                k.get("correlation"),
            )
            for k in stored.get("keys", [])
        ]
        with self._write() as conn:
            try:
                conn.execute(
                    "INSERT INTO calibration_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        float(stored.get("started_at") or time.time()),
                        str(stored.get("rubric_name") or ""),
                        _dumps(stored["rubric"]),
                        str(stored.get("labels_digest") or ""),
                        stored.get("labels_path"),
                        stored.get("judge_model"),
                        int(stored.get("items") or 0),
                        _dumps(stored),
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise HistoryError(f"calibration run {run_id!r} is already in {self.path}") from exc
            conn.executemany(
                "INSERT INTO calibration_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", keys
            )
        return run_id

    def calibration_runs(
        self, rubric_name: str | None = None, *, limit: int = 20
    ) -> list[dict[str, Any]]:
        """Stored calibration reports, newest first (optionally of one rubric)."""
        sql = "SELECT report_json FROM calibration_runs"
        args: tuple[Any, ...] = ()
        if rubric_name is not None:
            sql += " WHERE rubric_name = ?"
            args = (rubric_name,)
        sql += " ORDER BY started_at DESC, rowid DESC LIMIT ?"
        with self._read() as conn:
            rows = conn.execute(sql, (*args, max(0, int(limit)))).fetchall()
        return [dict(json.loads(r[0])) for r in rows]

    def latest_calibration(self, rubric_name: str) -> dict[str, Any] | None:
        """The most recent calibration run of ``rubric_name``, or None."""
        runs = self.calibration_runs(rubric_name, limit=1)
        return runs[0] if runs else None

    def calibration_keys(self, run_id: str) -> list[dict[str, Any]]:
        """The per-key figures of one run, as stored in their own table."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT key, role, rated_by, scale, labels, agreement, kappa, mae, correlation"
                " FROM calibration_keys WHERE run_id = ? ORDER BY rowid",
                (run_id,),
            ).fetchall()
        names = (
            "key",
            "role",
            "rated_by",
            "scale",
            "labels",
            "agreement",
            "kappa",
            "mae",
            "correlation",
        )
        return [dict(zip(names, tuple(row), strict=True)) for row in rows]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
