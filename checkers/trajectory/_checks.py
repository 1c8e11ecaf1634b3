"""The five trajectory checkers and their options (validated when a rubric loads).

Each reads the draft's transcript from its context (``context.transcript``); a text
draft, which has none, fails with "the draft has no tool calls"
(:func:`._read.no_transcript`). Each returns ``True`` when the draft passes (a bare
answer: grading builds nothing to read it) and names the calls at fault in one-line
issues of a ``CheckResult`` when it does not.
They are called once per draft and key, so each reads the context itself rather
than through a wrapper (a wrapper's extra call and re-packed options cost about
as much as the cheaper checks themselves).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, with_config
from typing_extensions import TypedDict

from gradeloop import CheckResult
from gradeloop.grading import CheckContext

from .._options import Count, NonEmpty, not_below, one_of_required
from ._args import ArgsMode, covers, same
from ._modes import MODES
from ._read import call_text, compact_json, listed, no_transcript, wants_from

__all__ = ["step_count", "tool_args_match", "tool_called", "tool_not_called", "tool_sequence"]


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"arguments must be JSON data (strings, numbers, booleans, lists, tables): {exc}"
        ) from None
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
"""A tool call's arguments as a rubric writes them: a table of JSON values."""


@with_config(ConfigDict(extra="forbid"))
class ExpectedCall(TypedDict):
    """One expected call: ``{name = "refund", args = {order_id = "A1"}}``; without
    ``args`` any arguments do."""

    name: NonEmpty
    args: NotRequired[JsonObject]


Mode = Literal["strict", "unordered", "subset", "superset"]
Match = Literal["exact", "subset"]


def _some_limit(value: int | None, info: ValidationInfo) -> int | None:
    if value is None and info.data.get("min") == 0:
        raise ValueError("min = 0 with no max lets every draft pass; set max, or raise min")
    return value


def _something_expected(
    value: Sequence[ExpectedCall] | None, info: ValidationInfo
) -> Sequence[ExpectedCall] | None:
    if value is not None and not value and info.data.get("mode") == "superset":
        raise ValueError(
            "mode = superset with expected = [] lets every draft pass (every list of calls "
            "holds none); list the calls that must be made, or use mode = strict for none"
        )
    return value


def tool_called(
    text: str,
    /,
    *,
    name: NonEmpty,
    min: Count = 1,
    max: Annotated[
        Count | None, Field(validate_default=True), not_below("min"), AfterValidator(_some_limit)
    ] = None,
    context: CheckContext | None = None,
) -> CheckResult | bool:
    """The agent called tool ``name`` at least ``min`` times (default 1) and at most ``max``."""
    transcript = context.transcript if context is not None else None
    if transcript is None:
        return no_transcript()
    made = 0
    for c in transcript.calls:  # loops, not comprehensions: each draft's keys pass here
        if c.name == name:
            made += 1
    if made < min:
        need = "once" if min == 1 else f"{min} times"
        return CheckResult(False, [f"{name!r} was called {_times(made)}; call it at least {need}"])
    if max is not None and made > max:
        at = [c.message_index for c in transcript.calls if c.name == name]
        where = ", ".join(map(str, at[:10])) + (", ..." if made > 10 else "")
        issue = f"{name!r} was called {_times(made)} (messages {where})"
        return CheckResult(False, [f"{issue}; at most {max} allowed"])
    return True


def tool_not_called(
    text: str,
    /,
    *,
    names: Annotated[tuple[NonEmpty, ...], Field(min_length=1)],
    context: CheckContext | None = None,
) -> CheckResult | bool:
    """The agent called none of the tools in ``names``."""
    transcript = context.transcript if context is not None else None
    if transcript is None:
        return no_transcript()
    forbidden = set(names)
    issues = []
    for c in transcript.calls:
        if c.name in forbidden:
            issues.append(f"forbidden tool {c.name!r} was called: {call_text(c)}")
    if not issues:
        return True
    return CheckResult(False, listed(issues, "more forbidden calls"))


def tool_sequence(
    text: str,
    /,
    *,
    mode: Mode = "strict",
    args: ArgsMode = "exact",
    expected: Annotated[Sequence[ExpectedCall] | None, AfterValidator(_something_expected)] = None,
    context: CheckContext | None = None,
) -> CheckResult | bool:
    """The agent's tool calls match the expected ones (``expected``, else the reference
    transcript's): ``strict`` the same calls in order, ``unordered`` the same calls,
    ``subset`` only expected calls, ``superset`` every expected call."""
    transcript = context.transcript if context is not None else None
    if transcript is None:
        return no_transcript()
    wants = wants_from(expected, context)
    if isinstance(wants, str):
        return CheckResult(False, [wants])
    outcome = MODES[mode](transcript.calls, wants, args)
    if outcome.passed:  # every call paired: no issues, score 10 (what a bare True reads as)
        return True
    return CheckResult(False, outcome.issues, outcome.score)


def tool_args_match(
    text: str,
    /,
    *,
    name: NonEmpty,
    args: JsonObject,
    match: Match = "exact",
    context: CheckContext | None = None,
) -> CheckResult | bool:
    """A call of tool ``name`` has exactly ``args`` (``match="subset"``: at least
    ``args``, nested objects compared the same way)."""
    transcript = context.transcript if context is not None else None
    if transcript is None:
        return no_transcript()
    fits = same if match == "exact" else covers
    made = []
    for c in transcript.calls:
        if c.name == name:
            if fits(args, c.args):
                return True
            made.append(c)
    if not made:
        return CheckResult(False, [f"{name!r} was never called"])
    wanted = compact_json(args)
    shown = "; ".join(call_text(c) for c in made[:3]) + ("; ..." if len(made) > 3 else "")
    how = "exactly these arguments" if match == "exact" else "these arguments (and maybe more)"
    return CheckResult(False, [f"no call of {name!r} has {how}: {wanted}; its calls: {shown}"])


def step_count(
    text: str,
    /,
    *,
    min: Count | None = None,
    max: Annotated[
        Count | None,
        Field(validate_default=True),
        not_below("min"),
        one_of_required(("min", "max")),
    ] = None,
    context: CheckContext | None = None,
) -> CheckResult | bool:
    """The agent took at least ``min`` and at most ``max`` steps (assistant messages)."""
    transcript = context.transcript if context is not None else None
    if transcript is None:
        return no_transcript()
    steps = transcript.assistant_turns
    if min is not None and steps < min:
        return CheckResult(False, [f"the agent took {_steps(steps)}; it needs at least {min}"])
    if max is not None and steps > max:
        return CheckResult(False, [f"the agent took {_steps(steps)}; at most {max} allowed"])
    return True


def _times(n: int) -> str:
    return {0: "never", 1: "once"}.get(n, f"{n} times")


def _steps(n: int) -> str:
    return "1 step (assistant message)" if n == 1 else f"{n} steps (assistant messages)"
