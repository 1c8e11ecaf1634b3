"""Miners for the trajectory checkers: options read off the transcripts' tool calls.

A judge key such as "used the lookup tool before answering" is often a trajectory
rule in disguise. These miners propose, from the training transcripts:

* ``tool_called`` - a tool the met runs call and the unmet ones do not;
* ``tool_not_called`` - a tool (or the few together) the unmet runs call;
* ``tool_sequence`` - the met runs' most common sequence of calls, as ``strict``,
  ``unordered`` and ``superset`` expectations (arguments ignored: only names are mined).

``step_count``'s bounds need no miner of their own: the generic threshold sweep asks
the real checker. Text drafts have no tool calls, and then nothing is proposed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ..grading._checks import CheckerInfo
from ._propose_data import MiningData
from ._propose_phrases import Features, Proposal

__all__ = ["TOOL_MINERS"]

#: The longest call sequence proposed as an expectation (longer ones are not rules).
MAX_EXPECTED = 50


def _names(data: MiningData) -> list[tuple[str, ...]]:
    """Each training draft's tool names (once each; none for a text draft)."""
    return [
        tuple({c.name: None for c in e.transcript.tool_calls}) if e.transcript else ()
        for e in data.examples
    ]


def _features(data: MiningData, names: Sequence[tuple[str, ...]]) -> Features:
    """Document frequency of each tool name among met and unmet runs. Features counts
    what a function finds per draft: here the draft is its index into ``names``."""
    f = Features([str(i) for i in range(len(names))], data.met, data.min_support, data.description)
    f.count(lambda i: names[int(i)])
    return f


def _tool_called(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    names = _names(data)
    if not any(names):
        return []
    ranked = _features(data, names).ranked(True)
    return [(info.name, {"name": n}, "a tool the met runs call") for n in ranked[:2]]


def _tool_not_called(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    names = _names(data)
    if not any(names):
        return []
    f = _features(data, names)
    ranked = f.ranked(False)
    out: list[Proposal] = [
        (info.name, {"names": [n]}, "a tool the unmet runs call") for n in ranked[:2]
    ]
    f.load_masks(lambda i: names[int(i)], ranked[:20])
    chosen = f.greedy(ranked[:20], False, any_of=True)
    if len(chosen) > 1:
        out.append((info.name, {"names": chosen}, "the tools the unmet runs call, together"))
    return out


def _tool_sequence(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    runs = Counter(
        tuple(c.name for c in e.transcript.tool_calls)
        for e in data.examples
        if e.met and e.transcript is not None and 0 < len(e.transcript.tool_calls) <= MAX_EXPECTED
    )
    if not runs:
        return []
    common, _ = runs.most_common(1)[0]
    expected = [{"name": n} for n in common]
    why = "the met runs' most common sequence of calls"
    return [
        (info.name, {"mode": mode, "args": "ignore", "expected": expected}, f"{why} ({mode})")
        for mode in ("strict", "unordered", "superset")
    ]


TOOL_MINERS = {
    "tool_called": _tool_called,
    "tool_not_called": _tool_not_called,
    "tool_sequence": _tool_sequence,
}
"""The trajectory checkers' miners, added to the table of :mod:`._propose_mine`."""
