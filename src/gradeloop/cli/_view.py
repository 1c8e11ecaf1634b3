"""``gradeloop view``: the report's pages served on 127.0.0.1, read-only."""

from __future__ import annotations

import argparse
from typing import Any

from ..history.report import Viewer
from ._io import add_db_option, terminal_safe


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
        default=8765,
        metavar="P",
        help="port (default 8765; 0 picks a free one)",
    )
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    add_db_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    viewer = Viewer(args.db, args.port, verbose=args.verbose)
    line = f"gradeloop view: serving {viewer.db_path} on {viewer.url} (Ctrl-C stops)"
    print(terminal_safe(line), flush=True)
    try:
        viewer.serve_forever()
    except KeyboardInterrupt:
        print("gradeloop view: stopped", flush=True)
    finally:
        viewer.shutdown()
    return 0
