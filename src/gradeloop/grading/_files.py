"""Reading the user's files: one reader, bounded, with one-line errors that say what to fix.

Every file gradeloop reads on a user's say-so (rubrics, JSON schemas, drafts, tasks,
label files) goes through :func:`read_user_file`, which reads only what a file can hold:

* a regular file (a pipe too, where the caller allows it: ``--draft <(cmd)``); a
  device such as ``/dev/zero``, a socket or a directory is refused before it is
  opened, so nothing is read forever;
* at most ``limit`` bytes: a bigger file is refused with the limit in the message,
  and a pipe is never read past it.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

from ..errors import DraftSizeWarning, InputError, UnusableFileError

__all__ = [
    "DRAFT_WARN_CHARS",
    "RUBRIC_LIMIT",
    "TEXT_LIMIT",
    "describe_size",
    "read_user_file",
    "read_utf8",
    "warn_if_large",
]

MiB = 1024 * 1024
#: The largest rubric file read: far above any real rubric, anchors and examples included.
RUBRIC_LIMIT = 4 * MiB
#: The largest draft, task or label file.
TEXT_LIMIT = 256 * MiB
#: A draft longer than this (characters) draws a DraftSizeWarning: it is graded, but
#: LLM output this long is rarely meant, checkers take seconds and a judge reads it all.
DRAFT_WARN_CHARS = 1_000_000


def warn_if_large(draft: object) -> None:
    """A :class:`~gradeloop.errors.DraftSizeWarning` for a draft past DRAFT_WARN_CHARS."""
    if isinstance(draft, str) and len(draft) > DRAFT_WARN_CHARS:
        warnings.warn(
            f"the draft is {len(draft):,} characters long, more than the "
            f"{DRAFT_WARN_CHARS:,} gradeloop expects; it is graded, but slowly, and a "
            "judge reads (and bills) all of it",
            DraftSizeWarning,
            stacklevel=4,
        )


def describe_size(n: int) -> str:
    """``n`` bytes as a person reads it: ``"512 bytes"``, ``"4 MiB"``, ``"1.5 GiB"``."""
    if n < 1024:
        return f"{n} bytes"
    size, units = n / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while size >= 1024 and len(units) > 1:
        size, units = size / 1024, units[1:]
    return f"{size:.1f}".removesuffix(".0") + f" {units[0]}"


def read_user_file(
    path: str | Path, *, what: str = "file", limit: int = TEXT_LIMIT, pipes: bool = False
) -> bytes:
    """The bytes of the user's file ``path``, refusing what cannot be read safely.

    For a checker that reads a file named in its options, as the built-in
    ``json_schema`` does with ``schema_file``; ``what`` names the file in errors.

    Raises :class:`~gradeloop.errors.UnusableFileError` for a path that is not a
    regular file (nor a pipe, when ``pipes``), holds a NUL byte, or a file larger than
    ``limit`` bytes; ``FileNotFoundError``, ``IsADirectoryError`` and
    ``PermissionError`` (other ``OSError`` too) as :func:`open` would.
    """
    try:
        mode = os.stat(path).st_mode
    except ValueError:  # os.stat's "embedded null byte"
        raise UnusableFileError(path, "has a NUL byte in its name", what=what) from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    if not (stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode))):
        raise UnusableFileError(path, f"is {_kind(mode)}, not a regular file", what=what)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size if stat.S_ISREG(mode) else 0
        if size > limit:
            raise _too_big(path, what, limit, describe_size(size))
        data = fh.read(limit + 1)  # never past the limit, whatever the file does
    if len(data) > limit:
        raise _too_big(path, what, limit, f"more than {describe_size(limit)}")
    return data


def _too_big(path: str | Path, what: str, limit: int, size: str) -> UnusableFileError:
    return UnusableFileError(
        path, f"is {size}; a {what} file may be at most {describe_size(limit)}", what=what
    )


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def read_utf8(path: str | Path, what: str, *, limit: int = TEXT_LIMIT) -> str:
    """The text of ``path``; ``what`` names the file in the error ("draft", "labels").

    A pipe is read too (``--draft <(cmd)``), never past ``limit`` bytes.
    """
    try:
        return read_user_file(path, limit=limit, what=what, pipes=True).decode("utf-8")
    except UnusableFileError:
        raise
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}; check the path") from None
    except IsADirectoryError:
        raise InputError(f"{what} path is a directory, not a file: {path}") from None
    except PermissionError:
        raise InputError(f"{what} file is not readable: {path}") from None
    except OSError as exc:
        raise InputError(f"{what} file cannot be read: {path} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} file is not UTF-8 text: {path} (byte {exc.start}); save it as UTF-8"
        ) from None
