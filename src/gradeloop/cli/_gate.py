"""``gradeloop gate``: block a change only on a real regression against a baseline.

Exit codes: 0 no significant regression (and enough drafts to have seen one of the
size asked), 1 a significant regression on a key or on the gate (McNemar's exact
test, Holm-adjusted), 2 bad input, 4 insufficient evidence (too few drafts to tell).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.markup import escape

from ..errors import InputError
from ..models._fingerprint import fingerprint_warnings
from ..stats import RunComparison, compare_runs
from ._io import add_db_option, console, print_json, table, terminal_safe
from ._runs import add_level_option, check_level, load_run


def add_comparison_options(p: argparse.ArgumentParser) -> None:
    """The options ``gate`` and ``compare-runs`` share."""
    p.add_argument(
        "--detect",
        type=float,
        default=0.05,
        metavar="D",
        help="the smallest drop in a rate the comparison must be able to show (at --power) "
        "before a clean result counts as no regression rather than insufficient evidence "
        "(default 0.05: five points)",
    )
    p.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="[KEY=]D",
        help="a drop to tolerate: a significant drop no larger is not a regression "
        "(KEY=D for one key, `accepted` for the gate, D alone for every one; repeatable)",
    )
    add_level_option(p)
    p.add_argument(
        "--power",
        type=float,
        default=0.8,
        metavar="P",
        help="power for the detectable difference (default 0.8)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="random seed of the paired bootstrap (default 0)",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    add_db_option(p)


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "gate",
        help="CI gate: fail only on a significant regression against a baseline run",
        description="Compare a candidate run with a baseline run draft by draft (stored run "
        "ids, or files of `gradeloop grade --drafts --json` output; drafts paired by id, else "
        "by task): McNemar's exact test per key and on the gate, Holm-adjusted, with "
        "intervals on each change and the smallest change the drafts could show. Exit 0 no "
        "significant regression, 1 a significant regression, 2 bad input, 4 insufficient "
        "evidence (too few drafts to see a drop of --detect).",
    )
    p.add_argument("--baseline", required=True, metavar="RUN|FILE", help="the run to hold to")
    p.add_argument("--candidate", required=True, metavar="RUN|FILE", help="the run to judge")
    p.add_argument(
        "--markdown",
        metavar="FILE",
        help='append a Markdown summary to FILE (e.g. "$GITHUB_STEP_SUMMARY"; - for stdout)',
    )
    add_comparison_options(p)
    p.set_defaults(run=run)


def parse_max_drop(values: list[str]) -> dict[str, float]:
    """``["0.02", "tone=0.1"]`` -> ``{"*": 0.02, "tone": 0.1}``."""
    out: dict[str, float] = {}
    for value in values:
        key, _, number = value.rpartition("=")
        try:
            drop = float(number)
        except ValueError:
            drop = -1.0
        if not 0 < drop < 1:
            raise InputError(
                f"--max-drop {value}: give a rate drop between 0 and 1, as D or KEY=D (e.g. 0.02)"
            )
        out[key or "*"] = drop
    return out


def compare(args: argparse.Namespace, baseline: str, candidate: str) -> RunComparison:
    """Load both runs and compare them with the shared options; warnings on stderr."""
    level = check_level(args.level)
    drops = parse_max_drop(args.max_drop)
    a, b = load_run(baseline, args.db), load_run(candidate, args.db)
    result = compare_runs(
        a.rows, b.rows, level=level, power=args.power, detect=args.detect, max_drop=drops,
        seed=args.seed,
    )  # fmt: skip
    known = {"*", "accepted", *result.keys}
    unknown = sorted(set(drops) - known)
    if unknown:
        raise InputError(f"--max-drop names keys neither run has: {', '.join(unknown)}")
    warnings = list(result.warnings)
    if a.fingerprint is not None and b.fingerprint is not None:
        warnings += [
            w
            for w in fingerprint_warnings([(a.label, a.fingerprint), (b.label, b.fingerprint)])
            if " differ in " in w
        ]
    for w in warnings:
        print(terminal_safe(f"gradeloop: warning: {w}"), file=sys.stderr)
    return replace(result, warnings=warnings)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    result = compare(args, args.baseline, args.candidate)
    if args.markdown:
        write_markdown(args.markdown, result.markdown())
    if args.json:
        print_json(result.to_json())
    else:
        render(result)
    return result.exit_code


def write_markdown(target: str, text: str) -> None:
    """Append to ``target`` (``-``: stdout)."""
    if target == "-":
        sys.stdout.write(text)
        return
    try:
        with Path(target).open("a", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise InputError(f"--markdown {target}: cannot write it ({exc.strerror})") from None


def render(result: RunComparison) -> None:
    """The verdict, then one row per comparison, then the scores."""
    out = console()
    out.print(
        f"{result.verdict}: {result.pairs} paired drafts (by {result.aligned_by}), "
        f"{result.level * 100:g} % intervals, Holm-adjusted McNemar tests",
        markup=False,
    )
    if result.only_baseline or result.only_candidate:
        out.print(
            f"unpaired: {len(result.only_baseline)} only in the baseline, "
            f"{len(result.only_candidate)} only in the candidate",
            markup=False,
        )
    t = table("", "baseline", "candidate", "change [CI]", "p (Holm)", "detectable", "verdict")
    for c in result.comparisons:
        j = c.to_json()
        ci = "" if j["ci"] is None else f" [{j['ci'][0] * 100:+.1f}, {j['ci'][1] * 100:+.1f}]"
        t.add_row(
            "accepted (gate)" if c is result.accepted else escape(c.name),
            _pct(j["baseline"]),
            _pct(j["candidate"]),
            "-" if j["diff"] is None else f"{j['diff'] * 100:+.1f} pp{ci}",
            f"{j['p_adjusted']:.3g}",
            "-" if j["detectable"] is None else f"{j['detectable'] * 100:.1f} pp",
            c.verdict,
        )
    out.print(t)
    for name, s in result.scores.items():
        j = s.to_json()
        if j["diff"] is None:
            continue
        ci = "" if j["ci"] is None else f" [{j['ci'][0]:+.2f}, {j['ci'][1]:+.2f}]"
        boot = "" if j["bootstrap_ci"] is None else (
            f", bootstrap [{j['bootstrap_ci'][0]:+.2f}, {j['bootstrap_ci'][1]:+.2f}]"
        )  # fmt: skip
        out.print(
            f"score {name}: {j['baseline']:.2f} -> {j['candidate']:.2f}, "
            f"{j['diff']:+.2f}{ci}{boot}, p {j['p']:.3g}",
            markup=False,
        )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f} %"
