"""``gradeloop compare-runs A B``: two runs of the same drafts, pair by pair.

Its own command: ``gradeloop compare`` is the shadow comparison (one rubric's two
sources on one set of drafts) and takes one DRAFTS file, so two positional run ids
there would be read as a drafts file and a stray argument.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._gate import add_comparison_options, compare, render
from ._io import print_json


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "compare-runs",
        help="two runs of the same drafts compared pair by pair, with intervals",
        description="Compare run B with run A draft by draft (stored run ids, or files of "
        "`gradeloop grade --drafts --json` output; drafts paired by id, else by task): per "
        "key and on the gate, the change with Newcombe's interval, McNemar's exact p "
        "(Holm-adjusted), the smallest change the drafts could show, and a verdict that "
        "says insufficient evidence rather than no change when they could not show it; "
        "scores by a paired t interval and a paired bootstrap (fixed random seed). Exit 0 when the "
        "report was made (see `gradeloop gate` for exit codes that block), 2 bad input.",
    )
    p.add_argument("baseline", metavar="A", help="the first run (RUN_ID or FILE)")
    p.add_argument("candidate", metavar="B", help="the second run (RUN_ID or FILE)")
    add_comparison_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    result = compare(args, args.baseline, args.candidate)
    if args.json:
        print_json(result.to_json())
    else:
        render(result)
    return 0
