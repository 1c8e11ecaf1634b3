"""Recording what a grading command graded, as a grading run in the history."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import HistoryError
from ..grading._rubric import Rubric
from ..history._grading import GradedDraft
from ..history._store import HistoryStore
from ..migration._compare import rubric_label
from ..models._fingerprint import run_fingerprint
from ._io import terminal_safe


def add_history_options(parser: argparse.ArgumentParser) -> None:
    """``--no-history`` for a grading command (``--db`` comes from add_db_option)."""
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="do not record this grading run in the history database",
    )


def _config(rubric: Rubric, origin: str, judge: object) -> dict[str, object]:
    return {
        "judge_model": getattr(judge, "model", None),
        "origin": origin,
        "fingerprint": run_fingerprint(judge, rubric.to_dict()),
    }


def _warn(exc: HistoryError) -> None:
    print(
        terminal_safe(f"gradeloop: warning: the grading run was not recorded: {exc}"),
        file=sys.stderr,
    )


class RunRecorder:
    """A grading run recorded draft by draft, as each is graded (unless ``--no-history``):
    a run that is stopped keeps the drafts it finished. The run is begun with its first
    draft; a history that cannot be written costs a warning, never the grade."""

    def __init__(
        self, args: argparse.Namespace, rubric: Rubric, *, origin: str, judge: object = None
    ) -> None:
        self.args, self.rubric, self.origin, self.judge = args, rubric, origin, judge
        self.off = bool(getattr(args, "no_history", False))
        self.store: HistoryStore | None = None
        self.run_id: str | None = None

    def add(self, position: int, draft: GradedDraft) -> None:
        """Record one graded draft (at its position in the input)."""
        if self.off:
            return
        try:
            if self.store is None:
                self.store = HistoryStore(getattr(self.args, "db", None))
                self.run_id = self.store.start_grading_run(
                    rubric=self.rubric.to_dict(),
                    rubric_name=rubric_label(self.rubric),
                    origin=self.origin,
                    config=_config(self.rubric, self.origin, self.judge),
                )
            assert self.run_id is not None
            self.store.add_graded_draft(self.run_id, position, draft)
        except HistoryError as exc:
            _warn(exc)
            self.off = True
            self.close()

    def close(self) -> str | None:
        """Close the history; the run's id (None when nothing was recorded)."""
        if self.store is not None:
            self.store.close()
            self.store = None
        return None if self.off else self.run_id


def record_grading(
    args: argparse.Namespace,
    rubric: Rubric,
    drafts: Sequence[GradedDraft],
    *,
    origin: str,
    judge: object = None,
) -> str | None:
    """Store the run unless ``--no-history``; returns its id.

    A history that cannot be written (a read-only home, a broken file) costs the
    user a warning, never the grade they asked for.
    """
    if getattr(args, "no_history", False) or not drafts:
        return None
    config = _config(rubric, origin, judge)
    try:
        with HistoryStore(getattr(args, "db", None)) as store:
            return store.add_grading_run(
                drafts,
                rubric=rubric.to_dict(),
                rubric_name=rubric_label(rubric),
                origin=origin,
                config=config,
            )
    except HistoryError as exc:
        _warn(exc)
        return None


def say_recorded(run_id: str | None, args: argparse.Namespace) -> None:
    """The last line of a grading command (on stderr): the id of the grading run it
    recorded, and where that id goes next."""
    if run_id is None:
        return
    db = getattr(args, "db", None)
    where = f" --db {db}" if db else ""
    print(
        terminal_safe(
            f"run {run_id} recorded (`gradeloop history {run_id}{where}` shows it; "
            f"`gradeloop label {run_id}{where}` labels its drafts)"
        ),
        file=sys.stderr,
    )
