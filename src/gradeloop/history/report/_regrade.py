"""A regrade beside its source, and the fingerprint warnings of runs set side by side.

A grading run made by ``gradeloop regrade`` names the run or loop it re-graded. Its
page shows, per key, how many drafts were met before and after, how many flipped
each way, the agreement and kappa of old with new, and the drafts that moved; the
source's page links its regrades. Wherever two runs are set side by side, what
differs in their fingerprints (judge, model, host, rubric, sampling) is said first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from ...errors import LoopNotFoundError
from ...migration._agreement import pass_fail_stats
from ...migration._evidence import KeyVerdict, verdicts_of
from ...models._fingerprint import fingerprint_warnings, stored_fingerprint
from ._db import ReadOnlyHistory
from ._html import Safe, el, join

__all__ = ["fingerprint_notes", "regrade_section", "regraded_by"]


def fingerprint_notes(items: Sequence[Mapping[str, Any]]) -> Safe:
    """The warnings for runs or loops shown together (``ReadOnlyHistory`` records)."""
    named = [
        (
            str(d.get("run_id") or d.get("loop_id")),
            stored_fingerprint(d.get("config") or {}, d.get("rubric") or {}),
        )
        for d in items
    ]
    warnings = fingerprint_warnings(named)
    if not warnings:
        return Safe("")
    return el(
        "ul",
        join(el("li", f"warning: {w}", class_="fail") for w in warnings),
        class_="fingerprint-warnings",
    )


def _link(kind: str, ident: str) -> Safe:
    return el("a", ident, href=f"/{kind}/{quote(ident)}")


def regraded_by(db: ReadOnlyHistory, source_id: str) -> Safe:
    """ "regraded by: run, run" under a run or loop that has regrades."""
    later = db.regrades_of(source_id)
    if not later:
        return Safe("")
    links = join([_link("run", r) for r in later], sep=", ")
    return el("p", "regraded by: ", links, class_="regraded-by")


def _records(source: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The source's drafts as regrade read them (a loop's reused rounds left out)."""
    if "iterations" in source:
        return [
            r
            for r in source["iterations"]
            if isinstance(r.get("content"), str) and not r.get("reused_from")
        ]
    return list(source.get("drafts") or [])


def _paired(
    source: Mapping[str, Any], regrade: Mapping[str, Any]
) -> list[tuple[str, dict[str, KeyVerdict], dict[str, KeyVerdict]]]:
    old = _records(source)
    new = list(regrade.get("drafts") or [])
    out = []
    for before, after in zip(old, new, strict=False):  # a regrade keeps its source's order
        ident = str(after.get("item_id") or before.get("item_id") or before.get("output_id"))
        out.append(
            (
                ident,
                verdicts_of(before, source.get("rubric") or {}),
                verdicts_of(after, regrade.get("rubric") or {}),
            )
        )
    return out


def _key_rows(
    keys: Sequence[str], pairs: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]]
) -> Safe:
    head = el(
        "tr",
        join(
            el("th", h)
            for h in ("key", "met before", "met after", "to met", "to unmet", "agreement", "kappa")
        ),
    )
    rows = []
    for key in keys:
        both = [
            (a[key].met, b[key].met)
            for _, a, b in pairs
            if key in a and key in b and a[key].checked and b[key].checked
        ]
        stats = pass_fail_stats([x for x, _ in both], [y for _, y in both])
        to_met = sum(1 for x, y in both if y and not x)
        to_unmet = sum(1 for x, y in both if x and not y)
        cells = [
            str(sum(x for x, _ in both)),
            str(sum(y for _, y in both)),
            str(to_met),
            str(to_unmet),
            "-" if stats.agreement is None else f"{stats.agreement * 100:.0f}%",
            "-" if stats.kappa is None else f"{stats.kappa:.2f}",
        ]
        rows.append(
            el(
                "tr",
                el("th", key),
                join(el("td", c, class_="num") for c in cells),
                class_="changed key" if to_met or to_unmet else "key",
                data_key=key,
            )
        )
    return el("table", head, join(rows), class_="regrade-keys")


def _moved(
    keys: Sequence[str], pairs: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]]
) -> Safe:
    rows = []
    for ident, a, b in pairs:
        moves = [
            f"{k}: {'met' if a[k].met else 'unmet'} → {'met' if b[k].met else 'unmet'}"
            for k in keys
            if k in a and k in b and a[k].checked and b[k].checked and a[k].met != b[k].met
        ]
        if moves:
            rows.append(el("tr", el("td", ident), el("td", "; ".join(moves)), data_item=ident))
    if not rows:
        return el("p", "no draft changed on any key", class_="muted")
    head = el("tr", el("th", "draft"), el("th", "what moved"))
    return el("table", head, join(rows), class_="regrade-moved")


def regrade_section(db: ReadOnlyHistory, data: Mapping[str, Any]) -> Safe:
    """On a grading run's page: its source beside it (if it is a regrade), and the
    runs that re-graded it."""
    parts = [regraded_by(db, str(data["run_id"]))]
    source_id = data.get("regrade_of")
    if source_id:
        try:
            kind, ident = db.resolve(str(source_id))
            source = db.run(ident) if kind == "run" else db.loop(ident)
        except LoopNotFoundError:
            parts.append(
                el(
                    "p",
                    f"a regrade of {source_id}, which is no longer in the history",
                    class_="muted",
                )
            )
        else:
            keys = [
                str(c.get("key"))
                for c in (data.get("rubric") or {}).get("criteria") or []
                if isinstance(c, Mapping)
            ]
            pairs = _paired(source, data)
            parts += [
                el("h3", "regrade of ", _link(kind, ident)),
                fingerprint_notes([source, data]),
                el(
                    "p",
                    f"{len(pairs)} drafts graded again without generating; a highlighted "
                    "key flipped on at least one.",
                    class_="muted",
                ),
                _key_rows(keys, pairs),
                el("h4", "drafts that moved"),
                _moved(keys, pairs),
            ]
    return el("section", join(parts), class_="regrade") if any(parts) else Safe("")
