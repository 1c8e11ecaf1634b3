"""Reports of what loops and grading runs did: one self-contained HTML file, and a
local read-only viewer of the same pages.

Both read the history database read-only (SQLite ``mode=ro``). Every piece of
user or model text is escaped, and the pages carry a Content-Security-Policy that
forbids scripts and any request to anywhere else, so a report is safe to attach to
a CI run and to open from anyone's loops::

    from gradeloop.history.report import write_report
    write_report("report.html", db="history.db")          # the latest loops and runs
    write_report("one.html", ["loop_3f2a"], db="history.db")  # ids or unique prefixes

``gradeloop report`` and ``gradeloop view`` are the command-line faces of
:func:`write_report` and :class:`Viewer`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ...errors import InputError
from ._db import Filters, ReadOnlyHistory
from ._pages import report_document
from ._server import Viewer

__all__ = ["Filters", "ReadOnlyHistory", "Viewer", "render_report", "write_report"]


def render_report(
    ids: Sequence[str] = (), *, db: str | os.PathLike[str] | None = None, limit: int = 20
) -> str:
    """The report as an HTML string: the loops and grading runs named by ``ids``
    (full ids or unique prefixes), or the ``limit`` most recent of each."""
    with ReadOnlyHistory(Path(db) if db is not None else None) as history:
        return report_document(history, list(ids), limit=limit)


def write_report(
    out: str | os.PathLike[str],
    ids: Sequence[str] = (),
    *,
    db: str | os.PathLike[str] | None = None,
    limit: int = 20,
) -> Path:
    """Write :func:`render_report` to ``out`` (UTF-8); returns the path written."""
    text = render_report(ids, db=db, limit=limit)
    path = Path(out)
    try:
        path.write_text(text, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot write the report to {path}: {exc.strerror}") from None
    return path
