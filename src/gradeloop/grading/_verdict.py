"""The verdict: the judge's answer, and the merged answer of a whole rubric."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field


class Verdict(BaseModel):
    """A verdict on one draft.

    ``reasoning`` comes first on purpose: a judge decoding fields in order writes its
    evidence before it commits to ``passed``. ``criteria_met`` is the evidence the
    gate reads (see :func:`accepted`); ``passed`` is only the judge's claim.

    >>> v = Verdict(reasoning="cites 4.2", criteria_met={"api_cited": True},
    ...             passed=True, issues=[])
    >>> accepted(v, ["api_cited"])
    True
    """

    # strict: "yes", "true" or 1 are not booleans, "9" is not a score
    model_config = ConfigDict(extra="forbid", strict=True)

    reasoning: str = Field(description="Cite specific evidence before judging.")
    criteria_met: dict[str, bool]
    passed: bool
    issues: list[str]
    scores: dict[str, float] = Field(default_factory=dict)
    feedback: dict[str, str] = Field(default_factory=dict)


_FIELDS = frozenset(Verdict.model_fields)
_new = object.__new__
_setattr = object.__setattr__


def built_verdict(
    reasoning: str,
    criteria_met: dict[str, bool],
    passed: bool,
    issues: list[str],
    scores: dict[str, float],
    feedback: dict[str, str],
) -> Verdict:
    """``Verdict(reasoning=..., ...)`` (every field given) for values gradeloop built
    itself from results it already checked, without validating them again: what
    ``Verdict.model_construct`` does, at a quarter of its cost and a third of the
    validated constructor's. Grading builds one per draft. The arguments become the
    verdict's own (pass fresh containers); a test compares it with the validated one."""
    verdict = _new(Verdict)
    _setattr(verdict, "__dict__", {
        "reasoning": reasoning, "criteria_met": criteria_met, "passed": passed,
        "issues": issues, "scores": scores, "feedback": feedback,
    })  # fmt: skip
    _setattr(verdict, "__pydantic_fields_set__", set(_FIELDS))
    _setattr(verdict, "__pydantic_extra__", None)
    _setattr(verdict, "__pydantic_private__", None)
    return verdict


def accepted(verdict: Verdict, keys: Iterable[str]) -> bool:
    """The gate: the claim **and** the evidence, covering every key asked about.

    True only when ``verdict.passed`` is True, every key in ``keys`` is present in
    ``verdict.criteria_met``, and every value there is True. An empty
    ``criteria_met`` therefore never passes a non-empty rubric.
    """
    if verdict.passed is not True:
        return False
    met = verdict.criteria_met
    # plain loops, not all() over generators: a third of the cost, and every draft
    # graded passes here
    for key in keys:
        if key not in met:
            return False
    for value in met.values():  # noqa: SIM110
        if value is not True:
            return False
    return True


def as_feedback(issues: Iterable[str] | None) -> str:
    """Render issues as bullet text for a prompt: ``"- a\\n- b"``; ``""`` for none."""
    return "\n".join(f"- {issue}" for issue in issues or ())
