"""One loop's section: what it was asked, how it was set up, how it went round by round."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._cells import (
    RubricKey,
    detail_block,
    key_header,
    key_results,
    matrix_cell,
    overall_cell,
    rubric_keys,
    rubric_table,
    settings_table,
    shadow_table,
)
from ._diff import diff_html
from ._html import Safe, el, join, when
from ._judging import jury_rows, jury_table, pairwise_table
from ._plot import Series, trajectory_svg

__all__ = ["loop_section", "loop_status", "plot_for"]


def loop_status(data: Mapping[str, Any]) -> str:
    """The stop reason, or for a loop that never finished the word ``gradeloop history``
    uses: "running" (its writer is alive) or "interrupted"."""
    if data.get("finished"):
        return str(data.get("stop_reason"))
    return str(data.get("status") or "interrupted")


def _tokens(records: Sequence[Mapping[str, Any]]) -> str:
    total_in = sum(int((r.get("usage") or {}).get("total_input") or 0) for r in records)
    total_out = sum(int((r.get("usage") or {}).get("output_tokens") or 0) for r in records)
    return f"{total_in} in / {total_out} out"


def _meta(data: Mapping[str, Any]) -> Safe:
    records = data["iterations"]
    passed = data.get("passed")
    score = data.get("final_score")
    total = data.get("total_time_ms")
    items = [
        ("stop reason", el("span", loop_status(data), class_="stop-reason")),
        ("passed", el("span", "yes" if passed else "no", class_="pass" if passed else "fail")),
        ("final score", "-" if score is None else f"{score:.2f}"),
        ("final draft", data.get("final_output_id") or "-"),
        ("started", when(data.get("started_at"))),
        ("rounds", str(len(records))),
        ("time", "-" if total is None else f"{float(total) / 1000:.1f} s"),
        ("tokens", _tokens(records)),
    ]
    return el("dl", join(join([el("dt", k), el("dd", v)]) for k, v in items), class_="meta")


def plot_for(data: Mapping[str, Any], keys: Sequence[RubricKey]) -> Safe:
    """The trajectory plot of a loop: overall and each scored key, per round."""
    records = data["iterations"]
    results = [key_results(r, keys) for r in records]
    series = [
        Series(
            k.key,
            [res[k.key].score if k.key in res else None for res in results],
            k.threshold,
        )
        for k in keys
        if k.scale == "score"
    ]
    pass_score = data["rubric"].get("pass_score")
    return trajectory_svg(
        data["trajectory"],
        series,
        pass_score=float(pass_score) if isinstance(pass_score, int | float) else None,
    )


def _matrix(records: Sequence[Mapping[str, Any]], keys: Sequence[RubricKey]) -> Safe:
    head = el("tr", el("th", "round"), join(key_header(k) for k in keys), el("th", "overall"))
    rows = []
    for r in records:
        number = r.get("iteration")
        if r.get("judge_error") is not None:
            cells = el(
                "td",
                f"judge failed: {r['judge_error']}",
                colspan=len(keys) + 1,
                class_="failed",
            )
        elif not isinstance(r.get("evaluation"), Mapping):
            cells = el("td", "not judged", colspan=len(keys) + 1, class_="unchecked")
        else:
            res = key_results(r, keys)
            ev = r["evaluation"]
            overall = overall_cell(ev)
            cells = join([join(matrix_cell(k, res.get(k.key)) for k in keys), overall])
        rows.append(el("tr", el("th", str(number)), cells, data_round=number))
    return el("table", head, join(rows), class_="matrix")


def _round(
    r: Mapping[str, Any], previous: Mapping[str, Any] | None, keys: Sequence[RubricKey], final: Any
) -> Safe:
    number = r.get("iteration")
    label = f"round {number} - {r.get('output_id')}"
    if r.get("output_id") == final:
        label += " (returned)"
    if r.get("reused_from"):
        label += f" (verdict reused from {r['reused_from']})"
    parts = [detail_block(r, keys)]  # the issues are the feedback the revision got
    parts.append(
        el("details", el("summary", "draft"), el("pre", r.get("content") or "", class_="draft"))
    )
    if previous is not None:
        parts.append(
            el(
                "details",
                el("summary", f"changes from round {previous.get('iteration')}"),
                diff_html(str(previous.get("content") or ""), str(r.get("content") or "")),
                open=True,
            )
        )
    return el("details", el("summary", label), join(parts), class_="round", open=True)


def _judging(records: Sequence[Mapping[str, Any]], preferences: Sequence[Any]) -> list[Safe]:
    """The jury's votes and the pairwise selection, when the loop had them."""
    rows = [row for r in records for row in jury_rows(f"round {r.get('iteration')}", r)]
    out = []
    if rows:
        out += [el("h3", "jury votes"), jury_table(rows)]
    if preferences:
        out += [el("h3", "pairwise selection"), pairwise_table(preferences)]
    return out


def loop_section(data: Mapping[str, Any], *, heading: str = "h2") -> Safe:
    """The whole section of one loop (``data`` from ``ReadOnlyHistory.loop``)."""
    keys = rubric_keys(data["rubric"])
    records: list[Mapping[str, Any]] = data["iterations"]
    rounds = [
        _round(r, records[i - 1] if i else None, keys, data.get("final_output_id"))
        for i, r in enumerate(records)
    ]
    shadows = [
        (f"round {r.get('iteration')}", s)
        for r in records
        for s in ((r.get("evaluation") or {}).get("shadows") or ())
        if isinstance(s, Mapping)
    ]
    body = [
        el(heading, f"loop {data['loop_id']}"),
        _meta(data),
        el("h3", "task"),
        el("pre", data.get("task") or "", class_="task"),
        el("h3", "settings"),
        settings_table(data.get("config") or {}),
        el("h3", "rubric"),
        rubric_table(keys, data["rubric"].get("pass_score")),
        el("h3", "score by round"),
        plot_for(data, keys) if records else el("p", "no rounds recorded", class_="muted"),
        el("h3", "keys by round"),
        _matrix(records, keys),
        el("h3", "shadow disagreements"),
        shadow_table(shadows),
        *_judging(records, data.get("preferences") or []),
        el("h3", "rounds"),
        join(rounds),
    ]
    return el("section", join(body), class_="loop", id=f"loop-{data['loop_id']}")
