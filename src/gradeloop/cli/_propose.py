"""``gradeloop propose KEY``: which checker, with which options, would fill a judge key?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from ..errors import InputError
from ..grading._rubric import Rubric
from ..history._store import HistoryStore
from ..migration._jsonl import read_labels
from ..migration._propose import CandidateResult, Proposal, propose_checkers
from ..migration._propose_evidence import history_evidence
from ..migration._propose_write import check_target, write_shadow
from ._compare import _num, _pct
from ._io import add_db_option, check_out, console, plural, print_json, read_task
from ._models import add_model_options, build_judge, model_configured

SHOWN = 10  # candidates in the table
SHOWN_DROPPED = 10


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "propose",
        help="propose a code checker for a judge key, from labels or stored verdicts",
        description="Find registered checkers (with options) that agree with people's labels "
        "(or the judge's stored verdicts) on one judge-filled key: candidates are mined from "
        "the drafts and, unless --no-model, proposed by the judge's model; each is scored on "
        "a train / held-out split drawn with --seed. The winner is chosen on train (by "
        "cross-validation: 'cv', and the simplest among near-equals) and judged on held-out. "
        "Exit 0 when its held-out kappa reaches --min-kappa (and --out is written "
        "with it as the key's shadow), 1 when none does (keep the key with the judge; "
        "nothing written), 2 for bad input.",
    )
    p.add_argument("key", metavar="KEY", help="the judge-filled criterion key")
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    evidence = p.add_mutually_exclusive_group(required=True)
    evidence.add_argument(
        "--labels",
        action="append",
        metavar="FILE",
        help="a labels JSONL file (the format `calibrate` reads); repeat to add files",
    )
    evidence.add_argument(
        "--from-history",
        nargs="*",
        metavar="RUN_ID",
        help="the judge's stored verdicts: these grading runs and loops (none: all stored)",
    )
    p.add_argument(
        "--out",
        metavar="R2",
        help="write the rubric with the winner as KEY's shadow here (never the input rubric)",
    )
    p.add_argument("--no-model", action="store_true", help="mined candidates only: offline, free")
    p.add_argument(
        "--min-kappa",
        type=float,
        default=0.8,
        metavar="K",
        help="the held-out kappa the winner must reach (default 0.8)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="random seed of the train / held-out split (default 0)",
    )
    p.add_argument("--task", metavar="TEXT", help="task for label lines that have none")
    p.add_argument("--task-file", metavar="FILE", help="read that task from a file")
    p.add_argument("--json", action="store_true", help="print the proposal as JSON")
    add_db_option(p)
    add_model_options(p, generator=False)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    if not 0 < args.min_kappa <= 1:
        raise InputError(f"--min-kappa must be above 0 and at most 1, not {args.min_kappa}")
    rubric = Rubric.load(args.rubric)
    if args.out is not None:
        check_out(args.out)
        check_target(args.rubric, args.out)
    evidence, source = _evidence(args, rubric)
    judge = None
    if not args.no_model:
        if not model_configured(args):
            raise InputError(
                "no model is configured to propose candidates: set ANTHROPIC_API_KEY or pass "
                "--base-url, or give --no-model for mined candidates only"
            )
        judge = build_judge(args)
    proposal = propose_checkers(
        rubric,
        args.key,
        evidence,
        judge=judge,
        use_model=not args.no_model,
        min_kappa=args.min_kappa,
        seed=args.seed,
        source=source,
    )
    written = None
    winner = proposal.winner
    if winner is not None and args.out is not None:
        written = write_shadow(args.rubric, args.out, args.key, winner.checker, winner.options)
    if args.json:
        out = proposal.to_json()
        out["rubric_out"] = None if written is None else str(written)
        print_json(out)
    else:
        render(proposal, args, written)
    return 0 if winner is not None else 1


def _evidence(args: argparse.Namespace, rubric: Rubric) -> tuple[list[Any], str]:
    if args.labels is not None:
        task = read_task(args.task, args.task_file)
        items: list[Any] = []
        seen: dict[str, str] = {}
        for path in args.labels:
            for item in read_labels(path, rubric, default_task=task):
                if item.output_id in seen:
                    raise InputError(
                        f"{item.where}: id {item.output_id!r} is already used at "
                        f"{seen[item.output_id]}; give every labelled draft its own id"
                    )
                seen[item.output_id] = item.where
                items.append(item)
        return items, "labels"
    if args.db is not None and not Path(args.db).is_file():
        raise InputError(f"history database not found: {args.db}; check --db")
    with HistoryStore(args.db) as store:
        return list(history_evidence(store, args.key, args.from_history)), "history"


def render(proposal: Proposal, args: argparse.Namespace, written: Path | None) -> None:
    """The evidence, the candidates' table, and the verdict with what to do next."""
    out = console()
    sp = proposal.split
    drafts = len(sp.train) + len(sp.heldout)
    met = sum(1 for e in (*sp.train, *sp.heldout) if e.met)
    what = "labelled drafts" if proposal.source == "labels" else "drafts the judge answered"
    out.print(
        f"propose {proposal.key}: {drafts} {what} ({met} met, {drafts - met} unmet); "
        f"{len(sp.train)} to choose on, {len(sp.heldout)} held out (seed {proposal.seed})",
        markup=False,
    )
    _model_line(proposal, out)
    origins = [c.candidate.origin for c in proposal.candidates]
    both = origins.count("both")
    twice = f", {both} of them both" if both else ""
    out.print(
        f"{plural(len(origins), 'candidate')} scored ({len(origins) - origins.count('model')} "
        f"mined, {len(origins) - origins.count('mined')} from the model{twice}); "
        f"{len(proposal.dropped)} dropped",
        markup=False,
    )
    out.print()
    out.print(_table(proposal.candidates[:SHOWN]))
    for d in proposal.dropped[:SHOWN_DROPPED]:
        out.print(f"  dropped ({d.origin}): {d.checker}: {d.reason}", markup=False)
    if len(proposal.dropped) > SHOWN_DROPPED:
        out.print(f"  ... and {len(proposal.dropped) - SHOWN_DROPPED} more dropped", markup=False)
    for note in [*proposal.notes, *proposal.mining_notes]:
        out.print(f"  note for a person: {note}", markup=False)
    out.print()
    _verdict(proposal, args, written, out)


def _model_line(proposal: Proposal, out: Any) -> None:
    answer = proposal.model
    if answer is None:
        return
    usage = answer.usage
    spent = ""
    if usage is not None:
        cost = "cost unknown" if usage.cost_usd is None else f"${usage.cost_usd:,.4f}"
        spent = f"{usage.total_input:,} tokens in, {usage.output_tokens:,} out, {cost}"
    if answer.error is not None:
        out.print(
            f"model: 1 call ({spent}) failed: {answer.error}; mined candidates only",
            markup=False,
        )
        return
    proposed = len(answer.proposals) + len(answer.dropped)
    out.print(
        f"model: 1 call, {spent}; {plural(proposed, 'candidate')} proposed",
        markup=False,
    )


def _table(rows: list[CandidateResult]) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold")
    columns = ["#", "candidate", "from", "cv", "train kappa", "agree", "held-out kappa", "agree"]
    for column in [*columns, "coverage", "false failures"]:
        table.add_column(column, overflow="fold")
    for n, r in enumerate(rows, start=1):
        table.add_row(
            str(n),
            r.candidate.label,
            r.candidate.origin,
            _num(r.cv),
            _num(r.train.kappa),
            _pct(r.train.agreement),
            _num(r.heldout.kappa),
            _pct(r.heldout.agreement),
            _pct(r.heldout.coverage),
            _pct(r.heldout.false_failure_rate),
        )
    return table


def _verdict(proposal: Proposal, args: argparse.Namespace, written: Path | None, out: Any) -> None:
    best, winner, key = proposal.best, proposal.winner, proposal.key
    if winner is None:
        why = (
            "no candidate was left to score"
            if best is None
            else f"the best on train, {best.candidate.label}, has held-out kappa "
            f"{_num(best.heldout.kappa)}, below {args.min_kappa:g}"
        )
        out.print(f"keep {key} with the judge: {why}; nothing written", markup=False)
        return
    h = winner.heldout
    out.print(
        f"winner: {winner.candidate.label}: held-out kappa {_num(h.kappa)} (agreement "
        f"{_pct(h.agreement)}, coverage {_pct(h.coverage)}, false failures "
        f"{_pct(h.false_failure_rate)}) reaches {args.min_kappa:g}",
        markup=False,
    )
    if written is None:
        out.print(
            f"give --out FILE to write the rubric with it as {key}'s shadow",
            markup=False,
        )
        return
    out.print(
        f"wrote {written}: {key} is still the judge's, with shadow = {winner.checker!r} "
        "beside it; next, compare the two (docs/migrating-a-criterion.md, step 3)",
        markup=False,
    )
