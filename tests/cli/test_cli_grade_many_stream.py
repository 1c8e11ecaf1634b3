"""`grade --drafts` writes each draft out as it is graded: a run killed half way leaves
its finished drafts in stdout (--json) and in the history, and Ctrl-C shows them.

The real command runs in its own process against the emulator, whose judge answers
the first drafts and then hangs on the next one until the process is stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from gradeloop import HistoryStore
from gradeloop.testing import verdict_reply
from tests.support.cli_helpers import ROOT, cli
from tests.support.emulator import Emulator, http_error

RUBRIC = '[[criteria]]\nkey = "tone"\ndescription = "Polite."\n'
DRAFTS = [{"id": f"d{n}", "task": "t", "draft": f"draft number {n}"} for n in range(1, 5)]


class Judge:
    """Answers met for the first ``answers`` requests, then hangs until released."""

    def __init__(self, answers: int) -> None:
        self.answers, self.asked = answers, 0
        self.release = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Any:
        self.asked += 1
        if self.asked > self.answers:
            self.release.wait(30)
        return verdict_reply(
            {"reasoning": "ok", "criteria_met": {"tone": True}, "passed": True, "issues": []}
        )


def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    rubric, drafts = tmp_path / "r.toml", tmp_path / "d.jsonl"
    rubric.write_text(RUBRIC)
    drafts.write_text("".join(json.dumps(d) + "\n" for d in DRAFTS))
    return rubric, drafts, tmp_path / "h.db"


def stopped(emulator: Emulator, tmp_path: Path, sig: int, *extra: str) -> tuple[int, str, str]:
    """Run `grade --drafts` one draft at a time, stop it with ``sig`` while the third
    hangs in the judge; its exit code, stdout and stderr."""
    judge = Judge(answers=2)
    emulator.responder = judge
    rubric, drafts, db = files(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    args = ["grade", "--drafts", str(drafts), "--rubric", str(rubric), "--jobs", "1",
            "--base-url", emulator.base_url, "--db", str(db), "--quiet", *extra]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradeloop", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while judge.asked < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert judge.asked == 3
        time.sleep(0.3)  # the third request is in the judge: the first two are done
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        judge.release.set()
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def recorded(db: Path) -> list[str]:
    with HistoryStore(db) as store:
        [run] = store.list_grading_runs()
        return [d["item_id"] for d in store.grading_run(run.run_id)["drafts"]]


def test_a_killed_run_leaves_its_finished_drafts_in_stdout_and_history(
    emulator: Emulator, tmp_path: Path
) -> None:
    code, out, _ = stopped(emulator, tmp_path, signal.SIGKILL, "--json")
    assert code == -signal.SIGKILL
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["id"] for x in lines] == ["d1", "d2"] and all(x["passed"] for x in lines)
    assert recorded(tmp_path / "h.db") == ["d1", "d2"]


def test_ctrl_c_shows_what_was_graded_and_where_it_is_kept(
    emulator: Emulator, tmp_path: Path
) -> None:
    code, out, err = stopped(emulator, tmp_path, signal.SIGINT)
    assert code == 130 and "Traceback" not in err
    assert "d1" in out and "d2" in out and "d3" not in out  # the table of what was done
    assert "stopped after 2 of 4 drafts; recorded as grading run grade_" in err
    assert recorded(tmp_path / "h.db") == ["d1", "d2"]


def test_a_whole_run_is_recorded_and_printed_in_input_order(
    emulator: Emulator, tmp_path: Path
) -> None:
    emulator.responder = Judge(answers=len(DRAFTS))
    rubric, drafts, db = files(tmp_path)
    ran = cli("grade", "--drafts", str(drafts), "--rubric", str(rubric), "--jobs", "3",
              "--base-url", emulator.base_url, "--db", str(db), "--json")  # fmt: skip
    assert ran.code == 0
    assert [json.loads(x)["id"] for x in ran.out.splitlines()] == ["d1", "d2", "d3", "d4"]
    assert recorded(db) == ["d1", "d2", "d3", "d4"]


def test_a_server_that_is_not_there_records_nothing_and_prints_one_line(
    emulator: Emulator, tmp_path: Path
) -> None:
    emulator.responder = lambda body: http_error(500, "down", **{"x-should-retry": "false"})
    rubric, drafts, db = files(tmp_path)
    ran = cli("grade", "--drafts", str(drafts), "--rubric", str(rubric), "--no-cache",
              "--base-url", emulator.base_url, "--db", str(db), "--json")  # fmt: skip
    assert ran.code == 2 and ran.out == ""
    assert "the judge failed on every draft" in ran.err
    with HistoryStore(db) as store:
        assert store.list_grading_runs() == []
