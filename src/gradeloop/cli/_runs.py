"""Reading a run for the statistics commands: a stored grading run's id (or a unique
prefix), or a file of ``gradeloop grade --drafts --json`` output."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, LoopNotFoundError
from ..history._paths import default_history_path
from ..history._store import HistoryStore
from ..stats import GradedRow
from ._io import read_text


@dataclass(frozen=True)
class LoadedRun:
    """A run's drafts as rows, with its label (id or path) and, for a stored run, its
    fingerprint."""

    label: str
    rows: list[GradedRow]
    fingerprint: dict[str, Any] | None = None
    stored: bool = False


def add_level_option(parser: argparse.ArgumentParser) -> None:
    """``--level``: the confidence level of every interval."""
    parser.add_argument(
        "--level",
        type=float,
        default=0.95,
        metavar="L",
        help="confidence level of the intervals (default 0.95)",
    )


def check_level(level: float) -> float:
    """The level, or exit 2 naming the option."""
    if not 0 < level < 1:
        raise InputError(f"--level is between 0 and 1 (e.g. 0.95), not {level:g}")
    return level


def load_run(ref: str, db: str | None) -> LoadedRun:
    """``ref`` as a file when one exists at that path, else as a stored grading run."""
    if ref == "-" or Path(ref).is_file():
        return LoadedRun(ref, read_rows(ref))
    path = Path(db) if db is not None else default_history_path()
    if not path.is_file():
        raise InputError(
            f"{ref!r} is neither a file nor a grading run: no history database at {path} "
            "(give a file of `gradeloop grade --drafts --json` output, or --db)"
        )
    with HistoryStore(path) as store:
        ids = store.grading_run_ids(ref)
        if len(ids) != 1:
            what = "ambiguous: " + ", ".join(ids[:5]) if ids else "not found"
            raise LoopNotFoundError(
                f"{ref!r} is neither a file nor a grading run id in {path} ({what}); list "
                "the runs with `gradeloop history`"
            )
        data = store.grading_run(ids[0])
    rows = [
        GradedRow.from_json(d, where=f"run {ids[0]} draft {i + 1}")
        for i, d in enumerate(data["drafts"])
    ]
    fingerprint = (data.get("config") or {}).get("fingerprint")
    return LoadedRun(ids[0], rows, fingerprint if isinstance(fingerprint, dict) else None, True)


def read_rows(path: str) -> list[GradedRow]:
    """The drafts of a ``grade --drafts --json`` file (one JSON object a line; a JSON
    list of them is read too)."""
    text = read_text(path, "graded drafts")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        lines = [(i + 1, item) for i, item in enumerate(data)]
    else:
        lines = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                lines.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{path}:{number}: not a JSON object ({exc.msg}); give the output of "
                    "`gradeloop grade --drafts FILE --json`"
                ) from None
    rows = [
        GradedRow.from_json(obj, where=f"{path}:{n}")
        for n, obj in lines
        if not (isinstance(obj, dict) and set(obj) == {"summary"})  # `grade --summary`'s line
    ]
    if not rows:
        raise InputError(
            f"{path}: no graded drafts in it; give `gradeloop grade --drafts --json` output"
        )
    return rows
