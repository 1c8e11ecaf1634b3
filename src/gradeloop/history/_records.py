"""Reading stored records back: a damaged row is named and left out, never a crash.

A history file is plain SQLite: a disk, another program or a person can leave a row
that is not JSON, JSON nested 200,000 deep, or JSON of the wrong shape (a list, text
where an evaluation was). Every reader of a draft's or a round's record goes through
:func:`read_record`: a damaged row is left out with one
:class:`~gradeloop.errors.HistoryWarning` naming its run and row, and the rest is read
as usual. A run's own settings (its rubric, its config) that are damaged make the run
unreadable: :func:`read_settings` raises :class:`~gradeloop.errors.HistoryError`
naming it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

from ..errors import HistoryError, HistoryWarning

__all__ = ["read_record", "read_settings", "record_problem"]

_TEXT = ("item_id", "output_id", "task", "content", "error", "judge_error", "reasoning")
_TABLES = ("evaluation", "detail", "metadata", "usage", "generation_usage", "evaluation_usage")


def read_record(text: Any, where: str) -> dict[str, Any] | None:
    """The record stored as ``text``, or None (and a warning naming ``where``, such as
    ``"grading run grade_1, draft 2"``) when it is damaged."""
    record, problem = _parse(text)
    if problem is None:
        problem = record_problem(record)
    if problem is not None:
        warnings.warn(
            f"{where}: the stored record is damaged ({problem}); it is left out",
            HistoryWarning,
            stacklevel=3,
        )
        return None
    assert isinstance(record, dict)
    return record


def read_settings(text: Any, what: str, where: str) -> dict[str, Any]:
    """A run's stored ``what`` (its rubric, its config); :class:`HistoryError` naming
    ``where`` when it is damaged (the run cannot be read without it)."""
    value, problem = _parse(text)
    if problem is None and not isinstance(value, dict):
        problem = "not a JSON object"
    if problem is not None:
        raise HistoryError(f"{where}: its stored {what} is damaged ({problem}); it cannot be read")
    assert isinstance(value, dict)
    return value


def _parse(text: Any) -> tuple[Any, str | None]:
    if not isinstance(text, str):
        return None, "not text"
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "JSON nested too deeply to read"
    except ValueError as exc:
        return None, f"not JSON: {exc}"


def record_problem(record: Any) -> str | None:
    """What makes ``record`` (a stored draft or round) unreadable, or None: it must be
    an object whose known fields have their types (text, objects, numbers, lists of
    objects where the readers expect them)."""
    if not isinstance(record, dict):
        return f"not a JSON object but {_kind(record)}"
    for name in _TEXT:
        if record.get(name) is not None and not isinstance(record[name], str):
            return f"'{name}' is {_kind(record[name])}, not text"
    for name in _TABLES:
        if record.get(name) is not None and not isinstance(record[name], dict):
            return f"'{name}' is {_kind(record[name])}, not an object"
    number = record.get("iteration")
    if number is not None and (isinstance(number, bool) or not isinstance(number, int)):
        return f"'iteration' is {_kind(number)}, not a whole number"
    for section in ("evaluation", "detail"):
        problem = _criteria_problem(record.get(section), section)
        if problem is not None:
            return problem
    return None


def _criteria_problem(section: Any, name: str) -> str | None:
    if not isinstance(section, Mapping):
        return None
    score = section.get("overall_score")
    if score is not None and not _number(score):
        return f"'{name}.overall_score' is {_kind(score)}, not a number"
    criteria = section.get("criteria")
    if criteria is None:
        return None
    if not isinstance(criteria, list):
        return f"'{name}.criteria' is {_kind(criteria)}, not a list"
    for i, c in enumerate(criteria):
        where = f"'{name}.criteria[{i}]'"
        if not isinstance(c, dict):
            return f"{where} is {_kind(c)}, not an object"
        for field in ("key", "name", "source", "filled_by", "status", "feedback"):
            if c.get(field) is not None and not isinstance(c[field], str):
                return f"{where}.{field} is {_kind(c[field])}, not text"
        for field in ("score", "weight", "agreement"):
            value = c.get(field)
            if value is not None and not _number(value):
                return f"{where}.{field} is {_kind(value)}, not a number"
        for field in ("met", "passed", "checked"):
            if c.get(field) is not None and not isinstance(c[field], bool):
                return f"{where}.{field} is {_kind(c[field])}, not true or false"
        issues = c.get("issues")
        if issues is not None and (
            not isinstance(issues, list) or not all(isinstance(x, str) for x in issues)
        ):
            return f"{where}.issues is not a list of text"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if _number(value):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "text" if isinstance(value, str) else "another value"
