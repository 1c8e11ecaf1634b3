"""The local viewer: loopback only, read-only, its pages, filters and refusals."""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from gradeloop.errors import InputError
from gradeloop.history.report import Viewer
from tests.support.cli_helpers import ROOT
from tests.support.report_helpers import FixtureIds, build_history


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, FixtureIds]:
    db = tmp_path / "history.db"
    return db, build_history(db)


@pytest.fixture
def viewer(history: tuple[Path, FixtureIds]) -> Iterator[Viewer]:
    with Viewer(history[0]).start() as v:
        yield v


def get(
    v: Viewer, target: str, *, method: str = "GET", host: str | None = None
) -> tuple[int, str, dict[str, str]]:
    port = int(v.url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Host": host} if host is not None else {}
        conn.request(method, target, headers=headers)
        response = conn.getresponse()
        body = response.read().decode("utf-8")
        return response.status, body, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def loops_listed(page: str) -> list[str]:
    return re.findall(r'<tr class="loop-row" data-loop="([^"]+)"', page)


def test_binds_to_loopback_only(viewer: Viewer) -> None:
    assert viewer._server.server_address[0] == "127.0.0.1"
    assert viewer.url.startswith("http://127.0.0.1:")


def test_the_list_shows_every_loop_and_run(
    viewer: Viewer, history: tuple[Path, FixtureIds]
) -> None:
    _, ids = history
    status, page, headers = get(viewer, "/")
    assert status == 200
    assert sorted(loops_listed(page)) == sorted([ids.passed, ids.judge_failed, ids.stagnated])
    assert f'data-run="{ids.run_a}"' in page and f'data-run="{ids.run_b}"' in page
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"passed": "yes"}, ["passed"]),
        ({"passed": "no"}, ["judge_failed", "stagnated"]),
        ({"stop": "stagnation"}, ["stagnated"]),
        ({"stop": "passed", "passed": "no"}, []),
        ({"rubric": "demo"}, ["passed", "judge_failed"]),
        ({"rubric": "short, persuasive, accurate"}, ["stagnated"]),
        ({"since": "2000-01-01", "until": "2999-12-31"}, ["passed", "judge_failed", "stagnated"]),
        ({"until": "2000-01-01"}, []),
        ({"since": "2999-01-01"}, []),
    ],
)
def test_filters(
    viewer: Viewer, history: tuple[Path, FixtureIds], query: dict[str, str], expected: list[str]
) -> None:
    _, ids = history
    status, page, _ = get(viewer, "/?" + urlencode(query))
    assert status == 200
    assert sorted(loops_listed(page)) == sorted(getattr(ids, name) for name in expected)


def test_filter_menus_offer_what_is_recorded(viewer: Viewer) -> None:
    _, page, _ = get(viewer, "/?stop=stagnation")
    assert '<option value="stagnation" selected>stagnation</option>' in page
    assert '<option value="evaluator_failed">' in page or 'value="max_rounds"' in page
    assert '<option value="demo">demo</option>' in page


def test_a_bad_date_is_a_400_naming_it(viewer: Viewer) -> None:
    status, page, _ = get(viewer, "/?since=yesterday")
    assert status == 400 and "since must be a date like 2026-01-31" in page


def test_loop_and_run_pages(viewer: Viewer, history: tuple[Path, FixtureIds]) -> None:
    _, ids = history
    status, page, _ = get(viewer, f"/loop/{ids.passed}")
    assert status == 200 and f'id="loop-{ids.passed}"' in page
    assert "&lt;script&gt;" in page and "<script" not in page
    status, page, _ = get(viewer, f"/run/{ids.run_a}")
    assert status == 200 and 'data-item="d1"' in page
    status, page, _ = get(viewer, "/loop/loop_nope")
    assert status == 404 and "no loop &#x27;loop_nope&#x27;" in page
    assert get(viewer, "/nowhere")[0] == 404


def test_compare_two_loops_marks_changed_keys(
    viewer: Viewer, history: tuple[Path, FixtureIds]
) -> None:
    _, ids = history
    status, page, _ = get(viewer, f"/compare?a={ids.passed}&b={ids.stagnated}")
    assert status == 200
    changed = re.findall(r'<tr class="changed key" data-key="([^"]+)"', page)
    same = re.findall(r'<tr class="key" data-key="([^"]+)"', page)
    assert sorted(changed) == ["accurate", "persuasive"] and same == ["short"]
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') == 2


def test_compare_two_runs_names_the_drafts_that_changed(
    viewer: Viewer, history: tuple[Path, FixtureIds]
) -> None:
    _, ids = history
    status, page, _ = get(viewer, f"/compare?a={ids.run_a}&b={ids.run_b}")
    assert status == 200
    rows = dict(re.findall(r'data-key="([^"]+)">(.*?)</tr>', page))
    assert "d1" in rows["accurate"] and 'class="changed key"' in page
    assert "<td>-</td>" in rows["short"]  # nothing changed there


def test_compare_refuses_a_loop_against_a_run(
    viewer: Viewer, history: tuple[Path, FixtureIds]
) -> None:
    _, ids = history
    status, page, _ = get(viewer, f"/compare?a={ids.passed}&b={ids.run_a}")
    assert status == 400 and "not one of each" in page
    assert get(viewer, "/compare?a=&b=")[0] == 400


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_only_reads_are_answered(viewer: Viewer, method: str) -> None:
    status, _, headers = get(viewer, "/", method=method)
    assert status == 405 and headers["allow"] == "GET, HEAD"


def test_head_has_no_body(viewer: Viewer) -> None:
    status, body, headers = get(viewer, "/", method="HEAD")
    assert status == 200 and body == "" and int(headers["content-length"]) > 0


@pytest.mark.parametrize("host", ["evil.example:80", "127.0.0.1:1", "attacker.test"])
def test_a_foreign_host_header_is_refused(viewer: Viewer, host: str) -> None:
    status, page, _ = get(viewer, "/", host=host)
    assert status == 421 and "loop-row" not in page


def test_localhost_is_accepted(viewer: Viewer) -> None:
    port = viewer.url.rsplit(":", 1)[1].strip("/")
    assert get(viewer, "/", host=f"localhost:{port}")[0] == 200


def test_pages_never_write_the_database(history: tuple[Path, FixtureIds]) -> None:
    db, ids = history
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with Viewer(db).start() as v:
        for target in (
            "/",
            f"/loop/{ids.passed}",
            f"/run/{ids.run_a}",
            "/?passed=yes",
            f"/compare?a={ids.run_a}&b={ids.run_b}",
        ):
            assert get(v, target)[0] == 200
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_pages_show_what_was_written_after_start(history: tuple[Path, FixtureIds]) -> None:
    from gradeloop import HistoryStore, run_loop
    from tests.support.fakes import FakeGenerator, FakeJudge, verdict

    db, _ = history
    with Viewer(db).start() as v:
        with HistoryStore(db) as store:
            judge = FakeJudge(verdict(True, {"accurate": True}, [], {"persuasive": 9}))
            from tests.support.report_helpers import rubric

            new = run_loop("late", rubric(), generator=FakeGenerator(), judge=judge, store=store)
        assert new.loop_id in loops_listed(get(v, "/")[1])


def test_a_missing_database_or_bad_port_fails_before_listening(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="history database file not found"):
        Viewer(tmp_path / "none.db")
    db = tmp_path / "h.db"
    build_history(db)
    with pytest.raises(InputError, match="--port must be from 0 to 65535"):
        Viewer(db, port=70000)


def test_cli_view_prints_the_url_serves_and_stops_on_ctrl_c(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradeloop", "view", "--db", str(db), "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert url, line
        conn = http.client.HTTPConnection("127.0.0.1", int(url.group(1)), timeout=30)
        conn.request("GET", f"/loop/{quote(ids.passed)}")
        assert conn.getresponse().status == 200
        conn.close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_cli_view_on_a_busy_port_exits_2(history: tuple[Path, FixtureIds]) -> None:
    from tests.support.cli_helpers import cli

    db, _ = history
    with Viewer(db).start() as v:
        port = v.url.rsplit(":", 1)[1].strip("/")
        ran = cli("view", "--db", str(db), "--port", port)
    assert ran.code == 2 and f"cannot listen on 127.0.0.1:{port}" in ran.err


def test_a_long_list_says_it_is_cut(viewer: Viewer, monkeypatch: pytest.MonkeyPatch) -> None:
    from gradeloop.history.report import _pages

    monkeypatch.setattr(_pages, "LIST_LIMIT", 2)
    _, page, _ = get(viewer, "/")
    assert len(loops_listed(page)) == 2 and "the 2 newest shown" in page
    monkeypatch.setattr(_pages, "LIST_LIMIT", 3)
    _, page, _ = get(viewer, "/")
    assert len(loops_listed(page)) == 3 and "newest shown" not in page


def test_view_without_port_moves_off_a_taken_default_and_says_so(
    history: tuple[Path, FixtureIds], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import argparse

    from gradeloop.cli import _view

    db, _ = history
    with Viewer(db).start() as taken:
        port = int(taken.url.rsplit(":", 1)[1].strip("/"))
        monkeypatch.setattr(_view, "DEFAULT_PORT", port)
        viewer = _view._viewer(argparse.Namespace(db=str(db), port=None, verbose=False))
        try:
            assert not viewer.url.endswith(f":{port}/")  # another, free port
        finally:
            viewer.shutdown()
        assert f"port {port} is taken; using a free one" in capsys.readouterr().err
        from tests.support.cli_helpers import cli

        ran = cli("view", "--db", str(db), "--port", str(port))  # asked for: an error
        assert ran.code == 2 and "give another --port, or --port 0 for a free one" in ran.err
