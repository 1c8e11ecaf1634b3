"""Candidate checkers for a key: a registered checker's name plus options, validated.

A candidate is data, never code: :func:`bind` checks it exactly as a rubric's
shadow checker is checked when the rubric loads (the name must be registered, the
options must pass the checker's own option model), by building the key's criterion
with the candidate as its shadow and binding it the way :class:`~gradeloop.Rubric`
does. Candidates the model proposes pass :func:`model_risk` too: options it writes
must not make grading slow or reach outside the drafts, so a regular expression
must run in linear time (:func:`regex_risk`), an option naming a file or a path is
left to a person, and no option may be larger than :data:`MAX_OPTIONS_CHARS`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import RubricError
from ..grading._checks import CheckerInfo, _resolve_from_rubric
from ..grading._regex import MAX_STEPS, backtracking_risk
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._rubric_fields import bind_checker

__all__ = [
    "MAX_OPTIONS_CHARS",
    "MAX_REGEX_COST",
    "Candidate",
    "Origin",
    "bind",
    "canonical",
    "model_risk",
    "regex_risk",
]

Origin = Literal["mined", "model", "both"]

#: The largest options (as compact JSON) a model-proposed candidate may carry.
MAX_OPTIONS_CHARS = 2000
#: The most steps a model-proposed pattern may try at one position of a text (a
#: rubric's own limit for patterns left to Python's ``re``).
MAX_REGEX_COST = MAX_STEPS
_MAX_PATTERN = 300
_PATTERN_OPTIONS = frozenset({"pattern", "patterns", "regex", "regexes"})


@dataclass(frozen=True)
class Candidate:
    """A registered checker and validated options, where it came from, and why."""

    checker: str
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: Origin = "mined"
    why: str = ""

    @property
    def label(self) -> str:
        """``checker {option = value, ...}`` as one line for tables."""
        if not self.options:
            return self.checker
        shown = ", ".join(f"{k} = {_value(v)}" for k, v in self.options.items())
        return f"{self.checker} {{{shown}}}"

    def to_json(self) -> dict[str, Any]:
        """``checker``, ``options``, ``origin`` and ``why``."""
        return {
            "checker": self.checker,
            "options": _plain(self.options),
            "origin": self.origin,
            "why": self.why,
        }


def canonical(checker: str, options: Mapping[str, Any]) -> str:
    """One string per distinct candidate (key order does not matter)."""
    return json.dumps([checker, _plain(options)], sort_keys=True, ensure_ascii=False)


def bind(
    rubric: Rubric,
    key: str,
    checker: str,
    options: Mapping[str, Any],
    registry: Registry,
) -> dict[str, Any]:
    """``options`` validated for ``checker`` as the key's shadow, exactly as a rubric
    file's are; :class:`~gradeloop.errors.RubricError` naming the fault otherwise."""
    c = rubric[key]
    data = c.model_dump(exclude_defaults=True)
    data.update(shadow=checker, shadow_options=dict(options))
    try:
        shadowed = Criterion.model_validate(data)
    except ValueError as exc:
        raise RubricError(str(exc).splitlines()[-1].strip(), key=key) from None
    bound = dict(bind_checker(shadowed, registry, rubric.path, None).shadow_options)
    model = registry.info(checker).options_model
    if model is None:
        return bound
    order = [f.alias or k for k, f in model.model_fields.items()]  # the signature's order
    return {
        k: bound[k]
        for k in sorted(bound, key=lambda k: order.index(k) if k in order else len(order))
    }


def model_risk(info: CheckerInfo, options: Mapping[str, Any]) -> str | None:
    """Why options the model wrote cannot be run, or None when they can."""
    try:
        size = len(json.dumps(_plain(options), ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return "the options are not plain JSON values"
    if size > MAX_OPTIONS_CHARS:
        return f"the options are {size:,} characters of JSON; at most {MAX_OPTIONS_CHARS:,}"
    named = _file_options(info)
    for name in options:
        if name in named:
            return f"option {name!r} names a file or path: a person must choose it"
    for name, pattern in _patterns(options):
        risk = regex_risk(pattern)
        if risk is not None:
            return f"option {name!r}: the pattern {risk}"
    return None


def _file_options(info: CheckerInfo) -> set[str]:
    """Options typed as a file path (:data:`~gradeloop.grading.RubricPath`), or named like one."""
    model = info.options_model
    if model is None:
        return set()
    out = set()
    for name, f in model.model_fields.items():
        alias = f.alias or name
        typed = any(getattr(m, "func", None) is _resolve_from_rubric for m in f.metadata)
        if typed or "file" in alias or "path" in alias or "dir" in alias.split("_"):
            out.add(alias)
    return out


def _patterns(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every string under an option named like a pattern, at any depth (bounded)."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any, bool, int]] = [
        (k, v, k in _PATTERN_OPTIONS, 0) for k, v in options.items()
    ]
    while stack:
        name, value, is_pattern, depth = stack.pop()
        if depth > 32:
            continue
        if isinstance(value, str) and is_pattern:
            found.append((name, value))
        elif isinstance(value, Mapping):
            stack.extend(
                (str(k), v, str(k) in _PATTERN_OPTIONS, depth + 1) for k, v in value.items()
            )
        elif isinstance(value, list | tuple):
            stack.extend((name, v, is_pattern, depth + 1) for v in value)
    return found


def regex_risk(pattern: str) -> str | None:
    """Why searching with ``pattern`` could take more than linear time, or None.

    Stricter than a rubric's own patterns (:func:`gradeloop.grading.linear_regex`,
    which runs unbounded repeats on RE2): the rubric ``propose`` writes must load and
    run in linear time on any install, so a proposed pattern must run so on Python's
    ``re`` alone. It is accepted when every repeat is bounded and none is nested in
    another, it has no backreference, and the steps it can try at one position
    (repeat bounds multiplied along a sequence, branches added) stay within
    :data:`MAX_REGEX_COST`: one search then takes milliseconds on a long draft.
    """
    if len(pattern) > _MAX_PATTERN:
        return f"is {len(pattern)} characters long; at most {_MAX_PATTERN}"
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"does not compile ({exc})"
    risk = backtracking_risk(pattern)
    if risk is not None and "unbounded" in risk:
        risk += "; bound it, e.g. {1,20}"
    return risk


def _value(v: Any) -> str:
    return json.dumps(_plain(v), ensure_ascii=False)


def _plain(value: Any) -> Any:
    """Options as JSON values (validated options may hold tuples)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not a JSON number")
    return value
