"""The installed ``gradeloop`` entry points, scanned once while nothing changes.

``importlib.metadata.entry_points()`` reads every installed distribution's metadata:
about 9 ms, paid by every registry that loads (each CLI command, each test) and by
each plugin name looked up. The scan is kept while what it depends on is unchanged:
``sys.path``, ``sys.meta_path`` (its finders), and the modification time of each
path entry. Installing or removing a distribution adds or removes a ``*.dist-info``
folder in a path entry, which changes that entry's modification time, so a plugin
installed while the process runs is found by the next load.

The kept scan is as fresh as ``importlib.metadata``'s own caches, which key each
path entry's listing on the same modification time. What changes no path entry --
a distribution's ``entry_points.txt`` edited in place -- is seen after
:func:`forget_entry_points` (which also clears ``importlib``'s caches).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from importlib import metadata

__all__ = ["ENTRY_POINT_GROUP", "forget_entry_points", "gradeloop_entry_points"]

ENTRY_POINT_GROUP = "gradeloop"

_lock = threading.Lock()
_kept: tuple[object, tuple[metadata.EntryPoint, ...]] | None = None


def gradeloop_entry_points() -> tuple[metadata.EntryPoint, ...]:
    """The entry points of the ``gradeloop`` group, from the kept scan when still valid."""
    global _kept
    key = _fingerprint()
    with _lock:
        kept = _kept
    if kept is not None and kept[0] == key:
        return kept[1]
    points = tuple(metadata.entry_points(group=ENTRY_POINT_GROUP))
    with _lock:
        _kept = (key, points)
    return points


def forget_entry_points() -> None:
    """Drop the kept scan (and ``importlib``'s caches): the next
    :func:`gradeloop_entry_points` reads every installed distribution again."""
    global _kept
    with _lock:
        _kept = None
    importlib.invalidate_caches()
    # Python 3.11's invalidate_caches() leaves importlib.metadata's listings (3.12 clears them)
    metadata.MetadataPathFinder().invalidate_caches()  # 3.11: a method, 3.12: a classmethod


def _fingerprint() -> object:
    """What the scan depends on: the path, its entries' times, the finders."""
    stamps: list[tuple[object, int | None]] = []
    for entry in list(sys.path):
        try:
            mtime: int | None = os.stat(entry or ".").st_mtime_ns
        except (OSError, TypeError, ValueError):
            mtime = None  # gone, or not a path: nothing to read there
        stamps.append((entry, mtime))
    return tuple(stamps), tuple(id(finder) for finder in sys.meta_path)
