"""A criterion: one named key of a rubric, its fields, and reading one from a table.

:class:`Criterion` is the strict pydantic model of a ``[[criteria]]`` table;
:func:`criterion_from` reads one, turning pydantic's errors into one line that names
the field and the fix (a misspelt field gets a did-you-mean).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..errors import RubricError
from ._guidance import Example, validate_anchors, validate_guidance

__all__ = ["JUDGE", "KEY_PATTERN", "Criterion", "Scale", "criterion_from", "unknown_field"]

JUDGE = "judge"
KEY_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
Scale = Literal["pass_fail", "score"]


class Criterion(BaseModel):
    """One named criterion of a rubric.

    ``checker`` names a registered checker; absent (or ``"judge"``) means the LLM
    judge fills the key. ``scale="score"`` asks for a 1-10 score, met when
    ``score >= threshold``; pass/fail criteria count 10 or 0 in the overall score.

    ``shadow`` names a second source that is run and recorded but never decides
    the key: ``"judge"`` for a code-filled key, or a checker name (with
    ``shadow_options``) for any key. It is how a key is moved between the judge
    and code with evidence: see ``docs/migrating-a-criterion.md``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    description: str
    checker: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    scale: Scale = "pass_fail"
    weight: float = 1.0
    threshold: float | None = None
    shadow: str | None = None
    shadow_options: dict[str, Any] = Field(default_factory=dict)
    anchors: dict[int, str] = Field(default_factory=dict)
    examples: tuple[Example, ...] = ()

    @field_validator("anchors", mode="before")
    @classmethod
    def _anchors_ok(cls, v: Any) -> Any:
        if not isinstance(v, Mapping):
            raise ValueError('anchors are a table of score = "text": { 1 = "...", 10 = "..." }')
        return validate_anchors(v)

    @field_validator("key")
    @classmethod
    def _key_shape(cls, v: str) -> str:
        if not KEY_PATTERN.match(v):
            raise ValueError(
                "a key is 1-64 letters, digits, '_' or '-', starting with a letter or '_'"
            )
        return v

    @field_validator("description")
    @classmethod
    def _description_present(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the description is empty; say what the criterion requires")
        return v.strip()

    @field_validator("checker")
    @classmethod
    def _judge_is_none(cls, v: str | None) -> str | None:
        return None if v in (None, JUDGE) else v

    @field_validator("weight")
    @classmethod
    def _weight_ok(cls, v: float) -> float:
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"weight must be a number >= 0, not {v}")
        return v

    @field_validator("threshold")
    @classmethod
    def _threshold_ok(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and 1 <= v <= 10):
            raise ValueError(f"threshold must be between 1 and 10, not {v}")
        return v

    @field_validator("shadow")
    @classmethod
    def _shadow_named(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError('name the shadow: "judge" or a registered checker')
        return None if v is None else v.strip()

    @model_validator(mode="after")
    def _threshold_needs_score(self) -> Criterion:
        if self.threshold is not None and self.scale != "score":
            raise ValueError(
                '\'threshold\' applies only to scale = "score"; remove it or add scale = "score"'
            )
        return self

    @model_validator(mode="after")
    def _shadow_differs(self) -> Criterion:
        if self.shadow == JUDGE and self.checker is None:
            raise ValueError(
                'the judge already fills this key, so shadow = "judge" would '
                "compare it with itself; shadow it with a checker instead"
            )
        if self.shadow_options and self.shadow in (None, JUDGE):
            raise ValueError(
                "'shadow_options' are for a shadow checker; name one with "
                'shadow = "<checker>" or remove them'
            )
        return self

    @model_validator(mode="after")
    def _guidance_fits(self) -> Criterion:
        judged = self.checker is None or self.shadow == JUDGE
        validate_guidance(
            scale=self.scale, judged=judged, anchors=self.anchors, examples=self.examples
        )
        return self

    @property
    def source(self) -> Literal["code", "judge"]:
        """``"code"`` when a checker fills the key, ``"judge"`` otherwise."""
        return "judge" if self.checker is None else "code"

    @property
    def filled_by(self) -> str:
        """The checker's name, or ``"judge"``."""
        return self.checker or JUDGE

    @property
    def shadow_source(self) -> Literal["code", "judge"] | None:
        """Who fills the shadow: ``"judge"``, ``"code"`` (a checker), or None."""
        if self.shadow is None:
            return None
        return "judge" if self.shadow == JUDGE else "code"

    @property
    def pass_threshold(self) -> float:
        """The score a scored criterion needs (default 7)."""
        return 7.0 if self.threshold is None else self.threshold

    def prompt_line(self) -> str:
        """How this criterion reads in a prompt."""
        if self.scale == "score":
            return f"{self.key} (scored 1-10, needs {self.pass_threshold:g}): {self.description}"
        return f"{self.key}: {self.description}"


def unknown_field(field: str, known: Iterable[str], what: str) -> str:
    close = difflib.get_close_matches(field, list(known), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "known fields: " + ", ".join(sorted(known))
    return f"unknown {what} field {field!r}; {hint}"


def criterion_from(item: Any, index: int, path: str | Path | None, line: int | None) -> Criterion:
    if not isinstance(item, Mapping):
        raise RubricError(f"criterion #{index + 1} is not a table", path=path, line=line)
    key = item.get("key") if isinstance(item.get("key"), str) else None
    label = key or f"#{index + 1}"
    try:
        return Criterion.model_validate(dict(item))
    except ValidationError as exc:
        errors = exc.errors()
        # a misspelt field ('descripton') also leaves the real one missing: the typo is
        # the fault to report, with its did-you-mean
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = err["loc"]
        if loc and loc[0] == "examples" and len(loc) >= 2 and isinstance(loc[1], int):
            msg = f"example {loc[1] + 1}: {_example_problem(err)}"
        else:
            msg = _field_problem(err)
        raise RubricError(msg, path=path, key=label, line=line) from None


def _field_problem(err: Any) -> str:
    field = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return unknown_field(field, Criterion.model_fields, "criterion")
    if err["type"] == "missing":
        return f"missing required field {field!r}"
    if err["type"] == "literal_error" and field == "scale":
        return f"scale must be 'pass_fail' or 'score', not {err.get('input')!r}"
    reason = str(err["msg"]).removeprefix("Value error, ")
    return f"field {field!r}: {reason}" if field else reason


def _example_problem(err: Any) -> str:
    """An ``examples`` entry's fault, named by the example's own field."""
    field = ".".join(str(p) for p in err["loc"][2:])
    if err["type"] == "extra_forbidden":
        return unknown_field(field, Example.model_fields, "example")
    if err["type"] == "missing":
        return f"missing required field {field!r}"
    reason = str(err["msg"]).removeprefix("Value error, ")
    return f"field {field!r}: {reason}" if field else reason
