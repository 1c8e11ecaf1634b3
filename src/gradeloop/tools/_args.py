"""Reading the tools' arguments, and the error object a model gets when one is wrong.

Everything here raises :class:`ToolFailure`, which the runner turns into
``{"error": {"type": ..., "message": ...}}``. Messages say what was wrong and what
to send instead, because the reader is a model that will retry.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

from ..errors import RubricError
from ..grading._checks import file_options_within
from ..grading._criterion import unknown_field as _unknown_field
from ..grading._registry import Registry, default_registry
from ..grading._rubric import JUDGE, Criterion, Rubric

__all__ = [
    "ARGUMENTS",
    "MAX_ARGUMENT_CHARS",
    "MAX_ARGUMENT_DEPTH",
    "MAX_ARGUMENT_VALUES",
    "ToolFailure",
    "check_arguments",
    "criteria_arg",
    "feedback_arg",
    "optional_text",
    "required_text",
]

#: Each tool's (required, optional) argument names.
ARGUMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "generate_initial_output": (("task", "criteria"), ()),
    "evaluate_output": (("output",), ("criteria",)),
    "optimize_output": (("output",), ("feedback", "criteria")),
    "get_optimization_history": ((), ("loop_id",)),
}

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")

#: The largest argument a tool reads, each argument on its own: characters of text
#: (every string in it together), values (list items and object entries) and levels
#: of nesting. A call past one is ``invalid_arguments`` naming the argument and the
#: limit, before anything else is read.
MAX_ARGUMENT_CHARS = 2_000_000
MAX_ARGUMENT_VALUES = 10_000
MAX_ARGUMENT_DEPTH = 32


class ToolFailure(Exception):
    """A tool call that cannot be carried out; ``kind`` is the error object's ``type``."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(message)

    def to_json(self) -> dict[str, Any]:
        """The error object a tool returns."""
        return {"error": {"type": self.kind, "message": self.message}}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def check_arguments(tool: str, arguments: Any) -> dict[str, Any]:
    """The arguments as a dict, once every required one is present and none is unknown.

    A null value counts as absent, since some clients send every optional field.
    """
    required, optional = ARGUMENTS[tool]
    expected = ", ".join(required + optional) or "none"
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ToolFailure(
            "invalid_arguments",
            f"{tool} takes a JSON object of arguments ({expected}), not {_type_name(arguments)}",
        )
    given = {k: v for k, v in arguments.items() if v is not None}
    unknown = sorted(set(given) - set(required) - set(optional))
    if unknown:
        raise ToolFailure(
            "invalid_arguments", f"unknown argument {unknown[0]!r} for {tool}; it takes: {expected}"
        )
    missing = [name for name in required if name not in given]
    if missing:
        raise ToolFailure(
            "invalid_arguments", f"{tool} needs {missing[0]!r} (required: {', '.join(required)})"
        )
    for name, value in given.items():
        check_size(name, value)
    return given


def check_size(name: str, value: Any) -> None:
    """Refuse an argument past the limits (module constants), walking it without
    recursion and stopping at the first limit crossed."""
    chars = values = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            _too_big(name, f"nested more than {MAX_ARGUMENT_DEPTH} levels deep")
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, Mapping | list | tuple):
            values += len(item)
            children: Iterable[Any] = item
            if isinstance(item, Mapping):
                chars += sum(len(k) for k in item if isinstance(k, str))
                children = item.values()
            if values > MAX_ARGUMENT_VALUES:
                _too_big(name, f"more than {MAX_ARGUMENT_VALUES:,} values")
            stack.extend((child, depth + 1) for child in children)
        if chars > MAX_ARGUMENT_CHARS:
            _too_big(name, f"more than {MAX_ARGUMENT_CHARS:,} characters")


def _too_big(name: str, what: str) -> NoReturn:
    raise ToolFailure(
        "invalid_arguments",
        f"{name!r} is too large: {what}; send less (see the limits in the docs)",
    )


def required_text(args: Mapping[str, Any], name: str) -> str:
    """A non-blank string argument."""
    value = args.get(name)
    if not isinstance(value, str):
        raise ToolFailure(
            "invalid_arguments", f"{name!r} must be a string, not {_type_name(value)}"
        )
    if not value.strip():
        raise ToolFailure("invalid_arguments", f"{name!r} is empty; give the text itself")
    return value


def optional_text(args: Mapping[str, Any], name: str) -> str | None:
    """A string argument that may be absent."""
    return required_text(args, name) if name in args else None


def criteria_arg(
    args: Mapping[str, Any],
    registry: Registry | None = None,
    file_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> Rubric | None:
    """The ``criteria`` argument as a validated :class:`Rubric`; None when absent.

    Accepts the list itself or the list as JSON text (some clients send nested values
    as strings). An unknown checker is reported with the registered names.
    ``file_dirs`` (not None): file options must name paths inside these folders
    (none: every file option is refused).
    """
    raw = args.get("criteria")
    if raw is None:
        return None
    if isinstance(raw, str):
        if len(raw) > MAX_ARGUMENT_CHARS:
            _too_big("criteria", f"more than {MAX_ARGUMENT_CHARS:,} characters")
        try:
            raw = json.loads(raw)
        except RecursionError:
            _too_big("criteria", f"nested more than {MAX_ARGUMENT_DEPTH} levels deep")
        except ValueError:
            raise ToolFailure(
                "invalid_arguments",
                "'criteria' must be an array of criterion objects, not a string",
            ) from None
        check_size("criteria", raw)
    if not isinstance(raw, list) or not raw:
        raise ToolFailure(
            "invalid_arguments",
            "'criteria' must be a non-empty array of "
            f"criterion objects {{key, description, ...}}, not {_type_name(raw)}",
        )
    reg = registry or default_registry()
    for index, item in enumerate(raw):
        _check_item(item, index, reg)
    scope = file_options_within(file_dirs) if file_dirs is not None else contextlib.nullcontext()
    try:
        with scope:
            return Rubric.from_dict({"criteria": raw}, registry=reg)
    except RubricError as exc:
        raise ToolFailure("invalid_criteria", f"{exc}") from None


def _check_item(item: Any, index: int, registry: Registry) -> None:
    """Report a field typo or an unknown checker before anything else about the item."""
    if not isinstance(item, Mapping):
        raise ToolFailure(
            "invalid_criteria",
            f"criteria[{index}] must be an object "
            f"{{key, description, ...}}, not {_type_name(item)}",
        )
    key = item.get("key") if isinstance(item.get("key"), str) else f"criteria[{index}]"
    unknown = sorted(str(f) for f in set(item) - set(Criterion.model_fields))
    if unknown:  # a typo explains a "missing" field, so it is reported first
        message = _unknown_field(unknown[0], Criterion.model_fields, "criterion")
        raise ToolFailure("invalid_criteria", f"criterion {key!r}: {message}")
    name = item.get("checker")
    if name is None or name == JUDGE:
        return
    if not isinstance(name, str):
        raise ToolFailure(
            "invalid_criteria",
            f"criterion {key!r}: 'checker' must be a "
            f"checker's name (a string), not {_type_name(name)}",
        )
    if name not in registry:
        known = ", ".join(registry.names()) or "none"
        close = difflib.get_close_matches(name, list(registry.names()), n=1)
        guess = f" Did you mean {close[0]!r}?" if close else ""
        raise ToolFailure(
            "unknown_checker",
            f"criterion {key!r}: unknown checker {name!r}.{guess} Known checkers: {known}. "
            "Or omit 'checker' to have the LLM judge fill this criterion.",
        )


def feedback_arg(args: Mapping[str, Any]) -> list[str] | None:
    """The ``feedback`` argument as a list of issues; None when absent.

    A list is taken item by item. A string of bullet lines (``- a`` / ``* b`` /
    ``1. c``) is split into one issue per bullet; any other string is one issue.
    """
    raw = args.get("feedback")
    if raw is None:
        return None
    if isinstance(raw, list):
        if not all(isinstance(item, str) for item in raw):
            raise ToolFailure(
                "invalid_arguments",
                "'feedback' must be a string or an array of strings; one item is not a string",
            )
        issues = [item.strip() for item in raw if item.strip()]
    elif isinstance(raw, str):
        issues = _split_bullets(raw)
    else:
        raise ToolFailure(
            "invalid_arguments",
            f"'feedback' must be a string or an array of strings, not {_type_name(raw)}",
        )
    if not issues:
        raise ToolFailure(
            "invalid_arguments",
            "'feedback' is empty; say what to fix, or "
            "omit it to use the issues of the output's evaluation",
        )
    return issues


def _split_bullets(text: str) -> list[str]:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines and all(_BULLET.match(line) for line in lines):
        return [_BULLET.sub("", line, count=1).strip() for line in lines]
    stripped = text.strip()
    return [stripped] if stripped else []
