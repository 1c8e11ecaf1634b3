"""The kept scan of installed ``gradeloop`` entry points: scanned once while nothing
changes, and a plugin installed while the process runs is still found."""

from __future__ import annotations

import os
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from gradeloop.grading import Registry
from gradeloop.grading._entry_points import forget_entry_points, gradeloop_entry_points
from tests.support.plugin_dists import GOOD, make_dist

LONG_AGO = time.time() - 3600


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A path entry that has not changed for an hour: a scan of it is kept."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    os.utime(root, (LONG_AGO, LONG_AGO))
    return root


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each real scan of installed distributions, as it happens."""
    done: list[str] = []
    real = metadata.entry_points

    def counted(**kwargs: Any) -> Any:
        done.append(kwargs.get("group", ""))
        return real(**kwargs)

    monkeypatch.setattr(metadata, "entry_points", counted)
    return done


def names() -> set[str]:
    return {ep.name for ep in gradeloop_entry_points()}


def test_while_nothing_changes_the_installed_plugins_are_scanned_once(
    site: Path, scans: list[str]
) -> None:
    assert "builtin" in names()
    for _ in range(3):
        assert "code_runs" in Registry()  # a registry made anew: each CLI command, each test
    assert names() == {"builtin"}
    assert scans == ["gradeloop"]


def test_a_changed_sys_path_is_scanned_again(
    site: Path, tmp_path: Path, scans: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    names()
    other = make_dist(tmp_path / "other", "gradeloop-shouty", {"shouty": GOOD})
    monkeypatch.syspath_prepend(str(other))
    assert "shouty" in names()
    assert len(scans) == 2


def test_a_plugin_installed_into_a_scanned_path_entry_is_found(site: Path) -> None:
    assert "shouty" not in names()
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})  # a new *.dist-info in `site`
    assert "shouty" in names()
    assert Registry().info("shouty").plugin == "shouty"


def test_a_change_no_path_entry_shows_needs_forget_entry_points(site: Path) -> None:
    # the twin of the test above: the same install with the path entry's time put back
    # (as when a dist-info's entry_points.txt is edited in place) is not seen by the
    # kept scan until it is forgotten
    assert "shouty" not in names()
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    os.utime(site, (LONG_AGO, LONG_AGO))
    assert "shouty" not in names()
    forget_entry_points()
    assert "shouty" in names()
