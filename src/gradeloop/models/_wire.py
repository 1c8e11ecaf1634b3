"""The judge's wire schema, built per set of criteria, and its conversion to a Verdict.

Why not send :class:`~gradeloop.Verdict` itself: the SDK's structured-output
transform marks every object ``additionalProperties: false``, so a
``dict[str, bool]`` field becomes an object with no properties whose only valid
value is ``{}`` - and an empty ``criteria_met`` never passes the gate. So each
criteria set gets its own model with one *named, required* property per key::

    reasoning     str                       evidence first, before any verdict
    scores        {key: int, ...}           scored keys (only if there are any)
    criteria_met  {key: bool, ...}          pass/fail keys (only if there are any)
    passed        bool
    issues        list[str]
    feedback      {key: str, ...}           only when asked for

Integer bounds do not survive the transform (they become description text), so
scores are clamped to 1-10 here, and whether a scored key is met is decided here
(``score >= criterion.pass_threshold``), never taken from the judge.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anthropic
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..grading._rubric import Criterion
from ..grading._verdict import Verdict

__all__ = ["WireError", "WireSpec", "extract_json", "looks_like_json", "wire_spec"]

SCORE_MIN, SCORE_MAX = 1, 10

# Strict: a JSON "true" string is not a boolean and 7.5 is not a score. Extra keys
# are ignored, since a local model's chatter key must not sink a good verdict.
_CONFIG = ConfigDict(strict=True, extra="ignore")


class WireError(ValueError):
    """A judge reply that is not JSON, or does not match the wire schema."""


@dataclass(frozen=True)
class WireSpec:
    """The wire model for one criteria set, its JSON Schema, and how to read replies."""

    model: type[BaseModel]
    criteria: tuple[Criterion, ...]
    schema: dict[str, Any]

    @property
    def scored(self) -> tuple[str, ...]:
        """Keys the judge scores 1-10."""
        return tuple(c.key for c in self.criteria if c.scale == "score")

    @property
    def pass_fail(self) -> tuple[str, ...]:
        """Keys the judge marks met or not."""
        return tuple(c.key for c in self.criteria if c.scale != "score")

    def output_config(self) -> dict[str, Any]:
        """The ``output_config`` that ``messages.parse(output_format=model)`` would send."""
        return {"format": {"type": "json_schema", "schema": copy.deepcopy(self.schema)}}

    def schema_text(self) -> str:
        """The schema as compact, stable JSON for a prompt."""
        return json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))

    def parse_text(self, text: str) -> Verdict:
        """Validate a reply's text (a fenced or bare JSON object) into a Verdict."""
        candidate = extract_json(text)
        try:
            wire = self.model.model_validate_json(candidate)
        except ValidationError as exc:
            raise WireError(_summarise(exc)) from None
        return self.to_verdict(wire)

    def parse_object(self, obj: Any) -> Verdict:
        """Accept an already-parsed value: a Verdict, a wire instance, or a dict."""
        if isinstance(obj, Verdict):
            return self.normalise(obj)
        if isinstance(obj, self.model):
            return self.to_verdict(obj)
        if isinstance(obj, BaseModel):
            obj = obj.model_dump(by_alias=True)
        if not isinstance(obj, Mapping):
            raise WireError(f"the judge returned {type(obj).__name__}, not a verdict")
        try:
            return self.to_verdict(self.model.model_validate(dict(obj)))
        except ValidationError as exc:
            first = exc
        try:
            verdict = Verdict.model_validate(dict(obj))
        except ValidationError:
            raise WireError(_summarise(first)) from None
        if any(
            c.key not in verdict.criteria_met and c.key not in verdict.scores for c in self.criteria
        ):
            # a dict is held to the wire schema, which names what is missing where
            raise WireError(_summarise(first))
        return self.normalise(verdict)

    def to_verdict(self, wire: BaseModel) -> Verdict:
        """Convert a validated wire instance; scored keys' met-ness is decided here."""
        data = wire.model_dump(by_alias=True)
        scores = {k: float(_clamp(v)) for k, v in (data.get("scores") or {}).items()}
        met: dict[str, bool] = dict(data.get("criteria_met") or {})
        for c in self.criteria:
            if c.scale == "score":
                met[c.key] = scores[c.key] >= c.pass_threshold
        ordered = {c.key: met[c.key] for c in self.criteria}
        return Verdict(
            reasoning=data["reasoning"],
            criteria_met=ordered,
            passed=data["passed"],
            issues=list(data["issues"]),
            scores=scores,
            feedback=dict(data.get("feedback") or {}),
        )

    def normalise(self, verdict: Verdict) -> Verdict:
        """Re-decide a ready-made Verdict's scored keys in code.

        A ready-made :class:`Verdict` (a client's own ``parsed_output``) is the
        public type, not the wire schema: a key it lacks stays absent, so
        :func:`accepted` and :func:`grade` fail that key closed, and the loop goes
        on revising as it would for any failing verdict. Non-finite scores are
        dropped; the rest are clamped to 1-10 and decide their key's met-ness.
        """
        scores = {k: v for k, v in verdict.scores.items() if math.isfinite(v)}
        met = dict(verdict.criteria_met)
        for c in self.criteria:
            if c.scale != "score":
                continue
            met.pop(c.key, None)  # never the judge's own boolean for a scored key
            if c.key in scores:
                scores[c.key] = float(_clamp(scores[c.key]))
                met[c.key] = scores[c.key] >= c.pass_threshold
        return verdict.model_copy(update={"scores": scores, "criteria_met": met})


def _clamp(value: float) -> float:
    return min(SCORE_MAX, max(SCORE_MIN, value))


def _summarise(exc: ValidationError, limit: int = 3) -> str:
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "(reply)"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def wire_spec(criteria: Sequence[Criterion], *, feedback: bool = False) -> WireSpec:
    """The :class:`WireSpec` for ``criteria`` (judge-filled ones), cached per key set."""
    shape = tuple((c.key, c.scale) for c in criteria)
    model = _build_model(shape, feedback)
    schema = anthropic.transform_schema(model.model_json_schema())
    return WireSpec(model=model, criteria=tuple(criteria), schema=schema)


@functools.lru_cache(maxsize=256)
def _build_model(shape: tuple[tuple[str, str], ...], feedback: bool) -> type[BaseModel]:
    if not shape:
        raise ValueError("the judge needs at least one criterion to judge")
    scored = [key for key, scale in shape if scale == "score"]
    pass_fail = [key for key, scale in shape if scale != "score"]
    fields: dict[str, Any] = {
        "reasoning": (
            str,
            Field(
                description="Cite specific evidence from the draft for "
                "every criterion before judging it."
            ),
        ),
    }
    if scored:
        fields["scores"] = (
            _keyed(
                "Scores",
                scored,
                int,
                f"Score for {{key}}: an integer from {SCORE_MIN} to {SCORE_MAX}.",
            ),
            Field(),
        )
    if pass_fail:
        fields["criteria_met"] = (
            _keyed("CriteriaMet", pass_fail, bool, "True only if the draft fully meets {key}."),
            Field(),
        )
    fields["passed"] = (bool, Field(description="True only if every criterion is met."))
    fields["issues"] = (
        list[str],
        Field(description="One concrete, actionable issue per unmet criterion, naming its key."),
    )
    if feedback:
        keys = [key for key, _ in shape]
        fields["feedback"] = (_keyed("Feedback", keys, str, "Advice on {key}."), Field())
    model: type[BaseModel] = create_model("JudgeVerdict", __config__=_CONFIG, **fields)
    return model


def _keyed(name: str, keys: Sequence[str], type_: type, text: str) -> type[BaseModel]:
    # Criterion keys may hold '-' or shadow BaseModel attributes, so fields get safe
    # names and the key travels as the alias (which is what the schema shows).
    fields: dict[str, Any] = {
        f"k{i}": (type_, Field(alias=key, description=text.format(key=key)))
        for i, key in enumerate(keys)
    }
    model: type[BaseModel] = create_model(name, __config__=_CONFIG, **fields)
    return model


_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_json(text: str) -> str:
    """The JSON object in ``text``: inside a ```json fence, bare, or amid prose."""
    stripped = text.strip()
    fenced = _FENCE.search(stripped)
    if fenced:
        return fenced.group(1).strip()
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        return stripped[start : end + 1]
    return stripped


def looks_like_json(text: str) -> bool:
    """Whether a reply at least tries to be JSON (a bare object or a code fence)."""
    return text.lstrip().startswith(("{", "```"))
