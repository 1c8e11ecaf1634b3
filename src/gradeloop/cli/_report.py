"""``gradeloop report``: one self-contained HTML file of loops and grading runs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError
from ..history.report import write_report
from ._io import add_db_option, terminal_safe


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write an HTML report of recorded loops and grading runs",
        description="Write one self-contained HTML file (inline CSS and SVG, no script, no "
        "network) showing each loop: task, settings, stop reason, the score trajectory, "
        "the keys round by round, the judge's reasoning and issues, and the changes "
        "between drafts; each grading run's drafts by key; and each reward watch "
        "(gradeloop.rewards' audit) charted over its steps. With no ID, the most recent "
        "loops, grading runs and watches. Exit 0, or 2 for bad input.",
    )
    p.add_argument(
        "ids",
        nargs="*",
        metavar="ID",
        help="loop or grading-run ids (a unique prefix will do)",
    )
    p.add_argument("--html", required=True, metavar="OUT", help="the HTML file to write")
    p.add_argument(
        "--limit",
        type=int,
        default=20,
        metavar="N",
        help="with no ID: the N most recent loops and N grading runs (default 20)",
    )
    add_db_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InputError(f"--limit must be at least 1, not {args.limit}")
    path = write_report(args.html, args.ids, db=args.db, limit=args.limit)
    print(terminal_safe(f"wrote {path}"), file=sys.stderr)
    return 0
