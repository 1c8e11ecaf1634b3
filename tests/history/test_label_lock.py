"""One `gradeloop label` session per labels file, tried with real processes.

A second session on a file another one is labelling would rewrite the file from its
own marks and lose the first one's: it is refused (exit 2, one line naming the
holder), and every mark the first one saved stays. When the first ends - Ctrl-C, or
killed outright - the file can be labelled again, resuming its marks.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest

from gradeloop.errors import InputError
from gradeloop.history.report._label import LabelSession
from gradeloop.migration._evidence import stored_run
from tests.history.test_label import make_run
from tests.support.cli_helpers import ROOT, gradeloop


@contextmanager
def session(db: Path, run: str, out: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``gradeloop label`` running in its own process, and its page's address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradeloop", "label", run, "--db", str(db), "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line
        yield proc, found.group(0)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


def mark(url: str, item: int, value: str) -> int:
    """Mark draft ``item``'s ``cites`` through the page, as its script does."""
    port = int(url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", f"/item/{item}", headers={"Host": f"127.0.0.1:{port}"})
    page = conn.getresponse().read().decode()
    token = re.search(r'name="label-token" content="([^"]+)"', page)
    assert token is not None
    body = urlencode({"token": token.group(1), "item": item, "key": "cites", "value": value})
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
    }
    conn.request("POST", "/label", body=body, headers=headers)
    status = conn.getresponse().status
    conn.close()
    return status


def test_a_second_session_on_the_file_is_refused_and_no_mark_is_lost(tmp_path: Path) -> None:
    db, out = tmp_path / "h.db", tmp_path / "labels.jsonl"
    run = make_run(db)
    with session(db, run, out) as (first, url):
        assert mark(url, 1, "met") == 200
        second = gradeloop("label", run, "--db", str(db), "--out", str(out))
        assert second.code == 2
        [line] = second.err.strip().splitlines()  # one line, naming who holds the file
        assert "is being labelled by another session" in line
        assert f"pid {first.pid}" in line and url in line
        assert mark(url, 3, "unmet") == 200  # the first goes on, unharmed
        first.send_signal(signal.SIGINT)
        assert first.wait(30) == 0
    saved = out.read_text()
    assert '"cites": true' in saved and '"cites": false' in saved
    # ended: the file is free again, and resumed (both marks still there)
    with session(db, run, out) as (third, url):
        assert mark(url, 2, "met") == 200
        third.send_signal(signal.SIGKILL)  # killed outright: the system drops the lock
        third.wait(10)
    with session(db, run, out) as (_, url):
        assert mark(url, 2, "unmet") == 200
    assert out.read_text().count('"cites"') == 3


def test_another_file_is_not_locked_and_a_closed_session_frees_its_own(tmp_path: Path) -> None:
    from gradeloop import HistoryStore

    db = tmp_path / "h.db"
    run = make_run(db)
    with HistoryStore(db) as store:
        source = stored_run(store, run)
    with LabelSession(source, tmp_path / "a.jsonl") as first:
        with LabelSession(source, tmp_path / "b.jsonl"):  # another file: no conflict
            pass
        with pytest.raises(InputError, match="is being labelled by another session"):
            LabelSession(source, first.out)
    with LabelSession(source, tmp_path / "a.jsonl"):  # closed: free again
        pass
