"""The HTML report: content, escaping, the plot, diffs, and reading without writing."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop.errors import HistoryError, InputError, LoopNotFoundError
from gradeloop.history import _sql
from gradeloop.history.report import ReadOnlyHistory, render_report, write_report
from gradeloop.history.report._diff import MAX_CELLS, diff_ops
from gradeloop.history.report._html import CSP, Safe, el, esc, page
from tests.support.cli_helpers import cli
from tests.support.report_helpers import FixtureIds, build_history


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, FixtureIds]:
    db = tmp_path / "history.db"
    return db, build_history(db)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _overall(html: str) -> str:
    """The overall series of the (first) plot in ``html``."""
    start = html.index('class="series overall"')
    return html[start : html.index("</g>", start)]


def _section(html: str, ident: str) -> str:
    start = html.index(f'id="{ident}"')
    end = html.find("<section", start)
    return html[start : end if end != -1 else len(html)]


# -- escaping --------------------------------------------------------------------


def test_user_and_model_text_is_escaped(history: tuple[Path, FixtureIds]) -> None:
    db, ids = history
    html = render_report([ids.passed, ids.run_a], db=db)
    assert "<script" not in html.lower()  # the page itself has no script at all
    assert "onerror=" not in html.replace("onerror=&quot;", "")  # the attribute stays text
    assert "&lt;script&gt;window.__pwned = 1;" in html  # the draft's script, shown as text
    assert "Write a &lt;blurb&gt;" in html  # the task
    assert "Makes no false &lt;claims&gt;." in html  # a criterion's description
    assert "claims &lt;everything&gt;" in html  # the judge's issues


def test_esc_escapes_quotes_and_markup_but_keeps_safe_fragments() -> None:
    assert esc('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"
    assert esc(Safe("<b>ok</b>")) == "<b>ok</b>"
    assert el("td", "<i>", title='"x"') == '<td title="&quot;x&quot;">&lt;i&gt;</td>'
    assert el("input", disabled=True, value=None) == "<input disabled>"


def test_every_page_forbids_scripts_and_outside_requests() -> None:
    html = page("t", Safe("<p>x</p>"))
    assert f'content="{esc(CSP)}"' in html
    assert "default-src 'none'" in CSP and "script-src" not in CSP  # so no script may run


# -- what a loop shows -----------------------------------------------------------


def test_loop_section_has_task_settings_stop_reason_and_rounds(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    html = _section(render_report([ids.passed], db=db), f"loop-{ids.passed}")
    assert "Write a &lt;blurb&gt;" in html
    assert '<span class="stop-reason">passed</span>' in html
    assert "<th>max_rounds</th><td>3</td>" in html  # settings
    assert html.count('class="round"') == 3
    assert "Weak. &lt;script&gt;" in html  # the judge's reasoning
    assert "changes from round 1" in html and "changes from round 2" in html
    assert "changes from round 0" not in html


def test_matrix_marks_code_and_judge_keys_and_each_result(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    html = _section(render_report([ids.passed], db=db), f"loop-{ids.passed}")
    matrix = html[html.index('class="matrix"') :]
    assert 'data-source="code"' in matrix and "code: length" in matrix
    assert matrix.count('<span class="badge judge"') == 2
    rows = re.findall(r'<tr data-round="(\d)">(.*?)</tr>', matrix)
    assert [n for n, _ in rows] == ["1", "2", "3"]
    assert "✗ failed 4/7" in rows[0][1] and "✓ met 9/7" in rows[2][1]
    assert 'class="failed" title="' not in rows[2][1]


def test_a_failed_judge_round_is_shown_and_plotted_as_a_cross(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    html = _section(render_report([ids.judge_failed], db=db), f"loop-{ids.judge_failed}")
    assert "judge failed: invalid: the reply was not JSON" in html
    overall = _overall(html)
    assert overall.count('class="point"') == 2
    assert overall.count('class="point failed"') == 1


def test_plot_has_one_point_per_round_and_draws_thresholds(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    html = render_report([ids.passed, ids.stagnated], db=db)
    for loop_id, rounds in ((ids.passed, 3), (ids.stagnated, 3)):
        section = _section(html, f"loop-{loop_id}")
        overall = _overall(section)
        assert overall.count('class="point') == rounds
        assert [int(n) for n in re.findall(r'data-round="(\d+)"', overall)] == [1, 2, 3]
        assert section.count('class="threshold"') == 1  # the one scored key
        assert "persuasive threshold 7" in section
        assert 'class="pass-score"' in section and "pass score 7.5" in section


def test_no_pass_score_no_pass_score_line(tmp_path: Path) -> None:
    from gradeloop import HistoryStore, run_loop
    from tests.support.fakes import FakeGenerator, FakeJudge, verdict

    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        r = {"criteria": [{"key": "k", "description": "d", "scale": "score"}]}
        judge = FakeJudge(verdict(True, {}, [], {"k": 9}))
        loop_id = run_loop("t", r, generator=FakeGenerator(), judge=judge, store=store).loop_id
    html = render_report([loop_id], db=db)
    assert 'class="pass-score"' not in html
    assert "k threshold 7" in html  # the default threshold


def test_shadow_disagreements_are_listed(tmp_path: Path) -> None:
    from gradeloop import HistoryStore, run_loop
    from tests.support.fakes import FakeGenerator, FakeJudge, verdict

    db = tmp_path / "h.db"
    r = {
        "criteria": [
            {
                "key": "short",
                "description": "short",
                "checker": "length",
                "options": {"max_chars": 5},
                "shadow": "judge",
            },
        ]
    }
    with HistoryStore(db) as store:
        judge = FakeJudge(verdict(True, {"short": True}, [], reasoning="fine"))
        gen = FakeGenerator(["far too long a draft"])
        loop_id = run_loop("t", r, generator=gen, judge=judge, store=store, max_rounds=1).loop_id
    html = render_report([loop_id], db=db)
    shadows = html[html.index('class="shadows"') :]
    assert "length: failed" in shadows and "judge: met" in shadows


def test_grading_run_shows_drafts_by_keys(history: tuple[Path, FixtureIds]) -> None:
    db, ids = history
    html = _section(render_report([ids.run_a], db=db), f"run-{ids.run_a}")
    rows = re.findall(r'<tr data-item="(d\d)">(.*?)</tr>', html)
    assert [i for i, _ in rows] == ["d0", "d1", "d2"]
    assert "✓ met" in rows[0][1] and "✗ failed" in rows[1][1]
    assert "not graded: invalid: not JSON" in rows[2][1]
    assert "accepted</dt><dd>1 of 3" in html


def test_without_ids_the_report_holds_the_latest_loops_and_runs(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    html = render_report(db=db)
    for ident in (ids.passed, ids.judge_failed, ids.stagnated):
        assert f'id="loop-{ident}"' in html
    assert f'id="run-{ids.run_a}"' in html and f'id="run-{ids.run_b}"' in html
    assert render_report(db=db, limit=1).count('<section class="loop"') == 1


def test_ids_may_be_prefixes_and_unknown_ones_are_named(
    history: tuple[Path, FixtureIds],
) -> None:
    db, ids = history
    html = render_report([ids.passed[:9]], db=db)
    assert f'id="loop-{ids.passed}"' in html
    with pytest.raises(LoopNotFoundError, match="loop_nope"):
        render_report(["loop_nope"], db=db)
    with pytest.raises(LoopNotFoundError, match="ambiguous"):
        render_report(["loop_"], db=db)


# -- reading, never writing ------------------------------------------------------


def test_report_never_writes_the_database(history: tuple[Path, FixtureIds], tmp_path: Path) -> None:
    db, _ = history
    before = _digest(db)
    write_report(tmp_path / "r.html", db=db)
    assert _digest(db) == before


def test_the_reader_cannot_write(history: tuple[Path, FixtureIds]) -> None:
    db, _ = history
    with ReadOnlyHistory(db) as reader, pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader._conn.execute("DELETE FROM loops")


def test_a_read_only_file_can_be_reported(history: tuple[Path, FixtureIds], tmp_path: Path) -> None:
    db, ids = history
    db.chmod(0o444)
    try:
        assert ids.passed in render_report(db=db)
    finally:
        db.chmod(0o600)


def test_an_older_history_without_grading_runs_reads(tmp_path: Path) -> None:
    db = tmp_path / "v2.db"
    conn = sqlite3.connect(db)
    for migration in _sql.MIGRATIONS[:2]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    assert "holds no loops and no grading runs" in render_report(db=db)
    with ReadOnlyHistory(db) as reader:
        assert reader.runs() == []


def test_a_missing_or_foreign_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="history database file not found"):
        render_report(db=tmp_path / "none.db")
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite " * 100)
    with pytest.raises(HistoryError, match="not a readable history"):
        render_report(db=junk)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(HistoryError, match="not a gradeloop history"):
        render_report(db=other)


# -- diffs ------------------------------------------------------------------------


def test_diff_marks_removed_and_added_lines_with_context() -> None:
    old = "\n".join(f"line {i}" for i in range(20))
    new = old.replace("line 10", "line ten")
    ops = diff_ops(old, new)
    assert ("-", "line 10") in ops and ("+", "line ten") in ops
    assert ops[0] == ("@", "8 unchanged lines")
    assert ops[-1] == ("@", "7 unchanged lines")


lines = st.lists(st.sampled_from(["a", "b", "c", "", "a b"]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(lines, lines)
def test_diff_ops_rebuild_both_drafts(a: list[str], b: list[str]) -> None:
    ops = diff_ops("\n".join(a), "\n".join(b), context=None)
    assert [t for tag, t in ops if tag in " -"] == "\n".join(a).splitlines()
    assert [t for tag, t in ops if tag in " +"] == "\n".join(b).splitlines()


def test_diff_of_huge_unrelated_drafts_is_bounded() -> None:
    old = "\n".join(f"old {i}" for i in range(60_000))
    new = "\n".join(f"new {i}" for i in range(60_000))
    assert MAX_CELLS < 60_000 * 60_000
    start = time.perf_counter()
    ops = diff_ops(old, new, context=None)
    assert time.perf_counter() - start < 5  # quadratic would take hours
    assert len(ops) == 120_000


def test_diff_at_the_cap_of_repetitive_lines_is_bounded() -> None:
    n = int(MAX_CELLS**0.5)
    old = "\n".join("ab"[i % 2] for i in range(n))
    new = "\n".join("ba"[i % 2] * (i % 3 + 1) for i in range(n))
    start = time.perf_counter()
    diff_ops(old, new)
    assert time.perf_counter() - start < 10


# -- the command --------------------------------------------------------------------


def test_cli_report_writes_one_self_contained_file(
    history: tuple[Path, FixtureIds], tmp_path: Path
) -> None:
    db, ids = history
    out = tmp_path / "report.html"
    ran = cli("report", ids.passed, ids.run_b, "--db", str(db), "--html", str(out))
    assert ran.code == 0, ran.err
    html = out.read_text(encoding="utf-8")
    assert f'id="loop-{ids.passed}"' in html and f'id="run-{ids.run_b}"' in html
    # nothing to fetch: no external src/href, no stylesheet or script link
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<link" not in html


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["loop_nope"], "no loop or grading run id starts with 'loop_nope'"),
        (["--limit", "0"], "--limit must be at least 1"),
    ],
)
def test_cli_report_bad_input_exits_2(
    history: tuple[Path, FixtureIds], tmp_path: Path, args: list[str], message: str
) -> None:
    db, _ = history
    ran = cli("report", *args, "--db", str(db), "--html", str(tmp_path / "r.html"))
    assert ran.code == 2
    assert message in ran.err and len(ran.err.strip().splitlines()) == 1


def test_cli_report_without_a_database_exits_2(tmp_path: Path) -> None:
    ran = cli("report", "--db", str(tmp_path / "x.db"), "--html", str(tmp_path / "r.html"))
    assert ran.code == 2 and "history database file not found" in ran.err
    ran = cli("report", "--db", str(tmp_path / "x.db"))
    assert ran.code == 2 and "--html" in ran.err


def test_without_chromium_the_browser_tests_fail_with_an_install_hint(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a developer without Chromium must see the browser tests fail, not skip; pytest runs
    # in this process (a fresh one would spend seconds importing the SDK and langgraph)
    import sys

    from tests.support.cli_helpers import ROOT

    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # no chromium on it
    test = ROOT / "tests" / "history" / "test_browser.py"
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
        f"{test}::test_the_pages_policy_stops_a_script_that_escaped_escaping",
    )
    out = result.stdout.str()
    assert result.ret == 1, out
    hint = "browser tests need Chromium and its driver: apt-get install -y chromium chromium-driver"
    assert hint in out and "1 error" in out
    assert "skipped" not in out
