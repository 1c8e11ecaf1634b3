"""Reading draft and label files: JSON Lines, one object per line, errors by line.

Every problem is an :class:`~gradeloop.errors.InputError` whose message starts
with ``FILE:LINE:`` and says what to fix, so the CLI can print it as one line.
Blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..grading._files import read_utf8
from ..grading._rubric import Rubric
from ..grading._transcript import Transcript
from ..grading._turns import strict_loads
from ..judging._bias import PairItem

__all__ = ["DraftItem", "LabelledItem", "digest", "read_drafts", "read_labels", "read_pairs"]

_DRAFT_FIELDS = ("id", "task", "draft", "messages", "reference", "metadata")
_LABEL_FIELDS = ("id", "task", "draft", "messages", "labels", "reference", "metadata")


@dataclass(frozen=True)
class DraftItem:
    """A draft to grade: its id (the output id shadow outcomes are stored under).

    ``draft`` is the text, or the agent's :class:`~gradeloop.Transcript` (a line's
    ``"messages"``). ``reference`` and ``metadata`` (optional) reach the checkers
    that declare a ``context`` parameter, as :class:`~gradeloop.grading.CheckContext`.
    """

    output_id: str
    task: str
    draft: str | Transcript
    where: str = ""
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LabelledItem:
    """A draft with people's labels: ``{key: True/False}`` or ``{key: score 1-10}``."""

    output_id: str
    task: str
    draft: str | Transcript
    labels: Mapping[str, bool | float]
    where: str = ""
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


def read_drafts(path: str | Path, *, default_task: str | None = None) -> list[DraftItem]:
    """``{"task", "draft"}`` objects (``"id"`` optional; ``task`` may come from
    ``default_task``). A line may carry an agent's ``"messages"`` instead of a
    ``"draft"``, and its ``"reference"`` may be messages too (docs/agents.md)."""
    items: list[DraftItem] = []
    seen: dict[str, str] = {}
    for line, obj, where in _objects(path, "drafts"):
        _known(obj, _DRAFT_FIELDS, where)
        task, draft = _task_and_draft(obj, default_task, where)
        reference, metadata = _context_fields(obj, where)
        ident = _id(obj, path, line, where, seen)
        items.append(DraftItem(ident, task, draft, where, reference, metadata))
    if not items:
        raise InputError(f"{path}: no drafts in the file; one JSON object per line")
    return items


_PAIR_FIELDS = ("id", "task", "a", "b")


def read_pairs(path: str | Path, *, default_task: str | None = None) -> list[PairItem]:
    """``{"a", "b"}`` objects (``"task"`` and ``"id"`` optional; ``task`` may come from
    ``default_task``): the pairs ``gradeloop prefer --pairs`` compares."""
    items: list[PairItem] = []
    seen: dict[str, str] = {}
    for line, obj, where in _objects(path, "pairs"):
        _known(obj, _PAIR_FIELDS, where)
        for name in ("a", "b"):
            if name not in obj:
                raise InputError(f"{where}: missing field {name!r} (a draft's text)")
            if not isinstance(obj[name], str):
                raise InputError(f"{where}: {name!r} must be a string, not {_kind(obj[name])}")
        task = obj.get("task", default_task)
        if task is not None and not isinstance(task, str):
            raise InputError(f"{where}: 'task' must be a string, not {_kind(task)}")
        ident = _id(obj, path, line, where, seen)
        items.append(PairItem(obj["a"], obj["b"], task, ident))
    if not items:
        raise InputError(f"{path}: no pairs in the file; one JSON object per line")
    return items


def read_labels(
    path: str | Path, rubric: Rubric, *, default_task: str | None = None
) -> list[LabelledItem]:
    """Labelled drafts, each label checked against the rubric's key and scale."""
    items: list[LabelledItem] = []
    seen: dict[str, str] = {}
    for line, obj, where in _objects(path, "labels"):
        _known(obj, _LABEL_FIELDS, where)
        task, draft = _task_and_draft(obj, default_task, where)
        if "labels" not in obj:
            raise InputError(
                f"{where}: missing field 'labels' (an object of "
                "{criterion key: true/false or a 1-10 score})"
            )
        labels = _labels(obj["labels"], rubric, where)
        reference, metadata = _context_fields(obj, where)
        ident = _id(obj, path, line, where, seen)
        items.append(LabelledItem(ident, task, draft, labels, where, reference, metadata))
    if not items:
        raise InputError(f"{path}: no labelled drafts in the file; one JSON object per line")
    return items


def digest(path: str | Path) -> str:
    """A short content hash, to tell whether two runs used the same file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _objects(path: str | Path, what: str) -> Iterator[tuple[int, dict[str, Any], str]]:
    text = read_utf8(path, what)
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        where = f"{path}:{number}"
        try:
            obj = strict_loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{where}: invalid JSON: {exc.msg} (column {exc.colno}); "
                "each line must be one JSON object"
            ) from None
        except RecursionError:
            raise InputError(f"{where}: nested too deeply to read") from None
        except ValueError as exc:  # a key twice: a reader would keep the last value
            raise InputError(f"{where}: ambiguous JSON: {exc}; write each key once") from None
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object, got {_kind(obj)}")
        yield number, obj, where


def _known(obj: Mapping[str, Any], fields: tuple[str, ...], where: str) -> None:
    for name in obj:
        if name not in fields:
            close = difflib.get_close_matches(name, fields, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "fields: " + ", ".join(fields)
            raise InputError(f"{where}: unknown field {name!r}; {hint}")


def _task_and_draft(
    obj: Mapping[str, Any], default_task: str | None, where: str
) -> tuple[str, str | Transcript]:
    draft: str | Transcript | None = obj.get("draft")
    if "messages" in obj:
        if draft is not None:
            raise InputError(
                f"{where}: give 'draft' (text) or 'messages' (an agent's transcript), not both"
            )
        draft = _transcript(obj["messages"], where, "messages")
    if draft is None:
        raise InputError(
            f"{where}: missing field 'draft' (the text to grade) or 'messages' (a transcript)"
        )
    if not isinstance(draft, str | Transcript):
        raise InputError(f"{where}: 'draft' must be a string, not {_kind(draft)}")
    task = obj.get("task", default_task)
    if task is None:
        raise InputError(
            f"{where}: missing field 'task'; add it, or give --task/--task-file for every line"
        )
    if not isinstance(task, str):
        raise InputError(f"{where}: 'task' must be a string, not {_kind(task)}")
    return task, draft


def _transcript(value: Any, where: str, field: str) -> Transcript:
    """A line's messages, read; an error names the line, the field and the message."""
    if not isinstance(value, list | dict):
        raise InputError(
            f"{where}: {field!r} must be a list of messages (or an object with "
            f"'messages'), not {_kind(value)}"
        )
    return Transcript.from_json(value, source=f"{where}: {field!r}")  # names the message


def _context_fields(
    obj: Mapping[str, Any], where: str
) -> tuple[str | Transcript | None, dict[str, Any]]:
    """The optional ``reference`` (a string, or messages) and ``metadata`` (an object)."""
    reference = obj.get("reference")
    if isinstance(reference, list | dict):
        reference = _transcript(reference, where, "reference")
    elif reference is not None and not isinstance(reference, str):
        raise InputError(
            f"{where}: 'reference' must be a string or a list of messages, not {_kind(reference)}"
        )
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise InputError(
            f"{where}: 'metadata' must be an object of {{name: value}}, not {_kind(metadata)}"
        )
    return reference, metadata


def _id(
    obj: Mapping[str, Any], path: str | Path, line: int, where: str, seen: dict[str, str]
) -> str:
    given = obj.get("id")
    if given is None:
        return f"{Path(path).name}:{line}"
    if not isinstance(given, str | int) or isinstance(given, bool) or given == "":
        raise InputError(f"{where}: 'id' must be a non-empty string or an integer")
    ident = str(given)
    if ident in seen:
        raise InputError(
            f"{where}: id {ident!r} is already used at {seen[ident]}; give every line its own id"
        )
    seen[ident] = where
    return ident


def _labels(raw: Any, rubric: Rubric, where: str) -> dict[str, bool | float]:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: 'labels' must be an object of {{key: value}}, not {_kind(raw)}")
    if not raw:
        raise InputError(f"{where}: 'labels' is empty; label at least one criterion")
    out: dict[str, bool | float] = {}
    for key, value in raw.items():
        if key not in rubric:
            close = difflib.get_close_matches(key, rubric.keys, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "keys: " + ", ".join(rubric.keys)
            raise InputError(f"{where}: unknown criterion {key!r} in 'labels'; {hint}")
        c = rubric[key]
        if c.scale == "score":
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 1 <= value <= 10
            ):
                raise InputError(
                    f"{where}: label {key!r} is a scored criterion: give a score "
                    f"from 1 to 10, not {json.dumps(value)}"
                )
            out[key] = float(value)
        else:
            if not isinstance(value, bool):
                raise InputError(
                    f"{where}: label {key!r} is a pass/fail criterion: give true "
                    f"or false, not {json.dumps(value)}"
                )
            out[key] = value
    return out


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)
