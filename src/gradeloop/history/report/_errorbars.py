"""A grading run's rates with their confidence intervals, as an inline SVG of error
bars: one row for the accepted rate and one per key (Wilson, 95 %), each with a
``<title>`` giving the figures (the browser's own tooltip)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import InputError
from ...stats import GradedRow, Interval, summarize
from ._html import Safe, el, join, svg_image

__all__ = ["rates_svg"]

_W, _ROW, _LEFT, _RIGHT, _TOP = 640, 22, 150, 150, 22


def _x(rate: float) -> float:
    return _LEFT + (_W - _LEFT - _RIGHT) * min(1.0, max(0.0, rate))


def _line(x1: float, x2: float, y1: float, y2: float, **attrs: str) -> Safe:
    return el(
        "line",
        x1=f"{x1:.1f}",
        x2=f"{x2:.1f}",
        y1=f"{y1:.1f}",
        y2=f"{y2:.1f}",
        **(attrs or {"class_": "bar"}),
    )


def _row(i: int, name: str, interval: Interval) -> Safe:
    y = _TOP + _ROW * i + _ROW / 2
    label = el("text", name, x=_LEFT - 8, y=f"{y + 4:.1f}", text_anchor="end")
    if interval.estimate is None:
        return join([label, el("text", "no drafts", x=_LEFT, y=f"{y + 4:.1f}")])
    figure = f"{interval.estimate * 100:.1f} %"
    if interval.ci is not None:
        figure += f" [{interval.ci[0] * 100:.1f}, {interval.ci[1] * 100:.1f}]"
    parts = [label]
    if interval.ci is not None:
        lo, hi = (_x(v) for v in interval.ci)
        parts += [
            _line(lo, hi, y, y),  # the interval, then its two whiskers
            _line(lo, lo, y - 5, y + 5),
            _line(hi, hi, y - 5, y + 5),
        ]
    title = el("title", f"{name}: {figure} of {interval.n} drafts")
    parts.append(el("circle", title, cx=f"{_x(interval.estimate):.1f}", cy=f"{y:.1f}", r=4))
    parts.append(el("text", figure, x=_W - _RIGHT + 8, y=f"{y + 4:.1f}"))
    return el("g", join(parts), class_="rate", data_name=name)


def rates_svg(drafts: Sequence[Mapping[str, Any]], level: float = 0.95) -> Safe:
    """The error bars of a stored run's drafts (their records as stored)."""
    try:
        rows = [GradedRow.from_json(d, where=f"draft {i + 1}") for i, d in enumerate(drafts)]
    except InputError:
        return Safe("")  # a record the figures cannot read: no figure rather than no page
    summary = summarize(rows, level=level)
    figures = [("accepted", summary.accepted)]
    figures += [(name, k.rate) for name, k in summary.keys.items()]
    height = _TOP + _ROW * len(figures) + 8
    ticks = (0.0, 0.25, 0.5, 0.75, 1.0)
    axis = [_line(_x(t), _x(t), _TOP - 4, height - 4, stroke="#eaeef2") for t in ticks] + [
        el("text", f"{t * 100:.0f} %", x=f"{_x(t):.1f}", y=_TOP - 8, text_anchor="middle")
        for t in (0.0, 0.5, 1.0)
    ]  # fmt: skip
    return svg_image(
        f"rates with {level * 100:g} % confidence intervals",
        join(axis),
        join(_row(i, name, interval) for i, (name, interval) in enumerate(figures)),
        width=_W,
        height=height,
        class_="plot rates",
    )
