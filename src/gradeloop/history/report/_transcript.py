"""A stored transcript as HTML: each message with its role, text, tool calls and results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TranscriptError
from ...grading._transcript import Transcript, Turn
from ._html import Safe, el, join

__all__ = ["transcript_details"]


def transcript_details(record: Mapping[str, Any]) -> Safe | None:
    """A collapsed ``<details>`` with the record's transcript, or None when the draft
    is text (or its stored messages no longer read: the stored ``content`` is shown)."""
    raw = record.get("transcript")
    if not isinstance(raw, Mapping):
        return None
    try:
        transcript = Transcript.from_json(raw)
    except TranscriptError:
        return None
    calls = len(transcript.tool_calls)
    summary = f"transcript ({len(transcript)} messages, {calls} tool call{'s' * (calls != 1)})"
    items = join(_turn(t) for t in transcript.turns)
    return el(
        "details",
        el("summary", summary),
        el("ol", items, start="0", class_="transcript"),
        class_="transcript",
    )


def _turn(turn: Turn) -> Safe:
    parts: list[object] = [el("span", turn.role, class_=f"badge role {turn.role}")]
    if turn.text:
        parts.append(el("pre", turn.text, class_="draft"))
    parts.extend(el("span", f"[{kind}]", class_="muted") for kind in turn.other)
    for call in turn.tool_calls:
        parts.append(el("div", el("span", "calls ", class_="muted"), el("code", str(call))))
    for r in turn.tool_results:
        what = "error from" if r.is_error else "result of"
        parts.append(
            el(
                "div",
                el(
                    "span", f"{what} {r.name or 'a tool'}", class_="fail" if r.is_error else "muted"
                ),
                el("pre", r.content),
                class_="result",
            )
        )
    return el("li", join(parts), value=str(turn.index))
