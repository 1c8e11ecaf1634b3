"""Where gradeloop keeps its files.

Nothing here creates a directory: importing gradeloop must not touch the disk. The
history store creates its folder when it first opens a database there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["default_history_path", "gradeloop_home"]

_APP = "gradeloop"


def gradeloop_home() -> Path:
    """The folder gradeloop stores its data in.

    ``$GRADELOOP_HOME`` when set (and not empty); otherwise the user's data
    directory: ``$XDG_DATA_HOME/gradeloop`` or ``~/.local/share/gradeloop`` on Linux
    and other Unixes, ``~/Library/Application Support/gradeloop`` on macOS,
    ``%LOCALAPPDATA%\\gradeloop`` on Windows. The folder may not exist yet.
    """
    override = os.environ.get("GRADELOOP_HOME", "")
    if override:
        return Path(override).expanduser()
    return user_data_dir(sys.platform, os.environ, Path.home()) / _APP


def default_history_path() -> Path:
    """The history database used when no path is given: ``gradeloop_home() / "history.db"``."""
    return gradeloop_home() / "history.db"


def user_data_dir(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    """The per-user data directory for ``platform`` (a ``sys.platform`` value).

    Takes the platform, environment and home folder as arguments so that every
    branch can be tested on any machine.
    """
    if platform == "win32":
        local = environ.get("LOCALAPPDATA", "")
        return Path(local) if local else home / "AppData" / "Local"
    if platform == "darwin":
        return home / "Library" / "Application Support"
    xdg = environ.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg)
    return home / ".local" / "share"
