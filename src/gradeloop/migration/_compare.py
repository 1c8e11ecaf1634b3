"""Compare a shadowed key's two sources over many drafts: the report read before a switch.

For every key with a shadow: how often the primary and the shadow agree, Cohen's
kappa, the confusion counts, the drafts they disagree on (with the judge's
reasoning), and beside it what the key costs in judge tokens (see
:mod:`gradeloop.migration._key_cost`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..grading._grade import Evaluation, Judge
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._shadow import ShadowResult, judge_request
from ..grading._transcript import judge_text
from ._agreement import PassFailStats, ScoreStats, pass_fail_stats, score_stats
from ._jsonl import DraftItem
from ._key_cost import CostLedger, request_size
from ._many import graded, server_down

__all__ = [
    "CompareReport",
    "KeyComparison",
    "ShadowSink",
    "compare",
    "rubric_label",
    "server_down",
    "side_names",
]


class ShadowSink(Protocol):
    """Where shadow outcomes are stored (``HistoryStore`` provides it)."""

    def add_shadow_results(
        self,
        output_id: str,
        results: Sequence[ShadowResult],
        *,
        loop_id: str | None = None,
        origin: str = "loop",
    ) -> int:
        """Store the shadow outcomes of one draft; returns how many were stored."""
        ...


def rubric_label(rubric: Rubric) -> str:
    """The rubric's ``name``, else its file's stem: how runs of one rubric are grouped."""
    if rubric.name:
        return rubric.name
    return rubric.path.stem if rubric.path is not None else "rubric"


def side_names(c: Criterion) -> tuple[str, str]:
    """How a key's sides are named in reports: ``("code", "judge")`` whichever of the
    two is primary, else ``("primary", "shadow")`` (a checker shadowing a checker)."""
    if c.shadow_source is not None and c.shadow_source != c.source:
        return "code", "judge"
    return "primary", "shadow"


@dataclass(frozen=True)
class KeyComparison:
    """One shadowed key over every draft compared."""

    criterion: Criterion
    stats: PassFailStats
    scores: ScoreStats | None
    failed: int
    skipped: int
    disagreements: tuple[ShadowResult, ...]
    errors: tuple[str, ...] = ()
    self_agreement: float | None = None

    @property
    def key(self) -> str:
        """The criterion's key."""
        return self.criterion.key

    @property
    def oriented(self) -> PassFailStats:
        """``stats`` with rater A on the :func:`side_names` first side (code, when the
        judge is one side), so ``a_pass_b_fail`` reads "code pass, judge fail"."""
        judge_first = self.criterion.source == "judge" and self.criterion.shadow_source == "code"
        return self.stats.swapped() if judge_first else self.stats

    def to_json(self) -> dict[str, Any]:
        """JSON-ready; the confusion cells are named by :func:`side_names`."""
        c = self.criterion
        a, b = side_names(c)
        out: dict[str, Any] = {
            "key": c.key,
            "scale": c.scale,
            "primary": c.filled_by,
            "shadow": c.shadow,
            **self.oriented.to_json(a, b),
            "shadow_failed": self.failed,
            "shadow_skipped": self.skipped,
            "disagreements": [d.to_json() for d in self.disagreements],
        }
        if self.scores is not None:
            out["scores"] = self.scores.to_json()
        if self.errors:
            out["shadow_errors"] = list(self.errors)
        if self.self_agreement is not None:
            out["judge_self_agreement"] = round(self.self_agreement, 4)
        return out


@dataclass
class CompareReport:
    """Everything ``gradeloop compare`` prints."""

    rubric: Rubric
    drafts: int = 0
    keys: list[KeyComparison] = field(default_factory=list)
    cost: CostLedger = field(default_factory=CostLedger)
    judge_failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def judge_request(self) -> dict[str, Any]:
        """The keys the judge is asked per draft, and its system prompt and schema sizes."""
        return request_size(judge_request(self.rubric))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: what ``gradeloop compare --json`` prints."""
        costs = self.cost.to_json()
        return {
            "rubric": rubric_label(self.rubric),
            "drafts": self.drafts,
            "judge": {
                "calls": costs["calls"],
                "usage": costs["usage"],
                "failures": [{"output_id": o, "error": e} for o, e in self.judge_failures],
                "request": self.judge_request,
            },
            "keys": [{**k.to_json(), "cost": costs["keys"].get(k.key)} for k in self.keys],
            "cost_by_key": costs["keys"],
        }


def compare(
    items: Iterable[DraftItem],
    rubric: Rubric,
    *,
    judge: Judge | None = None,
    registry: Registry | None = None,
    store: ShadowSink | None = None,
    on_draft: Callable[[DraftItem, Evaluation], None] | None = None,
    jobs: int = 1,
) -> CompareReport:
    """Grade every draft, collect each shadowed key's outcomes, and summarise them.

    A judge failure on one draft is counted (``judge_failures``); that draft's
    code-filled sides are still graded (its judge sides count as skipped) and the
    run goes on - except when the judge's API fails before any draft was judged:
    the server is not there, and the :class:`JudgeError` is raised at once. With
    ``store``, every shadow outcome is stored under the draft's id. ``jobs`` above 1
    grades that many drafts at once (see :func:`gradeloop.grade_many`).
    """
    report = CompareReport(rubric)
    asked = judge_request(rubric) if judge is not None else ()
    outcomes: dict[str, list[ShadowResult]] = {c.key: [] for c in rubric.shadowed}
    for item, done in graded(items, rubric, judge=judge, registry=registry, jobs=jobs):
        report.drafts += 1
        evaluation = done.evaluation
        if done.error is not None:
            report.judge_failures.append((item.output_id, done.error))
        report.cost.add(
            asked,
            item.task,
            judge_text(item.draft),  # what the judge was shown: a transcript rendered
            done.records,
            json_mode=getattr(judge, "mode", None) == "json",
        )
        for s in evaluation.shadows:
            outcomes[s.key].append(s)
        if store is not None and evaluation.shadows:
            store.add_shadow_results(item.output_id, evaluation.shadows, origin="compare")
        if on_draft is not None:
            on_draft(item, evaluation)
    report.keys = [summarize(c, outcomes[c.key]) for c in rubric.shadowed]
    return report


def summarize(c: Criterion, outcomes: Sequence[ShadowResult]) -> KeyComparison:
    """The agreement figures of one key's shadow outcomes."""
    ok = [s for s in outcomes if s.agree is not None]
    stats = pass_fail_stats(
        [bool(s.primary.passed) for s in ok], [bool(s.shadow.passed) for s in ok]
    )
    scores = None
    if c.scale == "score":
        pairs = [(s.primary.score, s.shadow.score) for s in ok]
        both = [(p, q) for p, q in pairs if p is not None and q is not None]
        scores = score_stats([p for p, _ in both], [q for _, q in both])
    errors = tuple(dict.fromkeys(s.error for s in outcomes if s.status == "failed" and s.error))
    judged = [
        side.agreement
        for s in outcomes
        for side in (s.primary, s.shadow)
        if side.source == "judge" and side.agreement is not None
    ]
    return KeyComparison(
        criterion=c,
        stats=stats,
        scores=scores,
        failed=sum(1 for s in outcomes if s.status == "failed"),
        skipped=sum(1 for s in outcomes if s.status == "skipped"),
        disagreements=tuple(s for s in ok if s.agree is False),
        errors=errors[:5],
        self_agreement=sum(judged) / len(judged) if judged else None,
    )
