"""The score trajectory as an inline SVG: no script, no fonts to fetch, no library.

One series for the overall score and one per scored key, one point per round on
the overall series (a round whose judge failed is drawn as a cross on the axis, so
every round shows). Each scored key's threshold is a dashed line in the key's colour;
the rubric's pass score, when it has one, a dashed red line. Every point carries a
``<title>`` (the browser's own tooltip).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._html import Safe, el, join, svg_image

__all__ = ["PALETTE", "Series", "trajectory_svg"]

PALETTE = ("#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#cf222e", "#0550ae", "#953800")
_W, _H = 640, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 40, 16, 14, 34


@dataclass(frozen=True)
class Series:
    """One line: a name, a score (or None) per round, and an optional threshold."""

    name: str
    scores: Sequence[float | None]
    threshold: float | None = None


def _x(i: int, n: int) -> float:
    span = _W - _LEFT - _RIGHT
    return _LEFT + (span / 2 if n <= 1 else span * i / (n - 1))


def _y(score: float) -> float:
    score = min(10.0, max(0.0, score))
    return _TOP + (_H - _TOP - _BOTTOM) * (1 - score / 10)


def _axes(n: int) -> Safe:
    parts = []
    for tick in range(0, 11, 2):
        y = _y(tick)
        parts.append(
            el("line", x1=_LEFT, x2=_W - _RIGHT, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke="#eaeef2")
        )
        parts.append(el("text", str(tick), x=_LEFT - 6, y=f"{y + 4:.1f}", text_anchor="end"))
    step = max(1, n // 12)  # at most a dozen round labels
    for i in range(0, n, step):
        parts.append(
            el("text", str(i + 1), x=f"{_x(i, n):.1f}", y=_H - _BOTTOM + 16, text_anchor="middle")
        )
    parts.append(el("text", "round", x=_W - _RIGHT, y=_H - 4, text_anchor="end"))
    return join(parts)


def _hline(y_value: float, color: str, label: str, cls: str) -> Safe:
    y = f"{_y(y_value):.1f}"
    line = el(
        "line",
        el("title", label),
        x1=_LEFT,
        x2=_W - _RIGHT,
        y1=y,
        y2=y,
        stroke=color,
        stroke_width="1.5",
        stroke_dasharray="6 4",
        class_=cls,
    )
    # pass score labelled on the right, thresholds on the left: close lines stay legible
    x, anchor = (_W - _RIGHT - 2, "end") if cls == "pass-score" else (_LEFT + 4, "start")
    return join([line, el("text", label, x=x, y=f"{float(y) - 3:.1f}", text_anchor=anchor)])


def _series(s: Series, color: str, n: int, *, overall: bool) -> Safe:
    points: list[Safe] = []
    path: list[str] = []
    for i, score in enumerate(s.scores):
        x = _x(i, n)
        if score is None:
            if overall:  # a failed round still gets its point, as a cross on the axis
                y = _y(0)
                a, b, c, e = x - 5, x + 5, y - 5, y + 5
                d = f"M{a:.1f},{c:.1f}L{b:.1f},{e:.1f}M{a:.1f},{e:.1f}L{b:.1f},{c:.1f}"
                title = el("title", f"round {i + 1}: the judge failed, no score")
                points.append(
                    el(
                        "path",
                        title,
                        d=d,
                        stroke="#cf222e",
                        stroke_width=2,
                        class_="point failed",
                        data_round=i + 1,
                    )
                )
            continue
        y = _y(score)
        path.append(f"{'M' if not path else 'L'}{x:.1f},{y:.1f}")
        title = el("title", f"round {i + 1}: {s.name} {score:.2f}")
        points.append(
            el(
                "circle",
                title,
                cx=f"{x:.1f}",
                cy=f"{y:.1f}",
                r=4 if overall else 3,
                fill=color,
                class_="point",
                data_round=i + 1,
                data_score=f"{score:.2f}",
            )
        )
    line = (
        el("path", d="".join(path), fill="none", stroke=color, stroke_width=3 if overall else 1.5)
        if len(path) > 1
        else Safe("")
    )
    return el(
        "g",
        line,
        join(points),
        class_="series overall" if overall else "series key",
        data_series=s.name,
    )


def trajectory_svg(
    overall: Sequence[float | None],
    keys: Sequence[Series] = (),
    *,
    pass_score: float | None = None,
) -> Safe:
    """The plot and its legend. ``overall`` has one entry per round (None: not judged)."""
    n = len(overall)
    layers = [_axes(n)]
    legend = [el("span", el("span", class_="swatch", style="background:#24292f"), "overall")]
    colors: Mapping[str, str] = {s.name: PALETTE[i % len(PALETTE)] for i, s in enumerate(keys)}
    for s in keys:
        if s.threshold is not None:
            layers.append(
                _hline(
                    s.threshold, colors[s.name], f"{s.name} threshold {s.threshold:g}", "threshold"
                )
            )
    if pass_score is not None:
        layers.append(_hline(pass_score, "#cf222e", f"pass score {pass_score:g}", "pass-score"))
    for s in keys:
        layers.append(_series(s, colors[s.name], n, overall=False))
        legend.append(
            el("span", el("span", class_="swatch", style=f"background:{colors[s.name]}"), s.name)
        )
    layers.append(_series(Series("overall", overall), "#24292f", n, overall=True))
    svg = svg_image("score trajectory", join(layers), width=_W, height=_H, class_="plot")
    return join([svg, el("div", join(legend), class_="legend")])
