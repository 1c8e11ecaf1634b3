"""Models for resume tests that span processes: stateless, and logging to a file.

Run as ``python -m tests.support.graph_helpers DB LOG CRASH_ON HISTORY`` to start a graph
thread that kills its own process (``os._exit``) while judging the draft
``CRASH_ON``, as a crash or an OOM kill would.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from gradeloop import Criterion, HistoryStore, Rubric, Verdict
from gradeloop.grading import Registry

KEYS = ("api_cited", "errors_named")
THREAD = {"configurable": {"thread_id": "crashy"}}
CRASH_EXIT = 9


def rubric() -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": k, "description": f"{k} holds"} for k in KEYS]},
        registry=Registry(autoload=False),
    )


def _log(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


class LogGenerator:
    """d0, then d1 revising d0, and so on: the text depends only on the input."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        text = f"d{int(draft[1:]) + 1}" if draft else "d0"
        _log(self.log, f"generate {text}")
        return text


class LogJudge:
    """Fails every draft; exits the process while judging ``crash_on``."""

    def __init__(self, log: Path, crash_on: str | None = None) -> None:
        self.log, self.crash_on = log, crash_on

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        _log(self.log, f"evaluate {draft}")
        if draft == self.crash_on:
            os._exit(CRASH_EXIT)
        return Verdict(
            reasoning="r",
            criteria_met=dict.fromkeys(KEYS, False),
            passed=False,
            issues=[f"fix {draft}"],
        )


def main(db: str, log: str, crash_on: str, history: str) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from gradeloop.graph import build_graph

    with SqliteSaver.from_conn_string(db) as saver, HistoryStore(history) as store:
        graph = build_graph(
            rubric(),
            generator=LogGenerator(Path(log)),
            judge=LogJudge(Path(log), crash_on),
            checkpointer=saver,
            store=store,
        )
        graph.invoke({"task": "write the guide"}, THREAD, durability="sync")  # type: ignore[arg-type]


if __name__ == "__main__":
    main(*sys.argv[1:5])
