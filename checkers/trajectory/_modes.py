"""The four ways a trajectory can match its expected calls: one function per mode.

Each takes the calls made, the calls expected and the ``args`` mode, and returns an
:class:`Outcome`; ``tool_sequence`` picks one by name. They are what a caller who
has tool calls in hand (no rubric, no grading) calls directly.

* ``strict``: the same calls in the same order. Calls the agent made together, in
  one message (parallel tool calls), may come in any order among themselves.
* ``unordered``: the same calls, as a multiset.
* ``subset``: every call made is among the expected ones (each expected call
  pairs with at most one call made).
* ``superset``: every expected call was made (more calls may have been).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gradeloop.grading import ToolCall

from ._args import ArgsMode, relates
from ._pair import Pairing, TooMuchWork, Want, pair
from ._read import call_text, listed, want_text

__all__ = ["MODES", "Outcome", "match_strict", "match_subset", "match_superset", "match_unordered"]


@dataclass(frozen=True)
class Outcome:
    """Whether the calls matched, why not (one-line issues), and a 0-10 score: the
    share of calls (or expected calls) that found their partner."""

    passed: bool
    issues: list[str] = field(default_factory=list)
    score: float = 10.0


def match_strict(calls: Sequence[ToolCall], wants: Sequence[Want], args: ArgsMode) -> Outcome:
    """The same calls in the same order (a message's parallel calls in any order)."""
    total = max(len(calls), len(wants), 1)
    done = i = 0  # expected calls matched so far; calls read so far
    while i < len(calls):
        j = i
        while j < len(calls) and calls[j].message_index == calls[i].message_index:
            j += 1
        group, ahead = calls[i:j], wants[done : done + j - i]
        problem = _group_problem(group, ahead, done, args)
        if problem is not None:
            return Outcome(False, [problem], _score(done, total))
        done, i = done + len(group), j
    if done < len(wants):
        rest = len(wants) - done - 1
        more = f" (and {rest} more after it)" if rest else ""
        return Outcome(
            False,
            [
                f"expected call {done + 1}, {want_text(wants[done])}{more}, was never made: "
                f"the agent made {_calls(len(calls))}"
            ],
            _score(done, total),
        )
    return Outcome(True)


def _group_problem(
    group: Sequence[ToolCall], ahead: Sequence[Want], done: int, args: ArgsMode
) -> str | None:
    """Why the calls of one message do not match the next expected calls, or None."""
    if len(ahead) < len(group):
        extra = group[len(ahead)]
        return (
            f"call {done + len(ahead) + 1}, {call_text(extra)}, was not expected: "
            f"the expected list ends after {_calls(done + len(ahead))}"
        )
    if len(group) == 1:
        call, want = group[0], ahead[0]
        if call.name == want.name and relates(args, call.args, want.args):
            return None
        expected = f"expected {want_text(want)}{_how(args, call, want)}"
        return f"call {done + 1} is {call_text(call)}; {expected}"
    try:
        paired = pair(group, ahead, args)
    except TooMuchWork as exc:
        return _too_much(exc, args)
    if paired.perfect:
        return None
    made = ", ".join(c.name for c in group)
    wanted = ", ".join(want_text(w) for w in ahead)
    return (
        f"calls {done + 1}-{done + len(group)} (made together in message "
        f"{group[0].message_index}: {made}) are not expected calls {done + 1}-"
        f"{done + len(group)}: {wanted}"
    )


def match_unordered(calls: Sequence[ToolCall], wants: Sequence[Want], args: ArgsMode) -> Outcome:
    """The same calls in any order: every call expected, every expected call made."""
    return _paired(calls, wants, args, calls_must_pair=True, wants_must_pair=True)


def match_subset(calls: Sequence[ToolCall], wants: Sequence[Want], args: ArgsMode) -> Outcome:
    """Every call made is among the expected calls (some may not have been made)."""
    return _paired(calls, wants, args, calls_must_pair=True, wants_must_pair=False)


def match_superset(calls: Sequence[ToolCall], wants: Sequence[Want], args: ArgsMode) -> Outcome:
    """Every expected call was made (other calls may have been made too)."""
    return _paired(calls, wants, args, calls_must_pair=False, wants_must_pair=True)


def _paired(
    calls: Sequence[ToolCall],
    wants: Sequence[Want],
    args: ArgsMode,
    *,
    calls_must_pair: bool,
    wants_must_pair: bool,
) -> Outcome:
    try:
        paired: Pairing = pair(calls, wants, args)
    except TooMuchWork as exc:
        return Outcome(False, [_too_much(exc, args)], 0.0)
    issues: list[str] = []
    if calls_must_pair:
        issues += listed(
            [f"{call_text(calls[i])} was not expected" for i in paired.unpaired_calls],
            "more calls not expected",
        )
    if wants_must_pair:
        called = {c.name for c in calls}
        issues += listed(
            [_never_made(wants[j], args, called) for j in paired.unpaired_wants],
            "more expected calls never made",
        )
    judged = (len(calls) if calls_must_pair else 0) + (len(wants) if wants_must_pair else 0)
    unpaired = (len(paired.unpaired_calls) if calls_must_pair else 0) + (
        len(paired.unpaired_wants) if wants_must_pair else 0
    )
    return Outcome(not issues, issues, _score(judged - unpaired, max(judged, 1)))


def _never_made(want: Want, args: ArgsMode, called: set[str]) -> str:
    text = f"expected call {want_text(want)} was never made"
    if want.name in called and want.args is not None and args != "ignore":
        text += f" with matching arguments (args={args!r}; {want.name} was called otherwise)"
    return text


def _how(args: ArgsMode, call: ToolCall, want: Want) -> str:
    if call.name == want.name:
        return f" (the arguments differ; args={args!r})"
    return ""


def _too_much(exc: TooMuchWork, args: ArgsMode) -> str:
    return (
        f"too many calls to pair by args={args!r}: {exc.calls} calls of {exc.name!r} "
        f"against {exc.wants} expected ones is past the work limit; list fewer expected "
        "calls, or compare with args='exact' or 'ignore'"
    )


def _calls(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


def _score(matched: int, total: int) -> float:
    return round(10 * matched / total, 2)


MODES: dict[str, Callable[[Sequence[ToolCall], Sequence[Want], ArgsMode], Outcome]] = {
    "strict": match_strict,
    "unordered": match_unordered,
    "subset": match_subset,
    "superset": match_superset,
}
