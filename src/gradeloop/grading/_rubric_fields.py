"""What a rubric's fields must hold, checked when it loads: its shape and depth, the
checker time limit, ``[generator]``, the weights' sum, the judges, and each criterion's
checker (and shadow checker) with its options, bound against the registry."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import CheckerConflictError, RubricError, UnknownCheckerError
from ._criterion import Criterion, unknown_field
from ._judge_specs import check_jury, parse_judge_spec
from ._registry import Registry

__all__ = [
    "MAX_DEPTH",
    "TOO_DEEP",
    "bind_checker",
    "check_shape",
    "check_weight_sum",
    "checker_timeout_problem",
    "generator_max_tokens",
    "judging_fields",
    "reward_table",
    "rubric_folder",
]

_GENERATOR_FIELDS = {"max_tokens"}
#: ``[reward]`` shapes: the weighted overall / 10, the gate as 1 / 0, the gate times the score
REWARD_SHAPES = ("score", "gate", "gate_score")
_REWARD_FIELDS = {"shape", "signed"}


def checker_timeout_problem(value: object) -> str | None:
    """Why ``value`` is not a checker time limit (None when it is one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"checker_timeout must be a number of seconds, not {value!r}"
    if not math.isfinite(value) or value < 0:
        return (
            f"checker_timeout must be a finite number of seconds >= 0 (0: no limit), not {value!r}"
        )
    return None


def reward_table(data: Mapping[str, Any], path: str | Path | None) -> dict[str, Any]:
    """``[reward] shape = "gate_score"  signed = true``: how :mod:`gradeloop.rewards`
    turns a grade into a reward when the call does not say (checked here, so a typo
    fails when the rubric loads, not at the first training step)."""
    table = data.get("reward")
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise RubricError("'reward' is a table: [reward] shape = \"gate_score\"", path=path)
    unknown = set(table) - _REWARD_FIELDS
    if unknown:
        field = sorted(unknown)[0]
        raise RubricError(unknown_field(field, _REWARD_FIELDS, "reward"), path=path)
    shape = table.get("shape", "score")
    if shape not in REWARD_SHAPES:
        raise RubricError(
            f"reward.shape must be one of {', '.join(REWARD_SHAPES)}, not {shape!r}", path=path
        )
    signed = table.get("signed", False)
    if not isinstance(signed, bool):
        raise RubricError(
            f"reward.signed is true (rewards in [-1, 1]) or false ([0, 1]), not {signed!r}",
            path=path,
        )
    return {k: table[k] for k in ("shape", "signed") if k in table}


def generator_max_tokens(data: Mapping[str, Any], path: str | Path | None) -> int | None:
    """``[generator] max_tokens = N``: the loop's drafts are cut off past N tokens (a
    small local model may otherwise write until the default 8,192)."""
    table = data.get("generator")
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise RubricError("'generator' is a table: [generator] max_tokens = 1024", path=path)
    unknown = set(table) - _GENERATOR_FIELDS
    if unknown:
        field = sorted(unknown)[0]
        raise RubricError(unknown_field(field, _GENERATOR_FIELDS, "generator"), path=path)
    value = table.get("max_tokens")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RubricError(
            f"generator.max_tokens must be a whole number of at least 1, not {value!r}",
            path=path,
        )
    return value


#: How deeply a rubric's tables and lists may nest (real rubrics use a handful).
MAX_DEPTH = 64
TOO_DEEP = (
    f"the rubric is nested too deeply to read (tables and lists at most {MAX_DEPTH} "
    "levels deep); flatten it"
)


def check_shape(data: Mapping[Any, Any], path: str | Path | None) -> None:
    """Field names are strings and nesting stays shallow, checked without recursion
    (so no later step - pydantic, JSON for the history - can overflow the stack)."""
    criteria = data.get("criteria")
    tables = (
        [data, *(c for c in criteria if isinstance(c, Mapping))]
        if isinstance(criteria, list)
        else [data]
    )
    for table in tables:  # the names of fields (an anchors table may have number keys)
        for key in table:
            if not isinstance(key, str):
                raise RubricError(
                    f"field names are strings; {key!r} ({type(key).__name__}) is not",
                    path=path,
                )
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise RubricError(TOO_DEEP, path=path)
        if isinstance(value, Mapping):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)


def check_weight_sum(
    items: Sequence[Criterion], path: Path | None, lines: Sequence[int | None]
) -> None:
    """Refuse weights whose sum (times a score of 10) is no finite number: the weighted
    mean would be NaN, and NaN compares false with pass_score, so it would pass."""
    total = 0.0
    for i, c in enumerate(items):
        total += c.weight
        if not math.isfinite(total * 10):
            raise RubricError(
                f"weight {c.weight:g} takes the sum of the weights past what a number "
                "holds; weights are relative, so use small ones (such as 1, 2, 0.5)",
                path=path,
                key=c.key,
                line=lines[i] if i < len(lines) else None,
            )


def rubric_folder(path: Path | None) -> Path | None:
    """Where a rubric's relative paths start: its file's folder (None: no file)."""
    return None if path is None else path.resolve().parent


def bind_checker(
    c: Criterion, registry: Registry, path: Path | None, line: int | None
) -> Criterion:
    """Resolve the checker (and a shadow checker); validate options now, not mid-run."""
    if c.shadow_source == "code":
        c = bind_shadow(c, registry, path, line)
    if c.checker is None:
        if c.options:
            raise RubricError(
                "'options' is only for criteria filled by a checker; "
                "add a checker or remove the options",
                path=path,
                key=c.key,
                line=line,
            )
        return c
    try:
        info = registry.info(c.checker)
    except (UnknownCheckerError, CheckerConflictError) as exc:
        # chained, so a caller (the CLI) can add its own way of loading a checker
        raise RubricError(str(exc), path=path, key=c.key, line=line) from exc
    try:
        options = info.validate_options(c.options, rubric_dir=rubric_folder(path))
    except ValueError as exc:
        raise RubricError(str(exc), path=path, key=c.key, line=line) from None
    if c.shadow == c.checker and c.shadow_options == options:
        raise RubricError(
            "the shadow is the primary checker with the same options, so it "
            "always agrees; change shadow_options or remove the shadow",
            path=path,
            key=c.key,
            line=line,
        )
    return c.model_copy(update={"options": options})


def bind_shadow(c: Criterion, registry: Registry, path: Path | None, line: int | None) -> Criterion:
    """A shadow checker is held to the same load-time checks as a primary one."""
    assert c.shadow is not None
    try:
        info = registry.info(c.shadow)
    except (UnknownCheckerError, CheckerConflictError) as exc:
        raise RubricError(f"shadow: {exc}", path=path, key=c.key, line=line) from exc
    try:
        options = info.validate_options(c.shadow_options, rubric_dir=rubric_folder(path))
    except ValueError as exc:
        raise RubricError(f"shadow_options: {exc}", path=path, key=c.key, line=line) from None
    return c.model_copy(update={"shadow_options": options})


def judging_fields(
    judge_models: Any, jury: Any, path: Path | None
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """A rubric's ``judge_models`` (``[PROVIDER:]MODEL[@URL]`` strings) and ``jury``
    table, checked; a RubricError naming the field and the fix."""
    if isinstance(judge_models, str) or not isinstance(judge_models, Sequence):
        raise RubricError(
            'judge_models is a list: judge_models = ["anthropic:claude-sonnet-4-5", '
            '"openai-compatible:qwen3-32b@http://localhost:8000/v1"]',
            path=path,
        )
    try:
        models = tuple(str(parse_judge_spec(m)) for m in judge_models)
        table = check_jury(jury) if jury is not None else {}
    except ValueError as exc:
        raise RubricError(str(exc), path=path) from None
    return models, table
