"""``grade --drafts``'s results written out as each draft is graded.

A run of many drafts can be stopped half way (Ctrl-C, a closed laptop, ``kill``):
what it did must not be lost with it. So each draft, as it is graded, goes into the
history (one row of its grading run) and, with ``--json``, to stdout (one line,
flushed; lines in input order, each printed once every draft before it is done). A
rerun is then cheap: the verdict cache answers the finished drafts.

Until one draft's judge has answered (or a draft needed no judge), results are held
back: when the judge's API fails on every draft the server is not there, and the
command says so in one line instead of recording a run of failures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..grading._grade import Evaluation
from ..grading._jsonout import dumps
from ..grading._rubric import Rubric
from ..history._grading import GradedDraft
from ..migration._jsonl import DraftItem
from ._many_output import json_line
from ._record import RunRecorder

__all__ = ["ManyStream"]


class ManyStream:
    """The ``on_result`` of ``grade_many`` for ``grade --drafts`` (see the module)."""

    def __init__(
        self,
        args: argparse.Namespace,
        rubric: Rubric,
        items: Sequence[DraftItem],
        judge: object = None,
    ) -> None:
        self.items = items
        self.json = bool(args.json)
        self.results: list[Evaluation | None] = [None] * len(items)
        self.recorder = RunRecorder(args, rubric, origin="grade", judge=judge)
        self._held: list[int] = []  # graded, not yet written out
        self._printed = 0  # --json: the lines printed so far (a prefix of the input)
        self._live = False  # a judge answered, or a draft needed none

    def __call__(self, index: int, evaluation: Evaluation) -> None:
        self.results[index] = evaluation
        self._held.append(index)
        error = evaluation.judge_error or ""
        self._live = self._live or not error.startswith("api_error: ")
        if self._live:
            self.flush()

    def flush(self) -> None:
        """Write out every result held back: its history row, and the --json lines
        whose turn has come."""
        for index in self._held:
            item, ev = self.items[index], self.results[index]
            assert ev is not None
            self.recorder.add(index, _graded(item, ev))
        self._held.clear()
        while self.json and self._printed < len(self.items):
            ev = self.results[self._printed]
            if ev is None:
                break
            self._line(self._printed, ev)
            self._printed += 1

    def interrupted(self) -> list[int]:
        """The run was stopped: everything graded is written out (--json: the lines
        still waiting for an earlier draft too, out of order); the positions done."""
        self.flush()
        done = [i for i, ev in enumerate(self.results) if ev is not None]
        if self.json:
            for index in done:
                if index >= self._printed:
                    ev = self.results[index]
                    assert ev is not None
                    self._line(index, ev)
            self._printed = len(self.items)
        return done

    def close(self) -> str | None:
        """Close the history; the id of the run recorded (None: nothing was)."""
        return self.recorder.close()

    def _line(self, index: int, ev: Evaluation) -> None:
        sys.stdout.write(dumps(json_line(self.items[index], ev), ensure_ascii=False) + "\n")
        sys.stdout.flush()  # a killed run keeps every line it printed


def _graded(item: DraftItem, ev: Evaluation) -> GradedDraft:
    error = ev.judge_error
    return GradedDraft(
        item.output_id,
        item.draft,
        None if error is not None else ev,
        item.task,
        error,
        reference=item.reference,
        metadata=item.metadata,
    )
