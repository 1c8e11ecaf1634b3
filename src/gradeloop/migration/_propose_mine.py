"""Mined candidates: checkers and options read off the training drafts, no model.

Mining is a table. :data:`MINERS` maps a checker name to the miner that knows how
to choose that checker's options from data; :data:`GENERIC_MINERS` run for every
registered checker (a plugin's too):

* **thresholds** - every integer option named ``max``/``min`` or ``max_*``/``min_*``
  (``length``'s bounds, ``sentence_len``'s ``max_words``, a plugin's ``max_count``) is
  swept. Each draft's own value (the least ``max_words`` it passes with, say) is
  found by asking the real checker, doubling then halving the threshold, so the
  sweep measures exactly what the checker measures; then every cut between two
  values is scored at once from running counts. A number in the key's description
  (``"longer than 40 words"``) is preferred inside a cut, then the roundest one;
* **defaults** - a checker whose options all have defaults, as it is.

The specific miners read features once (:mod:`._propose_phrases`): phrases for
``contains`` / ``not_contains``, number patterns for ``regex``, headings for
``required_sections``. A miner is ``(CheckerInfo, MiningData) -> proposals``: a new
checker family adds its miner to the table (for example the trajectory checkers,
mined from the transcripts' tool calls). Every proposal is validated afterwards as a
rubric's options are; a miner that raises is reported, and the others go on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..grading._checks import CheckerInfo, CheckResult
from ..grading._context import CONTEXT_PARAM, CheckContext
from ._propose_data import MiningData
from ._propose_phrases import Proposal, heading_features, kappa_of, number_patterns
from ._propose_tools import TOOL_MINERS

__all__ = ["GENERIC_MINERS", "MINERS", "Miner", "MiningData", "mine"]

CAP = 1 << 20  # the largest threshold probed: past it, a draft "never passes"
CUTS = 2  # thresholds kept per option
_BOUND = re.compile(r"(max|min)(?:_|$)")
_NUMBER = re.compile(r"\d{1,7}")


Miner = Callable[[CheckerInfo, MiningData], Iterable[Proposal]]


def _phrases_for(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    return [p for p in data.phrases if p[0] == info.name]


def _number_patterns(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    f = data.features(number_patterns)
    for pattern in f.ranked(True)[:2]:
        yield info.name, {"pattern": pattern, "ignore_case": True}, "a number pattern of met drafts"
    for pattern in f.ranked(False)[:2]:
        why = "a number pattern of unmet drafts"
        yield info.name, {"pattern": pattern, "must_match": False, "ignore_case": True}, why


def _headings(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    f = data.features(heading_features)
    ranked = f.ranked(True)
    for title in ranked[:2]:
        yield info.name, {"sections": [title]}, "a heading of met drafts"
    f.load_masks(heading_features, ranked[:20])
    chosen = f.greedy(ranked[:20], True, any_of=False)
    if len(chosen) > 1:
        yield info.name, {"sections": chosen}, "the headings that together best match"


def _defaults(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    try:
        info.validate_options({})
    except ValueError:
        return []
    return [(info.name, {}, "the checker with its default options")]


def _thresholds(info: CheckerInfo, data: MiningData) -> Iterable[Proposal]:
    out: list[Proposal] = []
    for option, kind, lowest in _numeric_options(info):
        try:
            info.validate_options({option: lowest})
        except ValueError:
            continue  # the option cannot be set alone (another one is required)
        values = []
        for example, text, ctx in zip(data.examples, data.texts, data.contexts, strict=True):
            at = (info.name, option, id(example))
            if at not in data.probes:
                data.probes[at] = _probe(info, option, kind, lowest, text, ctx)
            values.append(data.probes[at])
        for t, k in _sweep(values, data.met, kind, data.numbers)[:CUTS]:
            why = f"the best cut of the drafts' own {option} values (train kappa {k:.2f})"
            out.append((info.name, {option: t}, why))
    return out


MINERS: dict[str, Miner] = {
    "contains": _phrases_for,
    "not_contains": _phrases_for,
    "regex": _number_patterns,
    "required_sections": _headings,
    **TOOL_MINERS,
}
"""Checker name -> the miner that chooses its options from the drafts."""

GENERIC_MINERS: tuple[Miner, ...] = (_thresholds, _defaults)
"""Miners run for every registered checker."""


def mine(
    data: MiningData,
    miners: Mapping[str, Miner] | None = None,
    generic: Sequence[Miner] | None = None,
) -> list[Proposal]:
    """Every proposal of every miner, for every registered checker, in registry order.

    A miner that raises costs only its own proposals; ``data.notes`` says which.
    """
    table = MINERS if miners is None else miners
    everyone = GENERIC_MINERS if generic is None else generic
    out: list[Proposal] = []
    for info in data.registry:
        specific = table.get(info.name)
        for miner in [*([specific] if specific else []), *everyone]:
            try:
                out.extend(miner(info, data))
            except Exception as exc:
                name = getattr(miner, "__name__", "a miner").lstrip("_")
                data.notes.append(
                    f"mining {info.name!r} ({name}) failed: {type(exc).__name__}: {exc}"
                )
    return out


# -- thresholds ----------------------------------------------------------------------


def _numeric_options(info: CheckerInfo) -> list[tuple[str, str, int]]:
    """``(option, "max" | "min", least value)`` for each bound the checker takes alone."""
    model = info.options_model
    if model is None:
        return []
    try:
        schema = model.model_json_schema()
    except Exception:  # an option type with no JSON schema
        return []
    required = set(schema.get("required", ()))
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        bound = _BOUND.match(name)
        ints = [p for p in [prop, *prop.get("anyOf", ())] if p.get("type") == "integer"]
        if bound is None or not ints or required - {name}:
            continue
        low = ints[0].get("minimum", ints[0].get("exclusiveMinimum", -1) + 1)
        out.append((name, bound.group(1), max(0, int(low))))
    return out


def _passes(info: CheckerInfo, text: str, options: dict[str, Any], ctx: CheckContext) -> bool:
    if info.wants_context:
        options = {**options, CONTEXT_PARAM: ctx}
    try:
        raw = info.fn(text, **options)
    except Exception:
        return False
    return raw is True or (isinstance(raw, CheckResult) and raw.passed)


def _probe(
    info: CheckerInfo, option: str, kind: str, low: int, text: str, ctx: CheckContext
) -> int | None:
    """The draft's own value: the least ``max`` it passes with, or the most ``min``
    (None when no value passes; :data:`CAP` when a ``min`` passes up to the cap).
    The threshold doubles until the answer flips, then halves the gap: about
    2 log2(value) checker calls."""

    def ok(t: int) -> bool:
        return _passes(info, text, {option: t}, ctx)

    # a max passes from the value up, a min up to the value: `inside` is the side that
    # passes for a max and fails for a min, so both searches are one
    inside = ok if kind == "max" else (lambda t: not ok(t))
    if inside(low):
        return low if kind == "max" else None
    outside, t = low, max(low * 2, low + 1)
    while not inside(t):
        outside = t
        if t >= CAP:
            return None if kind == "max" else CAP
        t = min(CAP, t * 2)
    while t - outside > 1:
        mid = (outside + t) // 2
        if inside(mid):
            t = mid
        else:
            outside = mid
    return t if kind == "max" else outside


def _sweep(
    values: Sequence[int | None], met: Sequence[bool], kind: str, hints: Sequence[int]
) -> list[tuple[int, float]]:
    """Thresholds best first, each with its train kappa (positive ones only)."""
    known = sorted({v for v in values if v is not None})
    if not known:
        return []
    n_met = sum(met)
    n_unmet = len(met) - n_met
    at: dict[int, list[int]] = {v: [0, 0] for v in known}
    for v, m in zip(values, met, strict=True):
        if v is not None:
            at[v][0 if m else 1] += 1
    order = known if kind == "max" else known[::-1]
    cuts = []
    a = b = 0  # drafts predicted met: labelled met, labelled unmet
    for i, v in enumerate(order):
        a, b = a + at[v][0], b + at[v][1]
        k = kappa_of(a, b, n_met - a, n_unmet - b)
        if k > 0:
            nxt = order[i + 1] if i + 1 < len(order) else None
            if kind == "max":
                lo, hi = v, (nxt - 1 if nxt is not None else max(v * 2, v + 10))
            else:
                lo, hi = (nxt + 1 if nxt is not None else 0), v
            cuts.append((-k, i, _pick(lo, hi, hints, kind)))
    cuts.sort()
    return [(t, -k) for k, _, t in cuts]


def _pick(lo: int, hi: int, hints: Sequence[int], kind: str) -> int:
    """A number in [lo, hi]: one from the description, else the roundest (the one
    nearest the met drafts' side among equals), else the met side's own value."""
    for h in hints:
        if lo <= h <= hi:
            return h
    for step in (1000, 500, 100, 50, 10, 5):
        t = -(-lo // step) * step if kind == "max" else hi // step * step
        if lo <= t <= hi:
            return t
    return lo if kind == "max" else hi
