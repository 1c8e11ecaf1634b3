"""``gradeloop label``: mark a stored run's drafts met / unmet per judge key, in a browser."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..history._store import HistoryStore
from ..history.report._label import LabelSession
from ..history.report._label_server import Labeller
from ..migration._evidence import stored_run
from ._io import add_db_option, check_out, plural


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "label",
        help="label a stored run's drafts per judge key in a local page (for calibrate)",
        description="Serve a page on 127.0.0.1 that shows each draft of RUN_ID (a grading run, "
        "or a loop's rounds) and lets you mark each judge key met or unmet (scored keys: "
        "1-10) from the keyboard. Every mark is saved at once to --out, in the labels format "
        "`gradeloop calibrate` and `gradeloop align` read; run it again on the same file to "
        "go on where you stopped. Ctrl-C ends it. Exit 0, 2 for bad input.",
    )
    p.add_argument("run_id", metavar="RUN_ID", help="a grading run id or loop id (or a prefix)")
    p.add_argument(
        "--out",
        default="labels.jsonl",
        metavar="FILE",
        help="the labels file to write (default labels.jsonl); an existing file of this "
        "run's labels is resumed, any other file is refused",
    )
    p.add_argument("--port", type=int, default=0, metavar="P", help="port (default: a free one)")
    add_db_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command until interrupted; the exit code."""
    check_out(args.out)
    with HistoryStore(args.db) as store:
        source = stored_run(store, args.run_id)
    with LabelSession(source, args.out) as session:
        return _serve(session, source, args)


def _serve(session: LabelSession, source: Any, args: argparse.Namespace) -> int:
    labeller = Labeller(session, args.port)
    drafts = plural(len(session.drafts), "draft")
    session.hold.note(labeller.url)  # a second session on the file says where this one is
    print(
        f"gradeloop: labelling {source.kind} {source.source_id} ({drafts}, "
        f"keys {', '.join(k.key for k in session.keys)}) at {labeller.url}; marks are saved "
        f"to {args.out} as you make them; Ctrl-C to stop",
        file=sys.stderr,
        flush=True,
    )
    try:
        labeller.serve_forever()
    except KeyboardInterrupt:
        print(
            f"gradeloop: {plural(session.labelled, 'draft')} labelled in {args.out}",
            file=sys.stderr,
        )
    finally:
        labeller.shutdown()
    return 0
