"""``gradeloop power``: how many drafts a comparison of two runs needs."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from ..stats import sample_size_paired_rates, summarize
from ._io import add_db_option, console, print_json
from ._runs import load_run


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "power",
        help="how many drafts a paired comparison needs to detect a change",
        description="The drafts a paired comparison of two runs (`gradeloop gate`, "
        "`compare-runs`) needs to detect a change of --detect in a rate at --power, "
        "two-sided at --alpha: from --baseline-rate, or from a stored run or file "
        "(--from: its accepted rate and every key's met rate). Without --discordant the "
        "two runs are taken as independent given the draft, which errs on the safe side. "
        "Exit 0, 2 for bad input.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--baseline-rate", type=float, metavar="R", help="the rate now (0-1)")
    source.add_argument(
        "--from", dest="source", metavar="RUN|FILE", help="a run to read rates from"
    )
    p.add_argument(
        "--detect", type=float, required=True, metavar="D", help="the change to detect (e.g. 0.03)"
    )
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="power (default 0.8)")
    p.add_argument(
        "--discordant",
        type=float,
        metavar="S",
        help="expected share of drafts whose outcome differs between the runs",
    )
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    add_db_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    for name, value in (("--alpha", args.alpha), ("--power", args.power)):
        if not 0 < value < 1:
            raise InputError(f"{name} is between 0 and 1, not {value:g}")
    rates: dict[str, float] = {}
    if args.source is not None:
        summary = summarize(load_run(args.source, args.db).rows)
        rates = (
            {"accepted": summary.accepted.estimate} if summary.accepted.estimate is not None else {}
        )
        rates |= {
            k: s.rate.estimate for k, s in summary.keys.items() if s.rate.estimate is not None
        }
    else:
        rates = {"rate": args.baseline_rate}
    needed = {}
    for name, rate in rates.items():
        try:
            needed[name] = sample_size_paired_rates(
                rate, args.detect, alpha=args.alpha, power=args.power, discordant=args.discordant
            )
        except ValueError as exc:
            raise InputError(f"{exc} (--baseline-rate, --detect, --discordant)") from None
    if args.json:
        print_json(
            {
                "detect": args.detect, "alpha": args.alpha, "power": args.power,
                "discordant": args.discordant,
                "drafts": {k: {"rate": round(rates[k], 4), "needed": n} for k, n in needed.items()},
            }
        )  # fmt: skip
        return 0
    out = console()
    for name, n in needed.items():
        label = "" if name == "rate" else f"{name} ({rates[name] * 100:.1f} %): "
        out.print(
            f"{label}{n:,} drafts to detect a change of {args.detect * 100:g} points at "
            f"{args.power * 100:g} % power (two-sided, alpha {args.alpha:g})",
            markup=False,
        )
    return 0
