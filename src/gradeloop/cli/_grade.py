"""``gradeloop grade``: grade one draft against a rubric."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from ..grading._grade import Evaluation, grade
from ..grading._rubric import Rubric
from ..grading._shadow import ShadowResult, ShadowSide, judge_request
from ..history._grading import GradedDraft
from ..loop._run import new_id
from . import _grade_many
from ._io import add_db_option, console, print_json, read_draft, read_task
from ._models import (
    add_cache_options,
    add_jobs_option,
    add_model_options,
    build_judge,
    judges_configured,
    require_model,
)
from ._reasons import NO_REASON, unexplained_keys
from ._record import add_history_options, record_grading, say_recorded
from ._runs import add_level_option


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "grade",
        help="grade a draft against a rubric",
        description="Grade DRAFT (or every draft of --drafts FILE.jsonl) against the rubric. "
        "Exit 0 when accepted (all of them), 1 when not, 2 for bad input.",
    )
    p.add_argument(
        "draft",
        nargs="?",
        metavar="DRAFT",
        help="the draft file, or - for stdin; a .json file holding a message list (or "
        '{"messages": [...]}) is an agent\'s transcript',
    )
    p.add_argument(
        "--drafts",
        metavar="FILE",
        help='grade many drafts: a JSONL file of {"task", "draft"} objects ("id" optional; '
        '"messages" instead of "draft" for a transcript), the format compare reads; --json '
        "then prints one evaluation per line",
    )
    p.add_argument("--rubric", required=True, metavar="FILE", help="rubric file (TOML or JSON)")
    p.add_argument("--task", metavar="TEXT", help="the task the draft answers")
    p.add_argument("--task-file", metavar="FILE", help="read the task from a file")
    p.add_argument(
        "--reference",
        metavar="FILE",
        help="a reference answer, for checkers that read it (matches_reference, "
        "{reference} in contains/regex options); a .json message list is a reference "
        "transcript (tool_sequence's expected calls)",
    )
    p.add_argument(
        "--metadata",
        metavar="JSON",
        help='a JSON object for {metadata[name]} in checker options, e.g. \'{"product": "Acme"}\'',
    )
    p.add_argument("--json", action="store_true", help="print the evaluation JSON")
    p.add_argument(
        "--code-only",
        action="store_true",
        help="grade only the code-filled keys; judge keys are reported as not "
        "checked (and the draft is not accepted)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar while grading --drafts")
    p.add_argument(
        "--summary",
        action="store_true",
        help='with --drafts --json: a last line {"summary": ...}, the accepted and per-key '
        "rates with confidence intervals (what `gradeloop summarize --json` prints)",
    )
    p.add_argument(
        "--cluster",
        metavar="FIELD",
        help="with --drafts: intervals cluster-robust over this metadata field",
    )
    add_level_option(p)
    p.add_argument(
        "--batch",
        action="store_true",
        help="with --drafts: send the judge's requests through the Message Batches API "
        "(half the price, results within 24 hours; the job is recorded in the history)",
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="with --batch: print the job id and return at once (then `gradeloop batch "
        "collect ID`)",
    )
    add_jobs_option(p)
    add_db_option(p)
    add_history_options(p)
    add_model_options(p, generator=False)
    add_cache_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if (args.draft is None) == (args.drafts is None):
        raise InputError("give one DRAFT file (or - for stdin), or --drafts FILE.jsonl")
    if args.drafts is not None:
        return _grade_many.run(args)
    if args.batch or args.no_wait:
        raise InputError("--batch and --no-wait go with --drafts FILE.jsonl")
    if args.summary or args.cluster is not None:
        raise InputError("--summary and --cluster go with --drafts FILE.jsonl")
    rubric = Rubric.load(args.rubric)
    draft = read_draft(args.draft, "draft")
    task = read_task(args.task, args.task_file)
    reference = read_draft(args.reference, "reference") if args.reference is not None else None
    metadata = _metadata(args.metadata)
    judge = None
    if judge_request(rubric) and not args.code_only:
        if rubric.judge_keys:
            require_model(args, rubric.judge_keys, code_only_hint=True, rubric=rubric)
        if judges_configured(args, rubric):  # judge shadows alone run only when a model is set
            judge = build_judge(args, rubric)
    if isinstance(draft, str) and not draft.strip():
        print("gradeloop: note: the draft is empty; grading it anyway", file=sys.stderr)
    if judge is not None and not task:
        print(
            "gradeloop: warning: no --task given: the judge grades the draft without "
            "knowing what it was asked for (give --task TEXT or --task-file FILE)",
            file=sys.stderr,
        )
    evaluation = grade(
        draft,
        rubric,
        task=task,
        judge=judge,
        skip_judge=args.code_only,
        reference=reference,
        metadata=metadata,
    )
    evaluation = evaluation.with_ids(new_id("out"))  # the id the history records it under
    item = "stdin" if args.draft == "-" else Path(args.draft).name
    run_id = record_grading(
        args, rubric, [GradedDraft(item, draft, evaluation, task)], origin="grade", judge=judge
    )
    if args.json:
        print_json(evaluation.to_json())
    else:
        render(evaluation)
    say_recorded(run_id, args)
    return 0 if evaluation.accepted else 1


def _metadata(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"--metadata is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict):
        raise InputError('--metadata must be a JSON object, e.g. \'{"product": "Acme"}\'')
    return data


def render(evaluation: Evaluation) -> None:
    """The per-criterion table, the issues, then the overall score and the verdict."""
    out = console()
    table = Table(show_lines=False, pad_edge=False, box=None, header_style="bold")
    sampled = any(c.agreement is not None for c in evaluation.criteria)
    columns = ["criterion", "filled by", "result", "score", "weight"]
    for column in [*columns, "agreement"] if sampled else columns:
        table.add_column(column, overflow="fold")  # wrapped on a narrow terminal, never cut
    for c in evaluation.criteria:
        result = "not checked" if not c.checked else ("pass" if c.passed else "FAIL")
        score = f"{c.score:g}" if c.checked else "-"
        row = [c.key, c.filled_by, result, score, f"{c.weight:g}"]
        if sampled:
            row.append(agreement_text(c.agreement, c.samples))
        table.add_row(*(escape(x) for x in row))
    out.print(table)
    issues = [i for i in evaluation.verdict.issues if not i.endswith("filled by the judge")]
    issues += [f"{key}: {NO_REASON}" for key in unexplained_keys(evaluation)]
    if issues:
        out.print("\nissues:")
        for issue in issues:
            out.print(f"  - {issue}", markup=False, soft_wrap=True)
    if evaluation.shadows:
        out.print("\nshadows (recorded, never deciding):")
        for shadow in evaluation.shadows:
            out.print(f"  - {describe_shadow(shadow)}", markup=False, soft_wrap=True)
    out.print("\n" + overall_line(evaluation), markup=False, soft_wrap=True)
    judged = judge_line(evaluation)
    if judged:
        out.print(judged, markup=False, soft_wrap=True)


def judge_line(evaluation: Evaluation) -> str:
    """``judge: 1 call, 812 tokens, $0.0042`` (or ``answered from the verdict cache``);
    empty when no judge was asked."""
    calls = evaluation.judge_calls
    if not calls:
        return ""
    if evaluation.judge_cached:
        return "judge: answered from the verdict cache (no request, $0)"
    usage = evaluation.judge_usage
    tokens = usage.total_input + usage.output_tokens
    cost = (
        "cost unknown (no price for the model)"
        if usage.cost_usd is None
        else (f"${usage.cost_usd:,.4f}")
    )
    return f"judge: {len(calls)} call{'s' if len(calls) != 1 else ''}, {tokens:,} tokens, {cost}"


def overall_line(evaluation: Evaluation) -> str:
    """``overall 7.50/10  ACCEPTED``, or why not; never a score made of unchecked keys."""
    unchecked = evaluation.not_checked
    if unchecked:
        score = f"overall not computed ({_keys(len(unchecked))} not checked)"
    else:
        score = f"overall {evaluation.overall_score:.2f}/10"
    if evaluation.accepted:
        return f"{score}  ACCEPTED"
    parts = []
    if unchecked:
        parts.append(f"{_keys(len(unchecked))} not checked ({', '.join(unchecked)})")
    failed = [k for k in evaluation.failed_keys if k not in unchecked]
    if failed:
        parts.append("failed: " + ", ".join(failed))
    if not parts:  # every key met: the pass score or the judge's own claim said no
        parts.append(_gate_reason(evaluation))
    return f"{score}  NOT ACCEPTED: " + "; ".join(parts)


def _keys(n: int) -> str:
    return f"{n} key" if n == 1 else f"{n} keys"


def _gate_reason(evaluation: Evaluation) -> str:
    for issue in evaluation.verdict.issues:
        if "pass_score" in issue or "did not pass the draft" in issue:
            return issue
    return "the judge did not pass it"


def agreement_text(agreement: float | None, samples: Sequence[bool | float]) -> str:
    """``"2/3 agree"`` for a sampled key (``-`` for a key judged once or by code)."""
    if agreement is None:
        return "-"
    n = len(samples)
    return f"{round(agreement * n)}/{n} agree"


def describe_shadow(shadow: ShadowResult) -> str:
    """``key: code_runs pass, judge FAIL: DISAGREE`` (or why there is no answer)."""

    def side(s: ShadowSide) -> str:
        return f"{s.filled_by} {'-' if s.passed is None else ('pass' if s.passed else 'FAIL')}"

    if shadow.status != "ok":
        outcome = f"{shadow.status}" + (f" ({shadow.error})" if shadow.error else "")
    else:
        outcome = "agree" if shadow.agree else "DISAGREE"
    return f"{shadow.key}: {side(shadow.primary)}, shadow {side(shadow.shadow)}: {outcome}"
