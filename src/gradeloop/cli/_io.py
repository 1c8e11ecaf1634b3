"""Reading what the user gave, and writing results."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..errors import InputError
from ..grading._files import read_utf8
from ..grading._jsonout import dumps
from ..grading._transcript import Transcript, loads, looks_like_messages
from ._draft_json import as_text_hint, refuse_broken_messages, refuse_message_like


def read_text(path: str, what: str) -> str:
    """Read a UTF-8 file (``-`` is stdin), or raise a one-line InputError."""
    if path == "-":
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{what} from stdin is not UTF-8 text") from None
    return read_utf8(path, what)


def read_draft(path: str, what: str) -> str | Transcript:
    """A draft (or reference) file: its text, or an agent's transcript when it is a
    ``.json`` file holding a message list or ``{"messages": [...]}``.

    A list of messages of any shape a :class:`~gradeloop.Transcript` reads (a
    ``role``, a Responses item, a LangChain message dict) is a transcript. Any other
    ``.json`` file (an object, invalid JSON) is text, for the JSON checkers; a message
    list that cannot be read is an error naming the message, and so is JSON meant as
    messages that is not a transcript (see :mod:`._draft_json`).
    """
    text = read_text(path, what)
    if not path.lower().endswith(".json"):
        return text
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        refuse_broken_messages(path, text, exc)  # the CLI's decision (issue 40)
        return text
    if looks_like_messages(data):  # read strictly: a key written twice is an error
        try:
            return loads(text, source=path)
        except InputError as exc:
            raise InputError(f"{exc}; {as_text_hint(path)}") from None
    refuse_message_like(path, data)  # meant as messages, not read as them: an error
    return text


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db FILE``: the history database, for every command that reads or writes it."""
    parser.add_argument(
        "--db", metavar="FILE", help="history database (default: $GRADELOOP_HOME/history.db)"
    )


def read_task(task: str | None, task_file: str | None) -> str:
    """The task from ``--task`` or ``--task-file`` (they exclude each other)."""
    if task is not None and task_file is not None:
        raise InputError("give --task or --task-file, not both")
    if task_file is not None:
        return read_text(task_file, "task").strip()
    return (task or "").strip()


def print_json(data: Any) -> None:
    sys.stdout.write(dumps(data, indent=2, ensure_ascii=False) + "\n")


# Every C0 and C1 control character but newline and tab, and DEL, shown as an escape:
# printed raw, one from a draft, a task or a judge's issue could drive the terminal
# (move the cursor, retitle the window, make a link of an OSC-8 sequence).
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A)}


def terminal_safe(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``), newline and tab kept; a
    Windows line end (CR LF) is a newline."""
    if text.isprintable():  # the common case: nothing to do (newline and tab aside)
        return text
    return text.replace("\r\n", "\n").translate(_CONTROLS)


def write_text(text: str) -> None:
    """Write a draft (or other text) to stdout: escaped on a terminal, as it is when
    piped or redirected (a file gets exactly the draft)."""
    if sys.stdout.isatty():
        text = terminal_safe(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


class _SafeConsole(Console):
    """A rich console that escapes control characters in every string it renders
    (table cells included); its own styling sequences are untouched."""

    def render_str(self, text: str, **kwargs: Any) -> Any:
        return super().render_str(terminal_safe(text), **kwargs)


def console(stderr: bool = False) -> Console:
    """A console for people on a terminal, and for programs when piped.

    Piped (not a terminal): no colour and no width limit, so every value is printed
    in full, one table row per line, for grep and logs. On a terminal, tables fit
    the window by wrapping cells (see :func:`table`), never by cutting them. Control
    characters in what it prints are escaped (:func:`terminal_safe`).
    """
    out = _SafeConsole(stderr=stderr, highlight=False, soft_wrap=True)
    if not out.is_terminal:
        out.width = PIPED_WIDTH
    return out


PIPED_WIDTH = 100_000  # wide enough that nothing is ever cut or folded


def table(*columns: str, never_wrap: tuple[str, ...] = ()) -> Table:
    """A borderless table whose cells wrap on a terminal rather than being cut.

    Columns in ``never_wrap`` (ids, numbers) keep their full width; the others fold.
    """
    t = Table(box=None, pad_edge=False, header_style="bold")
    for column in columns:
        if column in never_wrap:
            t.add_column(column, no_wrap=True, overflow="ignore")
        else:
            t.add_column(column, overflow="fold")
    return t


def plural(n: int, noun: str) -> str:
    """``"1 labelled draft"``, ``"2 labelled drafts"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def check_out(out: str | None) -> None:
    """Refuse an ``--out`` path that cannot be written, before any work is paid for."""
    if out is None:
        return
    path = Path(out)
    folder = path.parent
    if path.is_dir():
        raise InputError(f"--out {out} is a folder; give a file path")
    if not folder.is_dir():
        raise InputError(f"--out folder not found: {folder}; create it or give another path")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"--out file cannot be written: {out}; give another path")


def write_out(out: str, draft: str, loop_id: str | None, db: str | None) -> None:
    """Write the final draft; if that still fails, say how to get it back."""
    try:
        Path(out).write_text(draft, encoding="utf-8")
    except OSError as exc:
        if loop_id is None:  # not recorded: the draft goes to stdout rather than nowhere
            write_text(draft)
            recover = "the draft is printed on stdout instead"
        else:
            where = f" --db {db}" if db else ""
            recover = (
                f"loop {loop_id} is recorded: recover its final draft with "
                f"`gradeloop history {loop_id}{where} --json`"
            )
        raise InputError(f"cannot write --out file {out} ({exc.strerror}); {recover}") from None


def phase_line(command: str) -> Callable[[str], None]:
    """A callback that says, on one stderr line each, what a long command is doing now
    (``align: grading 20 labelled drafts with the judge``), so it is never silent."""

    def say(text: str) -> None:
        print(terminal_safe(f"{command}: {text}"), file=sys.stderr, flush=True)

    return say


def dollars(cost: float | None) -> str:
    """``$0.0123``, or ``unknown`` when a model's price is not known (never a guess, never
    $0): the one way every command writes a cost."""
    return "unknown" if cost is None else f"${cost:,.4f}"


def percent(x: float | None) -> str:
    """``75%`` for 0.75; ``-`` for a figure that is undefined."""
    return "-" if x is None else f"{x * 100:.0f}%"


def two_places(x: float | None) -> str:
    """``0.50``; ``-`` for a figure that is undefined."""
    return "-" if x is None else f"{x:.2f}"
