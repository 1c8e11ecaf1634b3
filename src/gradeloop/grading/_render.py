"""The compact text of a transcript that the judge reads (and people, in reports).

One numbered line per message (``[3] assistant: ...``), the calls it makes and the
results it holds indented under it. Every line a message's own text adds is
indented too, so no text inside a message can forge the line of another message.
Tool results, often long pages of data, are cut at ``RESULT_LIMIT`` characters with
the cut said; the agent's and the user's words are never cut. The rendering is
deterministic (the verdict cache keys on it) and linear in the transcript's size.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._messages import ToolResult, Turn

__all__ = ["RESULT_LIMIT", "render"]

#: The characters of one tool result shown to the judge; the rest is counted.
RESULT_LIMIT = 2000
INDENT = "    "


def render(turns: Sequence[Turn], calls: int, *, result_limit: int = RESULT_LIMIT) -> str:
    """The transcript as the judge sees it."""
    head = (
        f"An agent's transcript: {_count(len(turns), 'message')}, {_count(calls, 'tool call')}. "
        "Messages are numbered; the tool calls a message makes and the tool results it "
        "holds are indented under it."
    )
    lines = [head]
    for turn in turns:
        lines.append(f"[{turn.index}] {turn.role}:" + _text(turn.text, " ", INDENT))
        lines.extend(f"{INDENT}[{kind}]" for kind in turn.other)
        lines.extend(f"{INDENT}calls {call}" for call in turn.tool_calls)
        lines.extend(_result(r, result_limit) for r in turn.tool_results)
    return "\n".join(lines)


def _result(result: ToolResult, limit: int) -> str:
    what = "error from" if result.is_error else "result of"
    name = result.name or "a tool"
    content = result.content
    if len(content) > limit:
        content = f"{content[:limit]} … [{len(content) - limit:,} more characters]"
    return f"{INDENT}{what} {name}:" + _text(content, " ", INDENT * 2)


def _text(text: str, first: str, indent: str) -> str:
    """``text`` after a label: its first line after ``first``, the others indented."""
    if not text:
        return ""
    parts = text.splitlines() or [""]
    return first + f"\n{indent}".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
