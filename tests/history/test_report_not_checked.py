"""The README's first command records a grading run with keys not checked (no overall
score): `report --html` writes it and the viewer serves its pages."""

from __future__ import annotations

import re
from pathlib import Path

from gradeloop.history.report import Viewer
from gradeloop.history.report._cells import overall_cell
from tests.history.test_view import get
from tests.support.cli_helpers import EXAMPLE, cli


def test_readme_first_command_then_report_and_view(gradeloop_home: Path, tmp_path: Path) -> None:
    draft, rubric = str(EXAMPLE / "draft.md"), str(EXAMPLE / "rubric.toml")
    ran = cli("grade", draft, "--rubric", rubric, "--code-only")  # the README's first
    assert ran.code == 1, ran.err
    out = tmp_path / "report.html"
    ran = cli("report", "--html", str(out))
    assert ran.code == 0, ran.err
    page = out.read_text()
    assert "not computed" in page and "0.00" not in page
    with Viewer(gradeloop_home / "history.db").start() as v:
        status, index, _ = get(v, "/")
        assert status == 200
        [run] = re.findall(r'data-run="([^"]+)"', index)
        status, page, _ = get(v, f"/run/{run}")
        assert status == 200 and "not computed" in page
        status, page, _ = get(v, f"/compare?a={run}&b={run}")
        assert status == 200


def test_the_overall_cell_shows_a_stored_score_or_says_there_is_none() -> None:
    assert "7.50 ✓" in overall_cell({"overall_score": 7.5, "passed": True})
    assert ">6.00<" in overall_cell({"overall_score": 6, "passed": False})
    for stored in (None, "7", True, float("nan")):
        assert "not computed" in overall_cell({"overall_score": stored, "passed": False})
    assert "not computed" in overall_cell({})
