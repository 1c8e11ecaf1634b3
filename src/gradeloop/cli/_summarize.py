"""``gradeloop summarize``: a run's rates and scores with their confidence intervals."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from ..integrations import telemetry
from ..stats import Interval, Summary, summarize
from ._io import add_db_option, console, plural, print_json, table
from ._runs import add_level_option, check_level, load_run


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "summarize",
        help="a run's accepted and per-key rates and scores, with confidence intervals",
        description="Summarize a stored grading run (RUN_ID, or a unique prefix) or a file of "
        "`gradeloop grade --drafts --json` output: the accepted rate and each key's met rate "
        "with Wilson intervals, the overall and scored keys' mean score with Student's t "
        "intervals, agreement and kappa of shadowed keys, and, with repeated judge samples, "
        "what share of the variance is the judge's, the generator's and the items'. "
        "--cluster FIELD makes every interval cluster-robust over that metadata field. "
        "Exit 0, 2 for bad input.",
    )
    p.add_argument("source", metavar="RUN_ID|FILE", help="a grading run id, or a JSONL file")
    p.add_argument(
        "--cluster",
        metavar="FIELD",
        help="a metadata field (e.g. task) whose drafts are not independent: intervals "
        "become cluster-robust over its values",
    )
    add_level_option(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_db_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    level = check_level(args.level)
    loaded = load_run(args.source, args.db)
    summary = summarize(loaded.rows, level=level, cluster=args.cluster)
    telemetry.evaluation_summary(summary, run_id=loaded.label)
    if args.json:
        out = summary.to_json()
        out["run"] = loaded.label
        print_json(out)
    else:
        render(summary, loaded.label)
    return 0


def interval_text(i: Interval, *, percent: bool = True) -> str:
    """``72.0 % [64.1, 78.8]`` (a rate) or ``7.41 [7.02, 7.80]`` (a mean); ``-`` without."""
    if i.estimate is None:
        return "-"
    if percent:
        ci = "" if i.ci is None else f" [{i.ci[0] * 100:.1f}, {i.ci[1] * 100:.1f}]"
        return f"{i.estimate * 100:.1f} %{ci}"
    ci = "" if i.ci is None else f" [{i.ci[0]:.2f}, {i.ci[1]:.2f}]"
    return f"{i.estimate:.2f}{ci}"


def render(summary: Summary, label: str) -> None:
    """The headline, the per-key table, then where the variance comes from."""
    out = console()
    pct = f"{summary.level * 100:g} %"
    how = f", clustered by {summary.cluster}" if summary.cluster else ""
    failed = f" ({summary.failed} failed, left out)" if summary.failed else ""
    out.print(f"{label}: {plural(summary.n, 'draft')}{failed}; {pct} intervals{how}", markup=False)
    out.print(f"accepted: {interval_text(summary.accepted)}", markup=False)
    if summary.score.estimate is not None:
        out.print(f"overall score: {interval_text(summary.score, percent=False)}", markup=False)
    t = table("key", "met", "n", "score", "samples met", "shadow agreement", "kappa")
    for name, k in summary.keys.items():
        t.add_row(
            escape(name),
            interval_text(k.rate),
            str(k.rate.n),
            "-" if k.score is None else interval_text(k.score, percent=False),
            "-" if k.votes is None else interval_text(k.votes),
            "-" if k.agreement is None else interval_text(k.agreement),
            "-" if k.kappa is None else interval_text(k.kappa, percent=False),
        )
    out.print(t)
    for name, v in summary.variance.items():
        shares = ", ".join(
            f"{part} {share * 100:.0f} %" for part, share in v.shares.items() if share is not None
        )
        out.print(
            f"{name}: variance from {shares} ({v.samples} samples of {v.drafts} drafts "
            f"in {v.groups} items)",
            markup=False,
        )
