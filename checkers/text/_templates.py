"""Templates in text-checker options: ``{task}``, ``{reference}``, ``{metadata[name]}``.

``contains`` / ``not_contains`` values and the ``regex`` pattern may name fields
of the draft's :class:`gradeloop.grading.CheckContext`, so "names the product from the
task" can be checked in code::

    options = { values = ["{metadata[product]}"] }

Only a brace group that starts with a letter or ``_`` is a field, so regex
quantifiers (``\\d{3}``, ``{2,5}``) and JSON text (``{"a": 1}``) are left alone;
``{{`` and ``}}`` are literal braces. A field name other than the three above is
a ``RubricError`` when the rubric loads (the option types here validate it). A
field that has no value for a draft (no reference given, a metadata name that
is absent) fails the check with an issue that says so, never a pass. Values
substituted into a regex are escaped: the task is text, not a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from gradeloop.grading import CheckContext

from .._options import regex_error

__all__ = [
    "Template",
    "TemplateRegex",
    "expand_values",
    "render_pattern",
    "template_problem",
]

FIELDS = ("task", "reference", "metadata")
_HELP = "a template names {task}, {reference} or {metadata[name]}; write {{ and }} for braces"

# One token at a time, no nested or adjacent unbounded repeats: linear on any input.
# In a regex a backslash escape is one token, so `\{name}` stays a literal brace.
# A field is any brace group that starts with a letter: `{task.product}` is caught
# as an unknown field rather than silently compared as literal text.
_TOKEN = r"\{\{|\}\}|\{([A-Za-z_][^{}\n]*)\}"
_CONTENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\[\]]*)\])?")
_PLAIN = re.compile(_TOKEN)
_IN_REGEX = re.compile(r"\\.|" + _TOKEN, re.DOTALL)


@dataclass(frozen=True)
class _Field:
    name: str
    key: str | None
    raw: str


def _parse(template: str, regex: bool) -> list[str | _Field]:
    """Literal runs and fields, in order (``{{``/``}}`` already turned into braces)."""
    parts: list[str | _Field] = []
    last = 0
    for m in (_IN_REGEX if regex else _PLAIN).finditer(template):
        token = m.group(0)
        if token.startswith("\\"):
            continue  # an escape in a regex: part of the literal run
        parts.append(template[last : m.start()])
        last = m.end()
        if token in ("{{", "}}"):
            parts.append(token[0])
            continue
        content = _CONTENT.fullmatch(m.group(1))
        if content is None:
            parts.append(_Field(m.group(1), None, token))  # not a name: unknown field
            continue
        key = content.group(2)
        if key is not None and len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
            key = key[1:-1]  # {metadata["name"]} reads as {metadata[name]}
        parts.append(_Field(content.group(1), key, token))
    parts.append(template[last:])
    return parts


def template_problem(template: str, *, regex: bool = False) -> str | None:
    """Why ``template`` names a field that cannot exist, or None when it is fine."""
    for part in _parse(template, regex):
        if not isinstance(part, _Field):
            continue
        if part.name not in FIELDS:
            return f"unknown template field {part.raw}; {_HELP}"
        if part.name == "metadata" and not part.key:
            return f"{part.raw} names no metadata entry; write {{metadata[name]}}"
        if part.name != "metadata" and part.key is not None:
            return f"{part.raw}: only metadata takes [name]; write {{{part.name}}}"
    return None


def _valid_template(value: str) -> str:
    problem = template_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _valid_regex_template(value: str) -> str:
    problem = template_problem(value, regex=True)
    if problem is not None:
        raise ValueError(problem)
    sample = "".join(p if isinstance(p, str) else "x" for p in _parse(value, True))
    problem = regex_error(sample)
    if problem is not None:
        raise ValueError(problem)
    return value


Template = Annotated[str, Field(min_length=1), AfterValidator(_valid_template)]
"""A text option that may name ``{task}``, ``{reference}`` or ``{metadata[name]}``."""

TemplateRegex = Annotated[str, Field(min_length=1), AfterValidator(_valid_regex_template)]
"""A regular expression that compiles and may name the same fields (their values escaped)."""


class _Missing(Exception):
    """A field with no value for this draft; the message is the check's issue."""


def _value(f: _Field, context: CheckContext | None) -> str | list[str]:
    problem = template_problem(f.raw)
    if problem is not None:  # only when called directly: a rubric refuses it at load
        raise _Missing(problem)
    ctx = context or CheckContext()
    if f.name == "task":
        if not ctx.task.strip():
            raise _Missing(
                f"the option names {f.raw}, but no task was given for this draft; "
                "give the task (grade(..., task=...), --task, or 'task' in the JSONL line)"
            )
        return ctx.task
    if f.name == "reference":
        if ctx.reference is None or not ctx.reference.strip():
            raise _Missing(
                f"the option names {f.raw}, but this draft has no reference answer; give one "
                "(grade(..., reference=...), --reference FILE, or 'reference' in the JSONL line)"
            )
        return ctx.reference
    return _metadata_value(f, ctx.metadata)


def _metadata_value(f: _Field, metadata: Mapping[str, Any]) -> str | list[str]:
    assert f.key is not None
    if f.key not in metadata:
        known = ", ".join(sorted(map(str, metadata))) or "none"
        raise _Missing(
            f"the option names {f.raw}, but this draft's metadata has no {f.key!r} "
            f"(its entries: {known})"
        )
    value = metadata[f.key]
    if isinstance(value, list | tuple) and value and all(_scalar(v) for v in value):
        return [_text(v) for v in value]
    if not _scalar(value) or _text(value) == "":
        raise _Missing(
            f"the option names {f.raw}, but metadata {f.key!r} is {value!r}; give a "
            "non-empty string or number (or a list of them)"
        )
    return _text(value)


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not (isinstance(value, str) and not value)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expand_values(
    values: Sequence[str], context: CheckContext | None
) -> tuple[list[str], list[str]]:
    """The values with their fields filled in, and the issues of the fields that could not be.

    A value that is exactly one field whose metadata value is a list becomes one
    value per item (``values = ["{metadata[products]}"]`` checks every product).
    """
    out: list[str] = []
    problems: list[str] = []
    for template in values:
        parts = _parse(template, regex=False)
        try:
            filled = [p if isinstance(p, str) else _value(p, context) for p in parts]
        except _Missing as exc:
            problems.append(str(exc))
            continue
        lists = [p for p in filled if isinstance(p, list)]
        if lists and len(parts) == 3 and parts[0] == parts[2] == "":
            out.extend(lists[0])
        else:
            out.append("".join(p if isinstance(p, str) else ", ".join(p) for p in filled))
    return out, problems


def render_pattern(pattern: str, context: CheckContext | None) -> tuple[str, str | None]:
    """The pattern with its fields filled in (escaped; a list becomes ``(?:a|b)``)."""
    pieces: list[str] = []
    for p in _parse(pattern, regex=True):
        if isinstance(p, str):
            pieces.append(p)
            continue
        try:
            value = _value(p, context)
        except _Missing as exc:
            return pattern, str(exc)
        if isinstance(value, list):
            pieces.append("(?:" + "|".join(re.escape(v) for v in value) + ")")
        else:
            pieces.append(re.escape(value))
    return "".join(pieces), None
