"""What the trajectory checkers read besides the draft's calls, and how calls are named.

Every trajectory checker reads its transcript from the draft's
:class:`gradeloop.grading.CheckContext` (``context.transcript``), and its expected calls
here (:func:`wants_from`), from its ``expected`` option or the reference transcript.
A text draft has no transcript: each checker then fails with :data:`NO_CALLS`
(:func:`no_transcript`), never passes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gradeloop import CheckResult
from gradeloop.grading import CheckContext, ToolCall

from ._pair import Want

__all__ = [
    "MAX_LISTED",
    "NO_CALLS",
    "call_text",
    "compact_json",
    "listed",
    "no_transcript",
    "want_text",
    "wants_from",
]

NO_CALLS = (
    "the draft has no tool calls: it is text, not an agent's transcript; grade the "
    "agent's messages (a Transcript or a list of message dicts) to check its tool calls"
)
#: Calls named one by one in a checker's issues; the rest are counted.
MAX_LISTED = 5
_ARGS_SHOWN = 80  # characters of a call's arguments quoted in an issue


def no_transcript() -> CheckResult:
    """What every trajectory checker says of a text draft."""
    return CheckResult(False, [NO_CALLS])


#: How issues write a call's arguments: compact JSON, non-ASCII kept. One encoder for
#: every issue (``json.dumps`` with these options builds a new one on each call).
compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _args_text(args: Mapping[str, Any]) -> str:
    try:
        text = compact_json(args) if args else ""
    except (TypeError, ValueError, RecursionError):
        text = "..."
    return text if len(text) <= _ARGS_SHOWN else text[: _ARGS_SHOWN - 1] + "…"


def call_text(call: ToolCall) -> str:
    """``refund({"amount":3,"order_id":"A1"}) (message 4)``: a call as issues name it."""
    return f"{call.name}({_args_text(call.args)}) (message {call.message_index})"


def want_text(want: Want) -> str:
    """An expected call as issues name it (``...`` for any arguments)."""
    args = "..." if want.args is None else _args_text(want.args)
    return f"{want.name}({args})"


def listed(issues: Sequence[str], what: str = "more") -> list[str]:
    """At most :data:`MAX_LISTED` issues, and a count of the rest."""
    if len(issues) <= MAX_LISTED:
        return list(issues)
    return [*issues[:MAX_LISTED], f"... and {len(issues) - MAX_LISTED} {what}"]


def wants_from(
    expected: Iterable[Mapping[str, Any]] | None, context: CheckContext | None
) -> list[Want] | str:
    """The expected calls: the ``expected`` option, else the reference transcript's
    calls; an issue (a string) when there are neither."""
    if expected is not None:
        return [Want(str(e["name"]), _args_of(e), n) for n, e in enumerate(expected)]
    reference = context.reference_transcript if context is not None else None
    if reference is not None:
        return [Want(c.name, c.args, n) for n, c in enumerate(reference.calls)]
    if context is not None and context.reference is not None:
        return (
            "the reference is text, with no tool calls to expect; give the reference as "
            "an agent's messages, or list the calls in this criterion's `expected` option"
        )
    return (
        "no expected calls: list them in this criterion's `expected` option, or give a "
        "reference transcript (grade(..., reference=messages), 'reference' in a JSONL line)"
    )


def _args_of(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    args = entry.get("args")
    return dict(args) if isinstance(args, Mapping) else None
