"""One labelling session per labels file: a lock held for the session's life.

Two sessions on one file would each rewrite it whole from their own marks, and each
would lose the other's (a mark the page reported as saved, gone). So a session holds
an exclusive lock on ``<file>.lock`` from start to end: an operating-system lock
(``flock``, or ``msvcrt.locking`` on Windows) on a file it keeps open, released when
the session ends, however it ends (Ctrl-C, a crash, ``kill -9``: the system drops the
lock with the process). The lock file says who holds it (process, host, start time
and, once the page is up, its address), so a second session can say so.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from pathlib import Path

from ...errors import InputError

__all__ = ["FileLock"]

_AT = 1 << 30  # the byte locked on Windows, past anything written: the note stays readable


class FileLock:
    """An exclusive lock on ``<path>.lock``, taken at once or refused naming its holder."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".lock")
        self._fd: int | None = None
        while self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            if not _try_lock(fd):
                note = _read(fd)
                os.close(fd)
                raise InputError(
                    f"--out {path} is being labelled by another session ({note or 'no note'}); "
                    "labels from two sessions would overwrite each other: go on in that "
                    "one, end it (Ctrl-C), or give another --out"
                )
            if _same_file(fd, self.path):
                self._fd = fd
            else:  # the holder removed it as we opened it: lock the new one
                os.close(fd)
        self.note(None)

    def note(self, url: str | None) -> None:
        """Say in the lock file who holds it (and where its page is, once it is up)."""
        if self._fd is None:
            return
        started = time.strftime("%H:%M:%S", time.localtime())
        text = f"pid {os.getpid()} on {socket.gethostname()}, since {started}"
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, (text + (f", at {url}" if url else "")).encode())

    def release(self) -> None:
        """Let another session take the file (removing the lock file first, so a
        session waiting on it sees a new one). Releasing twice is harmless."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            with contextlib.suppress(OSError):  # Windows keeps an open file: left there
                self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)  # closing drops the lock


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def _read(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 300).decode("utf-8", "replace").strip()
    except OSError:
        return ""


if sys.platform == "win32":  # pragma: no cover - the suite runs on Linux and macOS
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, _AT, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True
