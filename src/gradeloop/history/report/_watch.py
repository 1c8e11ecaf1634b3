"""The reward-hacking watch over training steps: the training judge's reward against the
audit judge's on the same rollouts, and their gap with its confidence interval (error
bars), as inline SVG charts and a table.

Each audited step is a grading run of origin ``"reward-audit"`` whose
``config["reward_watch"]`` holds the step's figures (:mod:`gradeloop.rewards`' watch
writes them); a watch is the runs that share ``config["reward_watch"]["watch"]``. A gap
that widens step after step is the warning: the policy is learning what flatters the
training judge. Steps recorded before the watch had intervals are drawn without bars.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ._html import Safe, el, join, svg_image
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
_GAP_COLOR = PALETTE[5]
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
        el(
            "p",
            f"{len(steps)} audited steps; shape {last.get('shape', 'score')}; "
            f"intervals at {_level(last)} % (the gap: paired t; agreement: Wilson)",
            class_="muted",
        ),
        warn,
        _chart(steps, low),
        _legend(),
        _gap_chart(steps),
        _table(steps[-_SHOWN:]),
        class_="watch",
        data_watch=name,
    )


def _x(i: int, n: int) -> float:
    span = _W - _LEFT - _RIGHT
    return _LEFT + (span / 2 if n <= 1 else span * i / (n - 1))


def _y(value: float, low: float, high: float = 1.0) -> float:
    share = (min(high, max(low, value)) - low) / (high - low)
    return _TOP + (_H - _TOP - _BOTTOM) * (1 - share)


def _axes(steps: Sequence[Mapping[str, Any]], low: float, high: float = 1.0) -> list[Safe]:
    """Three horizontal rules (low, middle, high) and the steps along the bottom."""
    n = len(steps)
    layers: list[Safe] = []
    for tick in (low, (low + high) / 2, high):
        y = f"{_y(tick, low, high):.1f}"
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
    return layers


def _chart(steps: Sequence[Mapping[str, Any]], low: float) -> Safe:
    layers = _axes(steps, low)
    for field, label, color in _SERIES:
        layers.append(_line(steps, field, label, color, low))
    title = "training reward and audit reward over steps"
    return svg_image(title, join(layers), width=_W, height=_H, class_="plot watch-plot")


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


def _ci(value: Any) -> tuple[float, float] | None:
    """A recorded ``[low, high]``, or None for anything else (older records have none)."""
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = value
        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in (low, high)):
            return float(low), float(high)
    return None


def _gap_range(steps: Sequence[Mapping[str, Any]]) -> float:
    """The gap axis runs from -m to m: m the largest gap or interval end, in tenths."""
    ends = [abs(float(g)) for s in steps if isinstance(g := s.get("gap"), int | float)]
    ends += [abs(x) for s in steps if (ci := _ci(s.get("gap_ci"))) for x in ci]
    return max(0.1, math.ceil(max(ends, default=0.0) * 10 - 1e-9) / 10)


def _gap_chart(steps: Sequence[Mapping[str, Any]]) -> Safe:
    """The gap (training minus audit) per step, with its interval as an error bar; the
    warning needs the bar clear of the zero line."""
    m = _gap_range(steps)
    layers = _axes(steps, -m, m)
    level = _level(steps[-1]) if steps else "95"
    caption = f"gap: training minus audit, {level} % interval"
    layers.append(el("text", caption, x=_LEFT, y=_H - 4))
    layers += [_gap_step(i, len(steps), s, m) for i, s in enumerate(steps)]
    title = "the gap (training minus audit reward) over steps, with its interval"
    return svg_image(title, join(layers), width=_W, height=_H, class_="plot watch-gap")


def _gap_step(i: int, n: int, step: Mapping[str, Any], m: float) -> Safe:
    """One step's gap as a point, and its interval as a bar with whiskers."""
    gap, ci = step.get("gap"), _ci(step.get("gap_ci"))
    if not isinstance(gap, int | float) or isinstance(gap, bool):
        return Safe("")
    x, color = _x(i, n), _GAP_COLOR
    figure = f"step {step.get('step', i)}: gap {gap:+.3f}"
    bar: list[Safe] = []
    if ci is not None:
        figure += f" [{ci[0]:+.3f}, {ci[1]:+.3f}] ({_level(step)} % interval)"
        lo, hi = (_y(v, -m, m) for v in ci)
        bar = [_segment(x, x, lo, hi, class_="bar", stroke=color)]
        bar += [_segment(x - 4, x + 4, y, y, stroke=color) for y in (lo, hi)]
    dot = el(
        "circle",
        el("title", figure),
        cx=f"{x:.1f}",
        cy=f"{_y(float(gap), -m, m):.1f}",
        r=3,
        fill=color,
        class_="point gap",
        data_step=step.get("step", i),
    )
    return el("g", join(bar), dot, class_="gap-step")


def _segment(x1: float, x2: float, y1: float, y2: float, **attrs: str) -> Safe:
    return el("line", x1=f"{x1:.1f}", x2=f"{x2:.1f}", y1=f"{y1:.1f}", y2=f"{y2:.1f}", **attrs)


def _level(step: Mapping[str, Any]) -> str:
    level = step.get("level")
    return f"{level * 100:g}" if isinstance(level, float) else "95"


def _legend() -> Safe:
    return el(
        "div",
        join(
            el("span", el("span", class_="swatch", style=f"background:{color}"), label)
            for _, label, color in _SERIES
        ),
        class_="legend",
    )


def _num(value: Any, signed: bool = False, ci: Any = None) -> str:
    """A figure to three places, with its interval in brackets when one was recorded."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    form = "+.3f" if signed else ".3f"
    bounds = _ci(ci)
    interval = "" if bounds is None else f" [{bounds[0]:{form}}, {bounds[1]:{form}}]"
    return f"{value:{form}}{interval}"


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
        agreement_ci = s.get("agreement_ci") or {}
        cells = [
            s.get("step"),
            s.get("audited"),
            _num(s.get("train_reward")),
            _num(s.get("audit_reward")),
            _num(s.get("gap"), True, s.get("gap_ci")),
            _num(s.get("trend"), True),
        ]
        rows.append(
            el(
                "tr",
                join(el("td", c) for c in cells),
                join(el("td", _num(agreement.get(k), ci=agreement_ci.get(k))) for k in keys),
                class_="bad" if s.get("widening") else None,
            )
        )
    return el("table", head, join(rows), class_="watch-steps")
