"""Reading the user's files, with one-line errors that say what to fix."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError


def read_utf8(path: str | Path, what: str) -> str:
    """The text of ``path``; ``what`` names the file in the error ("draft", "labels")."""
    try:
        return Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{what} path is a directory, not a file: {path}") from None
    except PermissionError:
        raise InputError(f"{what} file is not readable: {path}") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} file is not UTF-8 text: {path} (byte {exc.start}); save it as UTF-8"
        ) from None
