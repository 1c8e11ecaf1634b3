"""Where gradeloop keeps its files."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from gradeloop.history import _paths
from gradeloop.history._paths import default_history_path, gradeloop_home, user_data_dir

HOME = Path("/home/ada")


def test_gradeloop_home_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADELOOP_HOME", str(tmp_path / "gl"))
    assert gradeloop_home() == tmp_path / "gl"
    assert default_history_path() == tmp_path / "gl" / "history.db"


def test_gradeloop_home_expands_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADELOOP_HOME", "~/gl")
    assert gradeloop_home() == Path.home() / "gl"


@pytest.mark.parametrize("value", [None, ""])
def test_gradeloop_home_unset_or_empty_uses_data_dir(
    value: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if value is None:
        monkeypatch.delenv("GRADELOOP_HOME")
    else:
        monkeypatch.setenv("GRADELOOP_HOME", value)
    monkeypatch.setattr("gradeloop.history._paths.sys.platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert gradeloop_home() == tmp_path / "xdg" / "gradeloop"
    assert default_history_path() == tmp_path / "xdg" / "gradeloop" / "history.db"


def test_linux_uses_xdg_data_home() -> None:
    env = {"XDG_DATA_HOME": "/data/ada"}
    assert user_data_dir("linux", env, HOME) == Path("/data/ada")


@pytest.mark.parametrize("env", [{}, {"XDG_DATA_HOME": ""}, {"XDG_DATA_HOME": "relative/dir"}])
def test_linux_falls_back_to_local_share(env: dict[str, str]) -> None:
    # A relative XDG_DATA_HOME is invalid per the XDG spec and ignored.
    assert user_data_dir("linux", env, HOME) == HOME / ".local" / "share"


def test_macos_uses_application_support() -> None:
    env = {"XDG_DATA_HOME": "/data/ada"}  # ignored on macOS
    assert user_data_dir("darwin", env, HOME) == HOME / "Library" / "Application Support"


def test_windows_uses_localappdata() -> None:
    env = {"LOCALAPPDATA": "C:/Users/ada/AppData/Local"}
    assert user_data_dir("win32", env, HOME) == Path("C:/Users/ada/AppData/Local")


def test_windows_without_localappdata_falls_back_under_home() -> None:
    assert user_data_dir("win32", {}, HOME) == HOME / "AppData" / "Local"


def test_nothing_is_created_on_import_or_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "not-yet"
    monkeypatch.setenv("GRADELOOP_HOME", str(target))
    importlib.reload(_paths)
    assert _paths.default_history_path() == target / "history.db"
    assert not target.exists()
