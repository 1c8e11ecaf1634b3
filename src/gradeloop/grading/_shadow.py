"""Shadow mode: a second source runs beside the one that decides a key, and is recorded.

A criterion may name ``shadow = "judge"`` (a code-filled key the judge is asked
about too) or ``shadow = "<checker>"`` (any key, checked by code too). The primary
source decides the key; the shadow's answer lands in ``Evaluation.shadows`` and
never in the verdict. Three mechanics make that hold:

* the judge is asked once per draft: a code key shadowed by the judge joins the
  request as a judge-filled *copy* (so the per-rubric wire schema includes it);
* the judge's answer on such a key is taken out of the verdict before the merge:
  out of ``criteria_met`` and ``scores``, out of ``issues`` (the generator must not
  revise on it), and out of the judge's ``passed`` claim (see :func:`split_verdict`);
* a shadow that fails (a checker that raises, a judge asked only for shadows that
  errs) is a *failed shadow*, recorded with its error; it never crashes grading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import GradeloopError
from ._checks import CheckResult
from ._context import CONTEXT_PARAM, CheckContext
from ._issue_keys import is_about, issue_key
from ._registry import Registry
from ._rubric import JUDGE, Criterion, Rubric
from ._verdict import Verdict

__all__ = [
    "ShadowResult",
    "ShadowSide",
    "ShadowStatus",
    "issues_about",
    "judge_copy",
    "judge_request",
    "run_shadow_checker",
    "split_verdict",
]

Source = Literal["code", "judge"]
ShadowStatus = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class ShadowSide:
    """One source's answer on a key: met or not, its 0-10 score, its issues."""

    source: Source
    filled_by: str
    passed: bool | None
    score: float | None = None
    issues: tuple[str, ...] = ()
    agreement: float | None = None  # the judge's self-agreement, when it was sampled

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the side."""
        out: dict[str, Any] = {
            "source": self.source,
            "filled_by": self.filled_by,
            "passed": self.passed,
            "score": None if self.score is None else round(self.score, 2),
            "issues": list(self.issues),
        }
        if self.agreement is not None:
            out["agreement"] = round(self.agreement, 4)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShadowSide:
        """Read back what :meth:`to_json` wrote."""
        source: Source = "judge" if data.get("source") == "judge" else "code"
        score = data.get("score")
        agreement = data.get("agreement")
        return cls(
            source=source,
            filled_by=str(data.get("filled_by", "")),
            passed=data.get("passed") if isinstance(data.get("passed"), bool) else None,
            score=float(score) if isinstance(score, int | float) else None,
            issues=tuple(str(i) for i in data.get("issues") or ()),
            agreement=float(agreement) if isinstance(agreement, int | float) else None,
        )


@dataclass(frozen=True)
class ShadowResult:
    """A shadowed key on one draft: what decided it, what the shadow said.

    ``status`` is ``"ok"`` (both answered), ``"failed"`` (the shadow raised or the
    judge failed; ``error`` says how) or ``"skipped"`` (no judge was given, or
    code-only grading). ``judge_reasoning`` is the judge's whole reasoning for the
    draft when the judge is either side (it reasons about every key at once).
    """

    key: str
    scale: str
    primary: ShadowSide
    shadow: ShadowSide
    status: ShadowStatus = "ok"
    error: str | None = None
    judge_reasoning: str | None = None
    output_id: str = ""

    @property
    def agree(self) -> bool | None:
        """Whether both sides reached the same met / not met; None unless ``ok``."""
        if self.status != "ok" or self.primary.passed is None or self.shadow.passed is None:
            return None
        return self.primary.passed == self.shadow.passed

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, as the history store keeps it."""
        out: dict[str, Any] = {
            "key": self.key,
            "scale": self.scale,
            "status": self.status,
            "agree": self.agree,
            "primary": self.primary.to_json(),
            "shadow": self.shadow.to_json(),
        }
        if self.output_id:
            out["output_id"] = self.output_id
        if self.error:
            out["error"] = self.error
        if self.judge_reasoning:
            out["judge_reasoning"] = self.judge_reasoning
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShadowResult:
        """Read back what :meth:`to_json` wrote."""
        status = data.get("status")
        return cls(
            key=str(data["key"]),
            scale=str(data.get("scale", "pass_fail")),
            primary=ShadowSide.from_json(data["primary"]),
            shadow=ShadowSide.from_json(data["shadow"]),
            status=status if status in ("ok", "failed", "skipped") else "failed",
            error=data.get("error"),
            judge_reasoning=data.get("judge_reasoning"),
            output_id=str(data.get("output_id", "")),
        )


def judge_copy(c: Criterion) -> Criterion:
    """``c`` as a judge-filled criterion, to ask the judge about a code key."""
    return c.model_copy(
        update={"checker": None, "options": {}, "shadow": None, "shadow_options": {}}
    )


def judge_request(rubric: Rubric) -> tuple[Criterion, ...]:
    """What the judge is asked, in rubric order: its own keys and its shadow keys."""
    return tuple(
        judge_copy(c) if c.shadow_source == "judge" else c
        for c in rubric
        if c.source == "judge" or c.shadow_source == "judge"
    )


def run_shadow_checker(
    c: Criterion, registry: Registry, draft: str, context: CheckContext | None = None
) -> ShadowSide | str:
    """Run ``c``'s shadow checker: its answer, or the error text when it failed.

    Unlike a primary checker (where an exception is a failed criterion), a shadow
    that raises has no answer at all: it must not count as a "fail" that
    disagrees with the primary, so the error comes back instead.
    """
    assert c.shadow is not None and c.shadow != JUDGE
    try:
        info = registry.info(c.shadow)
        kwargs = dict(c.shadow_options)
        if info.wants_context:
            kwargs[CONTEXT_PARAM] = context if context is not None else CheckContext()
        raw = info.fn(draft, **kwargs)
    except GradeloopError as exc:  # the registry changed since the rubric loaded
        return str(exc)
    except Exception as exc:
        return f"shadow checker {c.shadow!r} raised {type(exc).__name__}: {exc}"
    if isinstance(raw, bool):
        raw = CheckResult(passed=raw)
    if not isinstance(raw, CheckResult):
        return (
            f"shadow checker {c.shadow!r} returned {type(raw).__name__}, "
            "expected CheckResult or bool"
        )
    if c.scale == "score":
        score = raw.score if raw.score is not None else (10.0 if raw.passed else 0.0)
        met = raw.passed and score >= c.pass_threshold
    else:
        score, met = (10.0 if raw.passed else 0.0), raw.passed
    return ShadowSide("code", c.shadow, met, float(score), tuple(raw.issues))


def split_verdict(
    verdict: Verdict, own_keys: Sequence[str], shadow_keys: Sequence[str]
) -> tuple[Verdict, dict[str, tuple[str, ...]]]:
    """The judge's verdict with its shadow keys taken out, and their issues by key.

    The judge's ``passed`` claim covers every key it was asked, shadows included,
    so a False may be only about a shadow key. The claim kept is: the judge's own
    ``passed`` when it found every shadow key met (a False then cannot come from
    a shadow), otherwise whether it found every one of its own keys met. Either
    way the evidence in ``criteria_met`` still gates the merge.
    """
    if not shadow_keys:
        return verdict, {}
    shadows = set(shadow_keys)
    met = verdict.criteria_met
    claim = verdict.passed
    if not claim and any(met.get(k) is not True for k in shadows):
        claim = all(met.get(k) is True for k in own_keys)
    kept_issues: list[str] = []
    shadow_issues: dict[str, list[str]] = {k: [] for k in shadow_keys}
    for issue in verdict.issues:
        key = issue_key(issue, shadows)
        (shadow_issues[key] if key is not None else kept_issues).append(issue)
    own = verdict.model_copy(
        update={
            "passed": claim,
            "issues": kept_issues,
            "criteria_met": {k: v for k, v in met.items() if k not in shadows},
            "scores": {k: v for k, v in verdict.scores.items() if k not in shadows},
            "feedback": {k: v for k, v in verdict.feedback.items() if k not in shadows},
        }
    )
    return own, {k: tuple(v) for k, v in shadow_issues.items()}


def issues_about(issues: Sequence[str], key: str) -> tuple[str, ...]:
    """The issues in ``issues`` that start with ``key`` (as the judge is told to write)."""
    return tuple(i for i in issues if is_about(i, key))
