"""``gradeloop regrade``: grade a stored run's drafts again, and see what moved."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.markup import escape

from ..grading._rubric import Rubric
from ..history._store import HistoryStore
from ..migration._regrade import RegradeReport, regrade
from ..stats import Comparison, PairedCounts, compare_counts
from ._io import (
    add_db_option,
    console,
    percent,
    phase_line,
    plural,
    print_json,
    table,
    two_places,
)
from ._models import (
    add_cache_options,
    add_jobs_option,
    add_model_options,
    build_judge,
    model_configured,
    require_model,
)
from ._runs import add_level_option, check_level


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "regrade",
        help="re-grade a stored grading run's (or loop's) drafts with a new rubric or judge",
        description="Grade the drafts stored for RUN_ID (a grading run, or a loop's rounds) "
        "again with --rubric, generating nothing; record the result as a new grading run "
        "linked to RUN_ID; print per key how many drafts flipped to met and to unmet, the "
        "agreement and Cohen's kappa of the old answers with the new, and the cost. Judge "
        "keys whose prompt did not change keep their stored answers (no request, no cost). "
        "Exit 0, 2 for bad input.",
    )
    p.add_argument("run_id", metavar="RUN_ID", help="a grading run id or loop id (or a prefix)")
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_level_option(p)
    p.add_argument(
        "--no-reuse",
        action="store_true",
        help="ask the judge about every judge key, changed or not (with --no-cache: a "
        "measure of the judge's own noise on the same drafts)",
    )
    add_db_option(p)
    add_model_options(p, generator=False)
    add_jobs_option(p)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    check_level(args.level)
    rubric = Rubric.load(args.rubric)
    judge = None
    if rubric.judge_criteria and (args.judge_model or model_configured(args)):
        require_model(args, rubric.judge_keys, code_only_hint=False)
        judge = build_judge(args)
    say = phase_line("regrade")
    reuse = "" if args.no_reuse else "; judge keys whose prompt is unchanged reuse their answers"
    say(f"grading the stored drafts of {args.run_id} again{reuse}")
    with HistoryStore(args.db) as store:
        report = regrade(
            args.run_id,
            rubric,
            store=store,
            judge=judge,
            reuse=not args.no_reuse,
            jobs=args.jobs,
        )
    for warning in report.warnings:
        print(f"gradeloop: warning: {warning}", file=sys.stderr)
    paired = paired_flips(report, args.level)
    if args.json:
        out = report.to_json()
        for key, comparison in paired.items():
            out["keys"][key]["paired"] = comparison.to_json()
        print_json(out)
    else:
        render(report, paired)
    return 0


def paired_flips(report: RegradeReport, level: float) -> dict[str, Comparison]:
    """Per key, old answers against new as paired outcomes: McNemar's exact test on the
    flips (Holm-adjusted over the keys) and Newcombe's interval on the change of the
    met rate. A change here is the rubric's or the judge's alone: the drafts are fixed."""
    counts = {
        k.key: PairedCounts(
            both=k.stats.table.both_pass,
            neither=k.stats.table.both_fail,
            lost=k.stats.table.a_pass_b_fail,
            gained=k.stats.table.a_fail_b_pass,
        )
        for k in report.keys
        if k.compared
    }
    return compare_counts(counts, level=check_level(level))


def render(report: RegradeReport, paired: dict[str, Comparison] | None = None) -> None:
    """The per-key table, then the judge's cost and any failures."""
    paired = paired or {}
    out = console()
    src = report.source
    out.print(
        f"regrade {report.run_id or '(not recorded)'} of {src.kind} {src.source_id}: "
        f"{plural(report.drafts, 'draft')}, rubric {report.rubric.name or report.rubric.path}",
        markup=False,
    )
    t = table(
        "key",
        "filled by",
        "prompt",
        "to met",
        "to unmet",
        "agreement",
        "kappa",
        "reused",
        "met rate change [CI]",
        "p (Holm)",
        never_wrap=("to met", "to unmet", "agreement", "kappa", "reused"),
    )
    for k in report.keys:
        state = "new" if k.new else ("changed" if k.changed else "same")
        row = [
            k.key,
            report.rubric[k.key].filled_by,
            state,
            str(k.to_met),
            str(k.to_unmet),
            percent(k.stats.agreement),
            two_places(k.stats.kappa),
            str(k.reused),
            *_change(paired.get(k.key)),
        ]
        t.add_row(*(escape(x) for x in row))
    out.print(t)
    for failed, error in report.failures:
        out.print(f"  judge failed on {failed}: {error} (left out of the figures)", markup=False)
    usage = report.usage
    if usage is None or (report.calls == 0 and not report.cached):
        out.print("judge: not asked (every judge answer was reused), $0", markup=False)
        return
    cost = "cost unknown" if usage.cost_usd is None else f"${usage.cost_usd:,.4f}"
    out.print(
        f"judge: {plural(report.calls, 'call')}, {report.cached} from the verdict cache, "
        f"{usage.total_input + usage.output_tokens:,} tokens, {cost}",
        markup=False,
    )


def _change(c: Comparison | None) -> list[str]:
    """The met rate's change with its interval, and the adjusted p-value."""
    if c is None or c.difference.estimate is None:
        return ["-", "-"]
    ci = c.difference.ci
    span = "" if ci is None else f" [{ci[0] * 100:+.1f}, {ci[1] * 100:+.1f}]"
    return [f"{c.difference.estimate * 100:+.1f} pp{span}", f"{c.p_adjusted:.3g}"]
