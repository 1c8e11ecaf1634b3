"""The judge's wire schema, built per set of criteria, and its conversion to a Verdict.

Why not send :class:`~gradeloop.Verdict` itself: the structured-output transform
(:mod:`._strict_schema`, the SDK's) marks every object ``additionalProperties:
false``, so a ``dict[str, bool]`` field becomes an object with no properties whose
only valid value is ``{}`` - and an empty ``criteria_met`` never passes the gate. So
each criteria set gets its own model with one *named, required* property per key::

    reasoning     str                       evidence first, before any verdict
    scores        {key: int, ...}           scored keys (only if there are any)
    criteria_met  {key: bool, ...}          pass/fail keys (only if there are any)
    passed        bool
    issues        list[str]
    feedback      {key: str, ...}           only when asked for

Integer bounds do not survive the transform (they become description text), so
replies are read by the one strict validator, :mod:`gradeloop.grading._strict`: a
score outside the integers 1-10 is invalid (never clamped), a duplicated JSON key
makes the reply ambiguous, and whether a scored key is met is decided there
(``score >= criterion.pass_threshold``), never taken from the judge.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..grading._rubric import Criterion
from ..grading._strict import SCORE_MAX, SCORE_MIN, WireError, strict_reply, strict_verdict
from ..grading._verdict import Verdict
from ._strict_schema import strict_schema

__all__ = ["WireError", "WireSpec", "looks_like_json", "wire_spec"]

# The model describes the schema sent to the judge; replies are read by
# strict_verdict, not by this model.
_CONFIG = ConfigDict(strict=True, extra="ignore")


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
        # a deep copy through JSON: much cheaper than copy.deepcopy on a schema
        return {"format": {"type": "json_schema", "schema": json.loads(json.dumps(self.schema))}}

    def schema_text(self) -> str:
        """The schema as compact, stable JSON for a prompt."""
        return json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))

    def parse_text(self, text: str) -> Verdict:
        """Read a reply's text (one JSON object, alone or in one code fence) strictly
        into a Verdict (:func:`~gradeloop.grading._strict.strict_reply`)."""
        return strict_verdict(strict_reply(text), self.criteria)

    def parse_object(self, obj: Any) -> Verdict:
        """Read an already-parsed value (a dict, a Verdict, a wire instance) strictly."""
        return strict_verdict(obj, self.criteria)


def wire_spec(criteria: Sequence[Criterion], *, feedback: bool = False) -> WireSpec:
    """The :class:`WireSpec` for ``criteria`` (judge-filled ones), cached per key set."""
    shape = tuple((c.key, c.scale) for c in criteria)
    model = _build_model(shape, feedback)
    # each spec gets its own copy of the cached schema (a JSON round trip is cheap)
    schema = json.loads(_schema_json(shape, feedback))
    return WireSpec(model=model, criteria=tuple(criteria), schema=schema)


@functools.lru_cache(maxsize=256)
def _schema_json(shape: tuple[tuple[str, str], ...], feedback: bool) -> str:
    """The transformed JSON Schema of a shape, built once: generating it is the most
    expensive step of a judge request (about a millisecond)."""
    return json.dumps(strict_schema(_build_model(shape, feedback).model_json_schema()))


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


def looks_like_json(text: str) -> bool:
    """Whether a reply at least tries to be JSON (a bare object or a code fence)."""
    return text.lstrip().startswith(("{", "```"))
