"""A tiny HTML builder where escaping is the default, and the page around it.

Every piece of text that is not a :class:`Safe` fragment is escaped when it is put
into an element or an attribute, so user and model text (tasks, drafts, reasoning,
issues, criterion keys, ids) can only ever be shown, never interpreted. As a second
line of defence the page forbids every script and every request to anything but
itself with a Content-Security-Policy: even a fragment that escaped escaping could
not run or reach the network.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable

__all__ = ["CSP", "CSP_HEADER", "Safe", "el", "esc", "join", "page", "when"]

#: No script at all; styles and images only inline; no fetches, frames or forms
#: to anywhere else. ``form-action 'self'`` keeps the viewer's filter forms working.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; base-uri 'none'"
)
#: The viewer's header adds what a ``<meta>`` policy cannot carry.
CSP_HEADER = CSP + "; frame-ancestors 'none'"


class Safe(str):
    """An HTML fragment that is already safe to insert as it is."""

    __slots__ = ()


def esc(value: object) -> Safe:
    """``value`` as HTML text (a :class:`Safe` fragment is returned as it is)."""
    if isinstance(value, Safe):
        return value
    return Safe(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Safe:
    """The escaped parts, concatenated."""
    return Safe(sep.join(esc(p) for p in parts))


def el(tag: str, *children: object, **attrs: object) -> Safe:
    """``<tag attrs>children</tag>``; ``class_`` gives ``class``, underscores in other
    names become dashes, None / False attributes are left out, True gives a bare one."""
    parts = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        key = "class" if name == "class_" else name.rstrip("_").replace("_", "-")
        parts.append(key if value is True else f'{key}="{esc(value)}"')
    opening = "<" + " ".join(parts) + ">"
    if tag in ("br", "input", "meta", "hr"):
        return Safe(opening)
    return Safe(f"{opening}{join(children)}</{tag}>")


def svg_image(title: str, *layers: object, width: int, height: int, class_: str) -> Safe:
    """An inline SVG picture of ``width`` x ``height``, its ``title`` read by screen
    readers (``role="img"``), drawing ``layers`` in order."""
    return el(
        "svg",
        el("title", title),
        *layers,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        class_=class_,
        role="img",
    )


def when(ts: float | None) -> str:
    """A local date and time, minutes precision."""
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


_STYLE = """
:root { --ok: #1a7f37; --bad: #cf222e; --muted: #57606a; --line: #d0d7de; --bg2: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
  color: #1f2328; background: #fff; }
header.top { background: #24292f; color: #fff; padding: 10px 20px; }
header.top a { color: #fff; text-decoration: none; margin-right: 16px; font-weight: 600; }
main { padding: 16px 20px 40px; max-width: 1200px; }
h1 { font-size: 20px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 15px; }
section.loop { border-top: 3px solid #24292f; margin-top: 36px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg2); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: var(--bg2); border: 1px solid var(--line); padding: 8px; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 480px; overflow: auto; margin: 4px 0; }
.met { background: #dafbe1; color: var(--ok); } .failed { background: #ffebe9; color: var(--bad); }
.unchecked { background: var(--bg2); color: var(--muted); }
.badge { display: inline-block; border-radius: 10px; padding: 0 7px; font-size: 12px;
  font-weight: 600; border: 1px solid currentColor; }
.code { color: #0550ae; } .judge { color: #8250df; }
.pass { color: var(--ok); } .fail { color: var(--bad); } .muted { color: var(--muted); }
.changed { background: #fff8c5; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; margin: 8px 0; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; }
details { margin: 4px 0; } summary { cursor: pointer; }
.diff { font: 12px/1.4 ui-monospace, monospace; }
.diff .del { background: #ffebe9; } .diff .ins { background: #dafbe1; }
.diff .ctx { color: var(--muted); }
form.filters { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; margin: 8px 0 14px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
svg.plot { background: #fff; border: 1px solid var(--line); }
svg.plot text { font: 11px system-ui, sans-serif; fill: #57606a; }
svg.rates line.bar { stroke: #0969da; stroke-width: 2; }
svg.rates circle { fill: #0969da; }
.legend span { margin-right: 12px; white-space: nowrap; }
ol.transcript { padding-left: 28px; } ol.transcript > li { margin: 6px 0; }
ol.transcript .result { margin-left: 12px; }
.swatch { display: inline-block; width: 18px; height: 3px; vertical-align: middle;
  margin-right: 4px; }
"""


def page(title: str, body: Safe, *, nav: Safe | None = None) -> str:
    """A complete, self-contained HTML document (inline CSS, no script, strict CSP)."""
    head = join(
        [
            Safe('<meta charset="utf-8">'),
            el("meta", http_equiv="Content-Security-Policy", content=CSP),
            el("meta", name="referrer", content="no-referrer"),
            el("meta", name="viewport", content="width=device-width, initial-scale=1"),
            el("title", title),
            Safe(f"<style>{_STYLE}</style>"),
        ]
    )
    top = el("header", nav if nav is not None else el("strong", "gradeloop"), class_="top")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>'
        f"<body>{top}<main>{body}</main></body></html>\n"
    )
