"""One grading run's section: the drafts x keys table, then each draft's detail."""

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
from ._errorbars import rates_svg
from ._html import Safe, el, join, when
from ._judging import jury_rows, jury_table
from ._transcript import transcript_details

__all__ = ["run_section"]


def _matrix(drafts: Sequence[Mapping[str, Any]], keys: Sequence[RubricKey]) -> Safe:
    head = el("tr", el("th", "draft"), join(key_header(k) for k in keys), el("th", "overall"))
    rows = []
    for d in drafts:
        ev = d.get("evaluation")
        if d.get("error") or not isinstance(ev, Mapping):
            cells = el(
                "td",
                f"not graded: {d.get('error') or 'no evaluation'}",
                colspan=len(keys) + 1,
                class_="failed",
            )
        else:
            res = key_results(d, keys)
            overall = overall_cell(ev)
            cells = join([join(matrix_cell(k, res.get(k.key)) for k in keys), overall])
        rows.append(el("tr", el("th", d.get("item_id")), cells, data_item=d.get("item_id")))
    return el("table", head, join(rows), class_="matrix drafts")


def _jury(drafts: Sequence[Mapping[str, Any]]) -> list[Safe]:
    rows = [row for d in drafts for row in jury_rows(str(d.get("item_id")), d)]
    return [el("h3", "jury votes"), jury_table(rows)] if rows else []


def run_section(data: Mapping[str, Any], *, heading: str = "h2") -> Safe:
    """The whole section of one grading run (``data`` from ``ReadOnlyHistory.run``)."""
    keys = rubric_keys(data["rubric"])
    drafts: list[Mapping[str, Any]] = data["drafts"]
    accepted = sum(
        1 for d in drafts if not d.get("error") and (d.get("evaluation") or {}).get("passed")
    )
    meta = [
        ("graded by", data.get("origin")),
        ("rubric", data.get("rubric_name")),
        ("started", when(data.get("started_at"))),
        ("drafts", str(len(drafts))),
        ("accepted", f"{accepted} of {len(drafts)}"),
    ]
    shadows = [
        (str(d.get("item_id")), s)
        for d in drafts
        for s in ((d.get("evaluation") or {}).get("shadows") or ())
        if isinstance(s, Mapping)
    ]
    details = [
        el(
            "details",
            el("summary", f"{d.get('item_id')}"),
            detail_block({**d, "judge_error": d.get("error")}, keys),
            transcript_details(d)
            or el(
                "details", el("summary", "draft"), el("pre", d.get("content") or "", class_="draft")
            ),
            class_="draft-detail",
        )
        for d in drafts
    ]
    body = [
        el(heading, f"grading run {data['run_id']}"),
        el("dl", join(join([el("dt", k), el("dd", v)]) for k, v in meta), class_="meta"),
        el("h3", "settings"),
        settings_table(data.get("config") or {}),
        el("h3", "rubric"),
        rubric_table(keys, data["rubric"].get("pass_score")),
        el("h3", "rates with 95 % confidence intervals"),
        rates_svg(drafts),
        el("h3", "drafts by key"),
        _matrix(drafts, keys),
        el("h3", "shadow disagreements"),
        shadow_table(shadows),
        *_jury(drafts),
        el("h3", "drafts"),
        join(details),
    ]
    return el("section", join(body), class_="loop run", id=f"run-{data['run_id']}")
