"""Calibrate the judge (and any checker) against people's labels before trusting it.

Seed 002: score about 50 items by hand, run the judge on the same items, and
report how often it agreed. Per key and per source (the primary, and the shadow
when the key has one): the agreement rate on met / not met, Cohen's kappa for
pass/fail keys, mean absolute error and correlation for scored keys, the number
of labels and a warning below :data:`MIN_LABELS`. Runs are stored, so a later
run of the same rubric shows its change against the previous one (did a prompt
or model change make the judge agree more?).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import JudgeRequiredError
from ..grading._grade import Evaluation, Judge
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._transcript import judge_text
from ..models._fingerprint import fingerprint_warnings, run_fingerprint, stored_fingerprint
from ._agreement import PassFailStats, ScoreStats, pass_fail_stats, score_stats
from ._compare import rubric_label
from ._jsonl import LabelledItem
from ._many import graded
from ._suggest import Disagreement

__all__ = ["MIN_LABELS", "CalibrationReport", "KeyCalibration", "calibrate", "needs_judge"]

#: Fewer labels than this and the figures get a warning (seed 002's "about 50").
MIN_LABELS = 50
Role = Literal["primary", "shadow"]
_FIGURES = ("agreement", "kappa", "mae", "correlation")


@dataclass
class _Pairs:
    human_met: list[bool] = field(default_factory=list)
    rater_met: list[bool] = field(default_factory=list)
    human_score: list[float] = field(default_factory=list)
    rater_score: list[float] = field(default_factory=list)
    labels: int = 0
    self_agreement: list[float] = field(default_factory=list)

    def add(self, c: Criterion, label: bool | float, met: bool | None, score: float | None) -> None:
        """Pair one label with the source's answer (None: unanswered)."""
        self.labels += 1
        if met is None:
            return  # the source gave no answer on this draft (it failed, or never ran)
        self.human_met.append(label if isinstance(label, bool) else label >= c.pass_threshold)
        self.rater_met.append(met)
        if c.scale == "score" and not isinstance(label, bool) and score is not None:
            self.human_score.append(float(label))
            self.rater_score.append(score)


@dataclass(frozen=True)
class KeyCalibration:
    """One source of one key against the labels: ``stats`` compare met / not met."""

    key: str
    role: Role
    rated_by: str
    scale: str
    labels: int
    stats: PassFailStats
    scores: ScoreStats | None = None
    previous: Mapping[str, Any] | None = None
    self_agreement: float | None = None
    moved_from: str | None = None  # the key's previous primary source, when it changed

    @property
    def rated(self) -> int:
        """Labels the source answered (a judge failure leaves a label unrated)."""
        return self.stats.n

    @property
    def warning(self) -> str | None:
        """The below-:data:`MIN_LABELS` warning, or None."""
        if self.rated >= MIN_LABELS:
            return None
        return (
            f"{self.key} ({self.rated_by}): only {self.rated} labelled drafts; about "
            f"{MIN_LABELS} are needed before trusting these figures"
        )

    def figures(self) -> dict[str, float | None]:
        """The four headline figures (kappa for pass/fail keys, MAE and r for scored)."""
        pass_fail = self.scale != "score"
        return {
            "agreement": self.stats.agreement,
            "kappa": self.stats.kappa if pass_fail else None,
            "mae": self.scores.mae if self.scores else None,
            "correlation": self.scores.correlation if self.scores else None,
        }

    def delta(self) -> dict[str, float | None] | None:
        """This run's figures minus the previous run's, where both exist."""
        if self.previous is None:
            return None
        now = self.figures()
        out: dict[str, float | None] = {}
        for name in _FIGURES:
            before, value = self.previous.get(name), now[name]
            if isinstance(before, int | float) and value is not None:
                out[name] = round(value - float(before), 4)
            else:
                out[name] = None
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, with the delta when a previous run is known."""
        out: dict[str, Any] = {
            "key": self.key,
            "role": self.role,
            "rated_by": self.rated_by,
            "scale": self.scale,
            "labels": self.labels,
            "rated": self.rated,
            **{k: None if v is None else round(v, 4) for k, v in self.figures().items()},
            "pass_fail": self.stats.to_json("human", "rater"),
        }
        if self.scores is not None:
            out["scores"] = self.scores.to_json()
        if self.self_agreement is not None:
            out["self_agreement"] = round(self.self_agreement, 4)
        if self.warning:
            out["warning"] = self.warning
        if self.previous is not None:
            out["delta"] = self.delta()
        if self.moved_from is not None:
            out["moved_from"] = self.moved_from
        return out


@dataclass
class CalibrationReport:
    """One calibration run: per-key figures, and the previous run to compare with."""

    rubric: Rubric
    rubric_name: str
    items: int
    keys: list[KeyCalibration]
    judge_model: str | None = None
    labels_path: str = ""
    labels_digest: str = ""
    judge_failures: list[tuple[str, str]] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    run_id: str = field(default_factory=lambda: f"cal_{uuid.uuid4().hex[:12]}")
    started_at: float = field(default_factory=time.time)
    previous: Mapping[str, Any] | None = None
    judge_usage: Any = None  # the judge's Usage over every draft (tokens and dollars)
    judge_calls: int = 0  # judge requests behind the verdicts, cached ones included
    judge_cached: int = 0  # of those, answered from the verdict cache (no tokens)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    inter_annotator: dict[str, Any] | None = None  # two labellers' agreement, per key

    @property
    def fingerprint_warnings(self) -> list[str]:
        """What differs from the previous run's fingerprint, and an undated judge alias."""
        runs: list[tuple[str, Mapping[str, Any]]] = []
        if self.previous is not None:
            before = stored_fingerprint(self.previous, self.previous.get("rubric") or {})
            runs.append((str(self.previous.get("run_id")), before))
        runs.append((self.run_id, self.fingerprint))
        return fingerprint_warnings(runs)

    @property
    def warnings(self) -> list[str]:
        """Every key's below-:data:`MIN_LABELS` warning."""
        return [k.warning for k in self.keys if k.warning]

    def changed_descriptions(self) -> list[str]:
        """Keys whose description differs from the previous run's rubric."""
        if self.previous is None:
            return []
        before = {
            c.get("key"): c.get("description")
            for c in self.previous.get("rubric", {}).get("criteria", [])
        }
        return [c.key for c in self.rubric if c.key in before and before[c.key] != c.description]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: what ``--json`` prints and the history database stores."""
        out: dict[str, Any] = {
            "run_id": self.run_id,
            "started_at": self.started_at,
            "rubric_name": self.rubric_name,
            "rubric": self.rubric.to_dict(),
            "labels_path": self.labels_path,
            "labels_digest": self.labels_digest,
            "judge_model": self.judge_model,
            "items": self.items,
            "judge_failures": [{"output_id": o, "error": e} for o, e in self.judge_failures],
            "keys": [k.to_json() for k in self.keys],
            "warnings": self.warnings,
        }
        if self.judge_usage is not None:
            out["judge_usage"] = self.judge_usage.to_dict()
            out["judge_calls"] = {"total": self.judge_calls, "cached": self.judge_cached}
        out["fingerprint"] = self.fingerprint
        out["fingerprint_warnings"] = self.fingerprint_warnings
        if self.inter_annotator is not None:
            out["inter_annotator"] = self.inter_annotator
        if self.previous is not None:
            out["previous"] = {
                "run_id": self.previous.get("run_id"),
                "started_at": self.previous.get("started_at"),
                "judge_model": self.previous.get("judge_model"),
                "same_labels": self.previous.get("labels_digest") == self.labels_digest,
                "changed_descriptions": self.changed_descriptions(),
            }
        return out


def needs_judge(rubric: Rubric, items: Sequence[LabelledItem]) -> bool:
    """Whether any labelled key is answered by the judge (as primary or shadow)."""
    labelled = {k for item in items for k in item.labels}
    return any(rubric[k].source == "judge" or rubric[k].shadow_source == "judge" for k in labelled)


def calibrate(
    items: Sequence[LabelledItem],
    rubric: Rubric,
    *,
    judge: Judge | None = None,
    registry: Registry | None = None,
    name: str | None = None,
    previous: Mapping[str, Any] | None = None,
    jobs: int = 1,
) -> CalibrationReport:
    """Grade every labelled draft with the whole rubric and compare with the labels.

    The judge is asked as the rubric asks it in use (every judge key, once per
    draft), so the figures describe the judge as it runs. Without a judge, labels
    on judge-filled keys raise :class:`~gradeloop.errors.JudgeRequiredError`; a
    judge *shadow* is left unrated. ``previous`` is an
    earlier run's :meth:`CalibrationReport.to_json`, for the deltas. A judge whose
    API fails before any draft was judged raises its :class:`JudgeError` at once
    (the server is not there); later failures are counted in ``judge_failures``.
    ``jobs`` above 1 grades that many drafts at once (see :func:`gradeloop.grade_many`).
    """
    use_judge = needs_judge(rubric, items) and judge is not None
    if judge is None:
        _require_judge(rubric, items)
    pairs: dict[tuple[str, Role], _Pairs] = {}
    failures: list[tuple[str, str]] = []
    disagreements: list[Disagreement] = []
    usage: Any = None
    calls = cached = 0
    for item, done in graded(
        items, rubric, judge=judge if use_judge else None, registry=registry, jobs=jobs
    ):
        ev = done.evaluation
        if done.error is not None:
            failures.append((item.output_id, done.error))
        for record in done.records:
            usage = record.usage if usage is None else usage + record.usage
            calls += 1
            cached += bool(getattr(record, "cached", False))
        for key, label in item.labels.items():
            _collect(pairs, rubric[key], label, ev)
            disagreements.extend(_disagreement(rubric[key], item, label, ev))
    keys = [_key_figures(rubric[key], role, p, previous) for (key, role), p in pairs.items()]
    order = {k: i for i, k in enumerate(rubric.keys)}
    keys.sort(key=lambda k: (order[k.key], k.role != "primary"))
    return CalibrationReport(
        rubric=rubric,
        rubric_name=name or rubric_label(rubric),
        items=len(items),
        keys=keys,
        judge_model=getattr(judge, "model", None) if use_judge else None,
        judge_failures=failures,
        disagreements=disagreements,
        previous=previous,
        judge_usage=usage,
        judge_calls=calls,
        judge_cached=cached,
        fingerprint=run_fingerprint(judge if use_judge else None, rubric.to_dict()),
    )


def _require_judge(rubric: Rubric, items: Sequence[LabelledItem]) -> None:
    """Labels on judge-filled keys need the judge; a judge shadow is merely left unrated."""
    labelled = {k for item in items for k in item.labels}
    keys = [c.key for c in rubric.judge_criteria if c.key in labelled]
    if keys:
        raise JudgeRequiredError(keys, hint="calibrating them needs a judge")


def _collect(
    pairs: dict[tuple[str, Role], _Pairs], c: Criterion, label: bool | float, ev: Evaluation
) -> None:
    primary = ev[c.key]
    if primary.agreement is not None:
        pairs.setdefault((c.key, "primary"), _Pairs()).self_agreement.append(primary.agreement)
    pairs.setdefault((c.key, "primary"), _Pairs()).add(
        c,
        label,
        primary.passed if primary.checked else None,
        primary.score if primary.checked else None,
    )
    if c.shadow is None:
        return
    shadow = next((s for s in ev.shadows if s.key == c.key), None)
    side = shadow.shadow if shadow is not None and shadow.status != "failed" else None
    pairs.setdefault((c.key, "shadow"), _Pairs()).add(
        c, label, side.passed if side else None, side.score if side else None
    )


def _disagreement(
    c: Criterion, item: LabelledItem, label: bool | float, ev: Evaluation
) -> list[Disagreement]:
    """The judge's answer on its own key, when it is the other one than the label's."""
    r = ev[c.key]
    if r.source != "judge" or not r.checked:
        return []
    if any(i.startswith("the judge gave no") for i in r.issues):
        return []  # a missing answer teaches nothing about the criterion
    human = label if isinstance(label, bool) else label >= c.pass_threshold
    if human == r.passed:
        return []
    score = r.score if c.scale == "score" else None
    return [Disagreement(c.key, item.output_id, judge_text(item.draft), label, r.passed, score)]


def _key_figures(
    c: Criterion, role: Role, p: _Pairs, previous: Mapping[str, Any] | None
) -> KeyCalibration:
    rated_by = c.filled_by if role == "primary" else str(c.shadow)
    before, moved_from = None, None
    if previous is not None:
        rows = [k for k in previous.get("keys", []) if k.get("key") == c.key]
        before = next(
            (k for k in rows if (k.get("role"), k.get("rated_by")) == (role, rated_by)), None
        )
        if before is None and role == "primary":
            # the key changed hands (say judge -> checker): compare with whoever decided
            # it last time, and say so, rather than calling the key new
            before = next((k for k in rows if k.get("role") == "primary"), None)
            moved_from = None if before is None else str(before.get("rated_by"))
    return KeyCalibration(
        key=c.key,
        role=role,
        rated_by=rated_by,
        scale=c.scale,
        labels=p.labels,
        stats=pass_fail_stats(p.human_met, p.rater_met),
        scores=score_stats(p.human_score, p.rater_score) if c.scale == "score" else None,
        previous=before,
        self_agreement=(
            sum(p.self_agreement) / len(p.self_agreement) if p.self_agreement else None
        ),
        moved_from=moved_from,
    )
