"""``gradeloop view``: the report's pages served on 127.0.0.1, read-only."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError
from ..history.report import Viewer
from ._io import add_db_option, terminal_safe

DEFAULT_PORT = 8765


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "view",
        help="browse recorded loops and grading runs in a local web page",
        description="Serve the history on http://127.0.0.1 (never another interface): a "
        "list of loops with filters, each loop's page, each grading run's page, and a "
        "page comparing two loops or two runs. Read-only: the database is never written. "
        "Stop with Ctrl-C.",
    )
    p.add_argument(
        "--port",
        type=int,
        metavar="P",
        help=f"port (default {DEFAULT_PORT}, or a free one when that is taken; 0 picks a free one)",
    )
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    add_db_option(p)
    p.set_defaults(run=run)


def _viewer(args: argparse.Namespace) -> Viewer:
    """The viewer on ``--port``; with no ``--port``, on 8765, or a free port when another
    program holds 8765 (said on stderr), as ``label`` does."""
    if args.port is not None:
        try:
            return Viewer(args.db, args.port, verbose=args.verbose)
        except InputError as exc:
            if "cannot listen" not in str(exc):
                raise
            raise InputError(f"{exc}; give another --port, or --port 0 for a free one") from None
    try:
        return Viewer(args.db, DEFAULT_PORT, verbose=args.verbose)
    except InputError as exc:
        if "cannot listen" not in str(exc):
            raise
    viewer = Viewer(args.db, 0, verbose=args.verbose)
    print(f"gradeloop view: port {DEFAULT_PORT} is taken; using a free one", file=sys.stderr)
    return viewer


def run(args: argparse.Namespace) -> int:
    viewer = _viewer(args)
    line = f"gradeloop view: serving {viewer.db_path} on {viewer.url} (Ctrl-C stops)"
    print(terminal_safe(line), flush=True)
    try:
        viewer.serve_forever()
    except KeyboardInterrupt:
        print("gradeloop view: stopped", flush=True)
    finally:
        viewer.shutdown()
    return 0
