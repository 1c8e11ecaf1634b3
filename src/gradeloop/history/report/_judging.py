"""The bias controls in the reports: a jury's votes per key, and pairwise comparisons.

Both come from the records as stored: a jury's votes sit in each key's ``judging``
block (``detail`` or the evaluation JSON), a pairwise comparison in the history's
``preferences`` table. Records without them show nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._html import Safe, el, join

__all__ = ["jury_rows", "jury_table", "pairwise_table"]


def _criteria(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    for block in ("detail", "evaluation"):
        found = (record.get(block) or {}).get("criteria")
        if isinstance(found, list) and any(isinstance(c, Mapping) for c in found):
            return [c for c in found if isinstance(c, Mapping)]
    return []


def jury_rows(where: str, record: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(where, key, jury record)`` for each key of ``record`` a jury decided."""
    out = []
    for c in _criteria(record):
        jury = (
            (c.get("judging") or {}).get("jury") if isinstance(c.get("judging"), Mapping) else None
        )
        if isinstance(jury, Mapping):
            out.append((where, str(c.get("key") or c.get("name")), jury))
    return out


def _vote(value: Any) -> str:
    if value is True:
        return "met"
    if value is False:
        return "not met"
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def jury_table(rows: Sequence[tuple[str, str, Mapping[str, Any]]]) -> Safe:
    """One row per (draft, key) a jury decided: each judge's vote, the agreement between
    judges (and each judge's own, when it sampled), who abstained, why a key failed closed."""
    if not rows:
        return el("p", "no jury verdicts recorded", class_="muted")
    head = el(
        "tr",
        join(el("th", h) for h in ("draft", "key", "votes", "agreement", "abstained", "note")),
    )
    body = []
    for where, key, jury in rows:
        votes = jury.get("votes") or {}
        selfs = jury.get("self_agreement") or {}
        shown = "; ".join(
            f"{name}: {_vote(v)}" + (f" (self {selfs[name]:.2f})" if name in selfs else "")
            for name, v in votes.items()
        )
        abstained = jury.get("abstained") or {}
        agreement = jury.get("agreement")
        body.append(
            el(
                "tr",
                el("td", where),
                el("td", key),
                el("td", shown or "-"),
                el("td", "-" if agreement is None else f"{float(agreement):.2f}", class_="num"),
                el("td", "; ".join(f"{n}: {why}" for n, why in abstained.items()) or "-"),
                el("td", jury.get("note") or "-", class_="failed" if jury.get("note") else None),
            )
        )
    return el("table", head, join(body), class_="jury")


def pairwise_table(preferences: Sequence[Mapping[str, Any]]) -> Safe:
    """Each comparison: the two drafts, per judge key both orders' answers and the
    decision (a disagreement is a tie), the draft chosen and why."""
    if not preferences:
        return el("p", "no pairwise comparisons recorded", class_="muted")
    parts = []
    for p in preferences:
        detail = p.get("preference") or {}
        head = el("tr", join(el("th", h) for h in ("key", "a first", "b first", "decision")))
        rows = [
            el(
                "tr",
                el("td", k.get("key")),
                el("td", k.get("a_first", "-")),
                el("td", k.get("b_first", "-")),
                el(
                    "td",
                    str(k.get("choice"))
                    + ("" if k.get("consistent", True) else " (orders disagree)")
                    + (f" ({k['detail']})" if k.get("detail") else ""),
                    class_="failed" if k.get("consistent") is False else None,
                ),
            )
            for k in detail.get("keys") or ()
            if isinstance(k, Mapping)
        ]
        summary = (
            f"a = {p.get('a_output_id')}, b = {p.get('b_output_id')}: winner "
            f"{p.get('winner') or '-'}, returned {p.get('chosen_output_id') or '-'}"
        )
        why = p.get("reason") or p.get("error")
        parts.append(
            el(
                "div",
                el("p", summary),
                el("p", why, class_="muted") if why else Safe(""),
                el("table", head, join(rows), class_="pairwise") if rows else Safe(""),
                class_="preference",
            )
        )
    return join(parts)
