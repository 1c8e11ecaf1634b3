"""The reward-hacking watch over training steps: the training judge's reward against the
audit judge's on the same rollouts, as an inline SVG chart and a table.

Each audited step is a grading run of origin ``"reward-audit"`` whose
``config["reward_watch"]`` holds the step's figures (:mod:`gradeloop.rewards`' watch
writes them); a watch is the runs that share ``config["reward_watch"]["watch"]``. A gap
that widens step after step is the warning: the policy is learning what flatters the
training judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._html import Safe, el, join
from ._plot import PALETTE

__all__ = ["AUDIT_ORIGIN", "watch_section"]

#: The origin of the grading runs the watch records (gradeloop.rewards' AUDIT_ORIGIN).
AUDIT_ORIGIN = "reward-audit"
_W, _H = 640, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 16, 14, 34
_SERIES = (
    ("train_reward", "training judge", PALETTE[0]),
    ("audit_reward", "audit judge", PALETTE[1]),
)
_SHOWN = 12  # table rows: the latest steps


def watch_section(name: str, steps: Sequence[Mapping[str, Any]]) -> Safe:
    """One watch's section: the chart over its steps and a table of the latest ones."""
    signed = any(s.get("signed") for s in steps)
    low = -1.0 if signed else 0.0
    last = steps[-1] if steps else {}
    warn = (
        el("p", "the gap is widening: see docs/rewards.md (the reward-hacking watch)", class_="bad")
        if last.get("widening")
        else Safe("")
    )
    return el(
        "section",
        el("h2", f"reward watch: {name}"),
        el("p", f"{len(steps)} audited steps; shape {last.get('shape', 'score')}", class_="muted"),
        warn,
        _chart(steps, low),
        _legend(),
        _table(steps[-_SHOWN:]),
        class_="watch",
        data_watch=name,
    )


def _x(i: int, n: int) -> float:
    span = _W - _LEFT - _RIGHT
    return _LEFT + (span / 2 if n <= 1 else span * i / (n - 1))


def _y(value: float, low: float) -> float:
    share = (min(1.0, max(low, value)) - low) / (1.0 - low)
    return _TOP + (_H - _TOP - _BOTTOM) * (1 - share)


def _chart(steps: Sequence[Mapping[str, Any]], low: float) -> Safe:
    n = len(steps)
    layers: list[Safe] = []
    for tick in (low, (low + 1) / 2, 1.0):
        y = f"{_y(tick, low):.1f}"
        layers.append(el("line", x1=_LEFT, x2=_W - _RIGHT, y1=y, y2=y, stroke="#eaeef2"))
        layers.append(
            el("text", f"{tick:g}", x=_LEFT - 6, y=f"{float(y) + 4:.1f}", text_anchor="end")
        )
    every = max(1, n // 12)
    for i in range(0, n, every):
        label = str(steps[i].get("step", i))
        layers.append(
            el("text", label, x=f"{_x(i, n):.1f}", y=_H - _BOTTOM + 16, text_anchor="middle")
        )
    layers.append(el("text", "step", x=_W - _RIGHT, y=_H - 4, text_anchor="end"))
    for field, label, color in _SERIES:
        layers.append(_line(steps, field, label, color, low))
    return el(
        "svg",
        el("title", "training reward and audit reward over steps"),
        join(layers),
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {_W} {_H}",
        width=_W,
        height=_H,
        class_="plot watch-plot",
        role="img",
    )


def _line(
    steps: Sequence[Mapping[str, Any]], field: str, label: str, color: str, low: float
) -> Safe:
    n = len(steps)
    path: list[str] = []
    points: list[Safe] = []
    for i, s in enumerate(steps):
        value = s.get(field)
        if not isinstance(value, int | float):
            continue
        x, y = _x(i, n), _y(float(value), low)
        path.append(f"{'M' if not path else 'L'}{x:.1f},{y:.1f}")
        title = el("title", f"step {s.get('step', i)}: {label} {value:.3f}")
        points.append(
            el(
                "circle",
                title,
                cx=f"{x:.1f}",
                cy=f"{y:.1f}",
                r=3,
                fill=color,
                class_="point",
                data_step=s.get("step", i),
            )
        )
    line = (
        el("path", d="".join(path), fill="none", stroke=color, stroke_width=2)
        if len(path) > 1
        else Safe("")
    )
    return el("g", line, join(points), class_="series", data_series=field)


def _legend() -> Safe:
    return el(
        "div",
        join(
            el("span", el("span", class_="swatch", style=f"background:{color}"), label)
            for _, label, color in _SERIES
        ),
        class_="legend",
    )


def _num(value: Any, signed: bool = False) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _table(steps: Sequence[Mapping[str, Any]]) -> Safe:
    keys = sorted({k for s in steps for k in (s.get("agreement") or {})})
    head = el(
        "tr",
        join(el("th", h) for h in ("step", "audited", "training", "audit", "gap", "trend")),
        join(el("th", f"agreement: {k}") for k in keys),
    )
    rows = []
    for s in reversed(steps):
        agreement = s.get("agreement") or {}
        cells = [
            s.get("step"),
            s.get("audited"),
            _num(s.get("train_reward")),
            _num(s.get("audit_reward")),
            _num(s.get("gap"), True),
            _num(s.get("trend"), True),
        ]
        rows.append(
            el(
                "tr",
                join(el("td", c) for c in cells),
                join(el("td", _num(agreement.get(k))) for k in keys),
                class_="bad" if s.get("widening") else None,
            )
        )
    return el("table", head, join(rows), class_="watch-steps")
