"""Scoring candidates: each one run over every draft once, as the key's checker would be.

A candidate says "met" on a draft when its checker passes it (for a scored key: and
its score, 10 when it gives none, reaches the key's threshold), exactly as a shadow
checker's answer is read. A checker that raises or returns something that is no
answer counts as "not met" on that draft, and the errors are counted. The calls are
made directly, with no per-call bookkeeping beyond the answer, so scoring costs
about what running the checks costs (``benchmarks/bench_propose.py``).

Per split (train, held-out), against the evidence's verdicts: agreement, Cohen's
kappa, coverage (the share of unmet drafts the candidate fails: the bad drafts it
catches) and the false-failure rate (the share of met drafts it fails).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..grading._checks import CheckerInfo, CheckResult
from ..grading._context import CONTEXT_PARAM, CheckContext
from ..grading._rubric import Criterion
from ._agreement import pass_fail_stats

__all__ = ["CANDIDATE_SECONDS", "Figures", "figures", "predict"]

#: A candidate still running after this many seconds over all drafts is dropped.
CANDIDATE_SECONDS = 30.0


@dataclass(frozen=True)
class Figures:
    """How a candidate's answers compare with the verdicts on one split."""

    n: int
    agreement: float | None
    kappa: float | None
    coverage: float | None
    false_failure_rate: float | None
    kappa_note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``kappa``, ``agreement``, ``coverage``, ``false_failure_rate`` (4 places), ``n``."""
        out: dict[str, Any] = {
            "kappa": _r(self.kappa),
            "agreement": _r(self.agreement),
            "coverage": _r(self.coverage),
            "false_failure_rate": _r(self.false_failure_rate),
            "n": self.n,
        }
        if self.kappa_note:
            out["kappa_note"] = self.kappa_note
        return out


def figures(predicted: Sequence[bool], truth: Sequence[bool]) -> Figures:
    """The four figures of ``predicted`` met against ``truth`` met."""
    stats = pass_fail_stats(predicted, truth)
    t = stats.table  # a = predicted, b = truth
    unmet = t.both_fail + t.a_pass_b_fail
    met = t.both_pass + t.a_fail_b_pass
    return Figures(
        n=t.n,
        agreement=stats.agreement,
        kappa=stats.kappa,
        coverage=t.both_fail / unmet if unmet else None,
        false_failure_rate=t.a_fail_b_pass / met if met else None,
        kappa_note=stats.kappa_note,
    )


def predict(
    checks: Sequence[tuple[CheckerInfo, dict[str, Any]]],
    criterion: Criterion,
    texts: Sequence[str],
    contexts: Sequence[CheckContext],
    seconds: float = CANDIDATE_SECONDS,
) -> list[tuple[list[bool], int] | None]:
    """Each check's met / not met on every text and how many of its calls failed;
    None for a check that used more than ``seconds`` (too slow to shadow a key).

    Draft by draft, every check on one draft before the next draft, as ``grade()``
    runs a rubric's checkers: checkers that read a draft through the shared
    Markdown scan find it scanned already. A check is dropped the moment its time
    passes ``seconds``, so the budget is overrun by one call at most (and a model's
    patterns are vetted to make one call short: :func:`~._propose_candidates.regex_risk`).
    """
    scored = criterion.scale == "score"
    threshold = criterion.pass_threshold
    calls = [(info.fn, dict(options), info.wants_context) for info, options in checks]
    answers: list[list[bool]] = [[] for _ in checks]
    errors = [0] * len(checks)
    spent = [0.0] * len(checks)
    live = list(range(len(checks)))
    clock = time.perf_counter
    for i, text in enumerate(texts):
        for j in live:
            fn, kwargs, wants = calls[j]
            if wants:
                kwargs[CONTEXT_PARAM] = contexts[i]
            started = clock()
            try:
                raw = fn(text, **kwargs)
            except Exception:
                raw = None
            spent[j] += clock() - started
            if spent[j] > seconds:
                continue  # over its budget: dropped below, before the next call
            if raw is True or raw is False:
                answers[j].append(raw)
            elif isinstance(raw, CheckResult):
                score = raw.score
                answers[j].append(
                    raw.passed and (not scored or score is None or score >= threshold)
                )
            else:
                errors[j] += 1
                answers[j].append(False)
        if any(spent[j] > seconds for j in live):
            live = [j for j in live if spent[j] <= seconds]
    kept = set(live)
    return [(answers[j], errors[j]) if j in kept else None for j in range(len(checks))]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
