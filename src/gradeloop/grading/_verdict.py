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


def accepted(verdict: Verdict, keys: Iterable[str]) -> bool:
    """The gate: the claim **and** the evidence, covering every key asked about.

    True only when ``verdict.passed`` is True, every key in ``keys`` is present in
    ``verdict.criteria_met``, and every value there is True. An empty
    ``criteria_met`` therefore never passes a non-empty rubric.
    """
    if verdict.passed is not True:
        return False
    met = verdict.criteria_met
    for key in keys:
        if key not in met:
            return False
    for value in met.values():  # noqa: SIM110 (a plain loop: every draft graded passes here)
        if value is not True:
            return False
    return True


def as_feedback(issues: Iterable[str] | None) -> str:
    """Render issues as bullet text for a prompt: ``"- a\\n- b"``; ``""`` for none."""
    return "\n".join(f"- {issue}" for issue in issues or ())
