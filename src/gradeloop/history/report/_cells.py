"""Pieces shared by the loop and grading-run pages: the rubric's keys, one
draft's per-key results, the matrix cells, reasoning and issues, shadow outcomes.

Records come from the history as stored. Newer records carry a ``detail`` block
(who filled each key, its issues, the judge's reasoning); for older ones the
per-key pass and score come from the seed's evaluation JSON and who filled a key
from the rubric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._html import Safe, el, join

__all__ = [
    "KeyResult",
    "RubricKey",
    "detail_block",
    "key_header",
    "key_results",
    "matrix_cell",
    "overall_cell",
    "rubric_keys",
    "rubric_table",
    "settings_table",
    "shadow_table",
]

DEFAULT_THRESHOLD = 7.0


@dataclass(frozen=True)
class RubricKey:
    """One criterion as the reports need it."""

    key: str
    description: str
    filled_by: str  # a checker name, or "judge"
    scale: str
    weight: float
    threshold: float | None  # scored keys only
    shadow: str | None = None

    @property
    def source(self) -> str:
        return "judge" if self.filled_by == "judge" else "code"


@dataclass(frozen=True)
class KeyResult:
    """One key on one draft."""

    met: bool
    score: float | None
    checked: bool = True
    source: str = ""
    filled_by: str = ""
    issues: tuple[str, ...] = field(default_factory=tuple)


def _float(value: Any, default: float | None) -> float | None:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )


def overall_cell(ev: Mapping[str, Any]) -> Safe:
    """A stored evaluation's overall score, with a tick when accepted; "not computed"
    when there is none (keys not checked: the score is null) or it is no finite number."""
    score = _float(ev.get("overall_score"), None)
    text = "not computed" if score is None or not math.isfinite(score) else f"{score:.2f}"
    passed = ev.get("passed") is True
    mark = " ✓" if passed else ""
    return el("td", text + mark, class_="num " + ("met" if passed else "failed"))


def rubric_keys(rubric: Mapping[str, Any]) -> list[RubricKey]:
    """The stored rubric's criteria, with the defaults the rubric loader applies."""
    out = []
    for c in rubric.get("criteria") or []:
        if not isinstance(c, Mapping):
            continue
        scale = str(c.get("scale") or "pass_fail")
        out.append(
            RubricKey(
                key=str(c.get("key")),
                description=str(c.get("description") or ""),
                filled_by=str(c.get("checker") or "judge"),
                scale=scale,
                weight=_float(c.get("weight"), 1.0) or 0.0,
                threshold=_float(c.get("threshold"), DEFAULT_THRESHOLD)
                if scale == "score"
                else None,
                shadow=str(c["shadow"]) if c.get("shadow") else None,
            )
        )
    return out


def key_results(record: Mapping[str, Any], keys: Sequence[RubricKey]) -> dict[str, KeyResult]:
    """Each key's result on the record's draft (empty when it was not judged)."""
    detail = record.get("detail")
    evaluation = record.get("evaluation")
    if record.get("judge_error") is not None or not isinstance(evaluation, Mapping):
        return {}
    by_key = {k.key: k for k in keys}
    out: dict[str, KeyResult] = {}
    if isinstance(detail, Mapping):
        for c in detail.get("criteria") or []:
            rk = by_key.get(str(c.get("key")))
            scored = rk is not None and rk.scale == "score"
            out[str(c.get("key"))] = KeyResult(
                met=c.get("met") is True,
                score=_float(c.get("score"), None) if scored else None,
                checked=c.get("checked") is not False,
                source=str(c.get("source") or ""),
                filled_by=str(c.get("filled_by") or ""),
                issues=tuple(str(i) for i in c.get("issues") or ()),
            )
        return out
    for c in evaluation.get("criteria") or []:
        rk = by_key.get(str(c.get("name")))
        scored = rk is not None and rk.scale == "score"
        out[str(c.get("name"))] = KeyResult(
            met=c.get("passed") is True,
            score=_float(c.get("score"), None) if scored else None,
            source=rk.source if rk else "",
            filled_by=rk.filled_by if rk else "",
        )
    return out


def key_header(k: RubricKey) -> Safe:
    """A matrix column head: the key, and who fills it."""
    badge = (
        el("span", "judge", class_="badge judge", title="filled by the LLM judge")
        if k.source == "judge"
        else el("span", f"code: {k.filled_by}", class_="badge code", title="filled by a checker")
    )
    return el("th", el("div", k.key), badge, title=k.description, data_source=k.source)


def matrix_cell(k: RubricKey, r: KeyResult | None) -> Safe:
    """One key on one draft: met / failed / not checked, with the score and issues."""
    if r is None:
        return el("td", "-", class_="unchecked")
    if not r.checked:
        return el("td", "not checked", class_="unchecked", title="; ".join(r.issues))
    mark = "✓ met" if r.met else "✗ failed"
    score = f" {r.score:g}/{k.threshold:g}" if r.score is not None and k.threshold else ""
    source = r.source or k.source
    return el(
        "td",
        mark + score,
        class_="met" if r.met else "failed",
        title="; ".join(r.issues) or None,
        data_key=k.key,
        data_source=source,
    )


def detail_block(record: Mapping[str, Any], keys: Sequence[RubricKey]) -> Safe:
    """The judge's reasoning, the merged issues, and per-key issues."""
    if record.get("judge_error") is not None:
        return el("p", "The judge failed: ", el("code", record["judge_error"]), class_="fail")
    detail = record.get("detail")
    parts = []
    if isinstance(detail, Mapping):
        parts.append(el("h4", "reasoning"))
        parts.append(el("pre", detail.get("reasoning") or "(none)", class_="reasoning"))
        issues = [str(i) for i in detail.get("issues") or ()]
    else:
        feedback = str(record.get("feedback") or "")
        issues = [line.removeprefix("- ") for line in feedback.splitlines() if line.strip()]
    parts.append(el("h4", "issues"))
    parts.append(
        el("ul", join(el("li", i) for i in issues), class_="issues")
        if issues
        else el("p", "none", class_="muted")
    )
    return join(parts)


def settings_table(config: Mapping[str, Any]) -> Safe:
    """The loop's or run's settings, one row each."""
    rows = [el("tr", el("th", name), el("td", _setting(value))) for name, value in config.items()]
    return el("table", join(rows), class_="settings") if rows else el("p", "none", class_="muted")


def _setting(value: Any) -> str:
    """A setting as text; a table of settings (a run's fingerprint) as ``name: value``."""
    if value is None:
        return "-"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_setting(v)}" for k, v in value.items()) or "-"
    return str(value)


def rubric_table(keys: Sequence[RubricKey], pass_score: Any) -> Safe:
    """The rubric: each key, who fills it, scale, weight, threshold, description."""
    head = el(
        "tr",
        join(
            el("th", h) for h in ("key", "filled by", "scale", "weight", "threshold", "description")
        ),
    )
    rows = [
        el(
            "tr",
            el("td", k.key),
            el("td", k.filled_by + (f" (shadow: {k.shadow})" if k.shadow else ""), class_=k.source),
            el("td", k.scale),
            el("td", f"{k.weight:g}", class_="num"),
            el("td", "-" if k.threshold is None else f"{k.threshold:g}", class_="num"),
            el("td", k.description),
        )
        for k in keys
    ]
    note = el("p", f"pass score: {pass_score}") if pass_score is not None else Safe("")
    return join([el("table", head, join(rows), class_="rubric"), note])


def shadow_table(entries: Sequence[tuple[str, Mapping[str, Any]]]) -> Safe:
    """Shadow disagreements: ``(where, shadow record)`` pairs, where both sources
    answered and differed."""
    rows = []
    for where, s in entries:
        if s.get("agree") is not False:
            continue
        p, q = s.get("primary") or {}, s.get("shadow") or {}
        rows.append(
            el(
                "tr",
                el("td", where),
                el("td", s.get("key")),
                el("td", f"{p.get('filled_by')}: {_answer(p)}"),
                el("td", f"{q.get('filled_by')}: {_answer(q)}"),
                el("td", "; ".join(str(i) for i in (q.get("issues") or p.get("issues") or ()))),
            )
        )
    if not rows:
        return el("p", "no shadow disagreements recorded", class_="muted")
    head = el("tr", join(el("th", h) for h in ("draft", "key", "primary", "shadow", "issues")))
    return el("table", head, join(rows), class_="shadows")


def _answer(side: Mapping[str, Any]) -> str:
    passed = side.get("passed")
    text = "no answer" if passed is None else ("met" if passed else "failed")
    score = side.get("score")
    return f"{text} ({score:g})" if isinstance(score, int | float) and passed is not None else text
