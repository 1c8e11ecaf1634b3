"""``gradeloop cache stats|clear``: the verdict cache in $GRADELOOP_HOME/cache.db."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path
from typing import Any

from ..history._cache import JudgeCache, default_cache_path
from ._io import console, print_json
from ._models import duration


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "cache",
        help="look after the verdict cache (stats, clear)",
        description="The verdict cache keeps the judge's valid replies, reused only for an "
        "identical request (same model, criteria, task, draft and settings). "
        f"It lives in {default_cache_path()} (under $GRADELOOP_HOME).",
    )
    p.add_argument("--file", metavar="FILE", help="another cache file")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    stats = actions.add_parser("stats", help="entries, size, reuse, by model")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    clear = actions.add_parser("clear", help="delete cached verdicts")
    clear.add_argument(
        "--older-than",
        type=duration,
        metavar="AGE",
        help="only entries stored longer ago than AGE (90s, 30m, 12h, 7d)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    path = Path(args.file) if args.file else default_cache_path()
    if not path.exists():  # a look at the cache never creates one
        if args.action == "stats" and args.json:
            print_json({"path": str(path), "entries": 0})
        else:
            console().print(f"no verdict cache yet at {path}", markup=False)
        return 0
    with JudgeCache(path) as cache:
        if args.action == "clear":
            deleted = cache.clear(older_than=args.older_than)
            noun = "entry" if deleted == 1 else "entries"
            console().print(f"deleted {deleted} cached {noun} from {cache.path}", markup=False)
            return 0
        s = cache.stats()
    if args.json:
        print_json(s.to_json())
        return 0
    out = console()
    out.print(f"cache: {s.path}", markup=False)
    sizes = f"{_size(s.text_bytes)} of replies, file {_size(s.file_bytes)}"
    out.print(f"entries: {s.entries:,} ({sizes})")
    out.print(f"reused: {s.hits:,} times")
    if s.entries:
        out.print(f"oldest: {_when(s.oldest)}  newest: {_when(s.newest)}")
        for model, n in s.by_model.items():
            out.print(f"  {model}: {n:,}", markup=False)
    return 0


def _size(n: int) -> str:
    if n < 1024:
        return f"{n:,} B"
    if n < 1024 * 1024:
        return f"{n / 1024:,.1f} KiB"
    return f"{n / 1024 / 1024:,.1f} MiB"


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")
