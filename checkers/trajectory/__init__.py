"""Trajectory checkers: what an agent did, read from its transcript's tool calls.

``tool_called``, ``tool_not_called``, ``tool_sequence``, ``tool_args_match`` and
``step_count``. A draft given as an agent's messages (a :class:`gradeloop.Transcript`)
reaches them through ``context.transcript``; its final text is what text checkers
read. On a text draft each fails with an issue saying it has no tool calls.

The match functions (``match_strict``, ``match_unordered``, ``match_subset``,
``match_superset``) can be called directly on a list of :class:`gradeloop.grading.ToolCall`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._checks import step_count, tool_args_match, tool_called, tool_not_called, tool_sequence
from ._modes import MODES, Outcome, match_strict, match_subset, match_superset, match_unordered
from ._pair import WORK_LIMIT, Want

__all__ = [
    "CHECKERS",
    "MODES",
    "WORK_LIMIT",
    "Outcome",
    "Want",
    "match_strict",
    "match_subset",
    "match_superset",
    "match_unordered",
]

CHECKERS: dict[str, Callable[..., Any]] = {
    "tool_called": tool_called,
    "tool_not_called": tool_not_called,
    "tool_sequence": tool_sequence,
    "tool_args_match": tool_args_match,
    "step_count": step_count,
}
