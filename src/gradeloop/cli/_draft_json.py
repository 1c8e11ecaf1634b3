"""The command line's decision about a ``.json`` draft file: an agent's transcript, or
text for the JSON checkers (issue 40).

Reading a transcript is :mod:`gradeloop.grading._transcript`'s; this module only
refuses, with one line naming the problem, a file that is meant as messages and cannot
be read as them, instead of grading its raw JSON as text (where a ``contains`` check
would pass on the JSON's own words). JSON stays text only when it clearly is not a
message list: an answer object, a list of numbers, a list of records with none of a
message's fields.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import InputError

__all__ = ["as_text_hint", "refuse_broken_messages", "refuse_message_like"]

# the fields that make an object a message (or a call / result item) in the shapes read
_MESSAGE_FIELDS = frozenset({"role", "tool_calls", "tool_call_id", "function_call"})
_NAMED = re.compile(r'"(?:role|messages|tool_calls|tool_call_id)"\s*:')


def as_text_hint(path: str) -> str:
    """How to grade a file that is refused as a transcript as plain text instead."""
    return f"to grade the file as plain text, give it on stdin: `gradeloop grade - < {path}`"


def refuse_broken_messages(path: str, text: str, exc: Exception) -> None:
    """Invalid JSON that names a message's fields (``"role":``, ``"messages":``) is a
    broken transcript: an error at its position. Other invalid JSON stays text (a JSON
    checker may be there to fail it)."""
    if not _NAMED.search(text):
        return
    if isinstance(exc, json.JSONDecodeError):
        where = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    else:
        where = "it is nested too deeply to read"
    raise InputError(
        f"{path} looks like a transcript (it names a message's fields) but is not valid "
        f"JSON: {where}; fix it, or {as_text_hint(path)}"
    )


def refuse_message_like(path: str, data: Any) -> None:
    """JSON that is meant as messages but was not read as a transcript: an empty list, a
    ``messages`` that is not a list, a lone message, or a list of objects with a
    message's fields that the reader did not take. Anything else returns (it is text)."""
    problem = _problem(data)
    if problem is not None:
        raise InputError(f"{path}: {problem}; {as_text_hint(path)}")


def _problem(data: Any) -> str | None:
    if isinstance(data, dict):
        if "messages" in data:
            kind = type(data["messages"]).__name__
            return f"'messages' must be a list of messages, not {_kind(kind)}"
        if "role" in data:
            return "this is one message; a transcript is a list of them: wrap it in [ ]"
        return None
    if not isinstance(data, list):
        return None
    if not data:
        return "an empty JSON list is a transcript with no messages; give the messages"
    for n, item in enumerate(data):
        if isinstance(item, dict) and (_MESSAGE_FIELDS & item.keys() or _typed(item)):
            return (
                f"item {n} looks like a message but the list is not a transcript gradeloop "
                "reads (each message needs a 'role', as in "
                '[{"role": "user", "content": "..."}])'
            )
    return None


def _typed(item: dict[str, Any]) -> bool:
    """A typed item with content, as chat exports write them (``{"type": "human",
    "content": ...}``)."""
    return isinstance(item.get("type"), str) and "content" in item


def _kind(name: str) -> str:
    return {"str": "a string", "dict": "an object", "int": "a number", "float": "a number",
            "bool": "true or false", "NoneType": "null"}.get(name, name)  # fmt: skip
