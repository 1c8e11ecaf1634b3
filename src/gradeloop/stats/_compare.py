"""Two runs over the same drafts (or tasks), compared pair by pair: what ``gradeloop
compare-runs`` and ``gradeloop gate`` report."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ._intervals import Interval, check_level
from ._paired import (
    PairedCounts,
    detectable_mean_difference,
    detectable_rate_difference,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    paired_rate_difference,
    paired_t,
)
from ._rows import GradedRow

__all__ = [
    "Comparison",
    "RunComparison",
    "ScoreComparison",
    "compare_counts",
    "compare_runs",
    "dataset_digest",
]

#: Exit codes of ``gradeloop gate``.
EXIT_PASS, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INSUFFICIENT = 0, 1, 2, 4
GATE = "accepted"


@dataclass(frozen=True)
class Comparison:
    """One binary outcome (a key met, or a draft accepted) in both runs: the paired
    table, the difference (candidate - baseline) with Newcombe's interval, McNemar's
    exact p and its Holm-adjusted value, the smallest change these pairs could
    detect, and the verdict (``"regression"``, ``"regression within max-drop"``,
    ``"improvement"``, ``"no regression"`` or ``"insufficient evidence"``)."""

    name: str
    counts: PairedCounts
    difference: Interval
    p: float
    p_adjusted: float
    detectable: float | None
    verdict: str
    max_drop: float | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"baseline", "candidate", "diff", "ci", "p", "p_adjusted", "verdict"}``
        and the counts behind them."""
        c = self.counts
        return {
            "baseline": _r(c.baseline_rate),
            "candidate": _r(c.candidate_rate),
            "diff": _r(c.difference),
            "ci": None if self.difference.ci is None else [_r(x) for x in self.difference.ci],
            "p": _r(self.p, 6),
            "p_adjusted": _r(self.p_adjusted, 6),
            "verdict": self.verdict,
            "n": c.n,
            "lost": c.lost,
            "gained": c.gained,
            "detectable": _r(self.detectable),
            "max_drop": self.max_drop,
        }


@dataclass(frozen=True)
class ScoreComparison:
    """A 0-10 score in both runs: the paired t interval of the mean difference, its
    p-value, the seeded paired bootstrap interval, and the detectable difference."""

    name: str
    baseline: float | None
    candidate: float | None
    t: Interval
    p: float
    bootstrap: Interval
    detectable: float | None

    def to_json(self) -> dict[str, Any]:
        """``{"baseline", "candidate", "diff", "ci", "p", "bootstrap_ci", "n", "detectable"}``."""
        return {
            "baseline": _r(self.baseline),
            "candidate": _r(self.candidate),
            "diff": _r(self.t.estimate),
            "ci": None if self.t.ci is None else [_r(x) for x in self.t.ci],
            "p": _r(self.p, 6),
            "bootstrap_ci": None
            if self.bootstrap.ci is None
            else [_r(x) for x in self.bootstrap.ci],
            "n": self.t.n,
            "detectable": _r(self.detectable),
        }


@dataclass(frozen=True)
class RunComparison:
    """Baseline against candidate, pair by pair.

    ``accepted`` compares the gate, ``keys`` each key both runs have, ``scores`` the
    overall score and each scored key. Holm's correction runs over the gate and the
    keys together. :attr:`verdict` is ``"regression"`` when any of them regressed,
    else ``"insufficient evidence"`` when any could not have shown a drop of the size
    asked, else ``"no regression"``; :attr:`exit_code` is what ``gradeloop gate``
    exits with (1, 4, 0).
    """

    aligned_by: str
    pairs: int
    accepted: Comparison
    keys: Mapping[str, Comparison]
    scores: Mapping[str, ScoreComparison]
    level: float
    power: float
    detect: float
    only_baseline: Sequence[str] = ()
    only_candidate: Sequence[str] = ()
    failed: int = 0
    warnings: Sequence[str] = field(default_factory=list)

    @property
    def comparisons(self) -> list[Comparison]:
        """The gate first, then the keys."""
        return [self.accepted, *self.keys.values()]

    @property
    def verdict(self) -> str:
        """``"regression"``, ``"insufficient evidence"`` or ``"no regression"``."""
        verdicts = {c.verdict for c in self.comparisons}
        if "regression" in verdicts:
            return "regression"
        if "insufficient evidence" in verdicts:
            return "insufficient evidence"
        return "no regression"

    @property
    def exit_code(self) -> int:
        """1 for a regression, 4 for insufficient evidence, 0 otherwise."""
        return {"regression": EXIT_REGRESSION, "insufficient evidence": EXIT_INSUFFICIENT}.get(
            self.verdict, EXIT_PASS
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: the verdict, the alignment, ``"accepted"``, ``"keys"`` (each
        ``{"baseline", "candidate", "diff", "ci", "p", "p_adjusted", "verdict", ...}``),
        ``"scores"`` and ``"warnings"``."""
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "level": self.level,
            "power": self.power,
            "detect": self.detect,
            "aligned_by": self.aligned_by,
            "pairs": self.pairs,
            "failed": self.failed,
            "only_baseline": list(self.only_baseline),
            "only_candidate": list(self.only_candidate),
            "accepted": self.accepted.to_json(),
            "keys": {k: c.to_json() for k, c in self.keys.items()},
            "scores": {k: s.to_json() for k, s in self.scores.items()},
            "warnings": list(self.warnings),
        }

    def markdown(self) -> str:
        """A Markdown summary (for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment)."""
        icon = {"regression": "❌", "insufficient evidence": "⚠️"}.get(self.verdict, "✅")
        pct = round(self.level * 100, 2)
        lines = [
            f"### {icon} gradeloop gate: {self.verdict}",
            "",
            f"{self.pairs} paired drafts (aligned by {self.aligned_by}); {pct:g} % intervals; "
            f"McNemar's exact test, Holm-adjusted; detectable: the smallest change these pairs "
            f"show at {round(self.power * 100):d} % power.",
            "",
            "| | baseline | candidate | change [CI] | p (Holm) | detectable | verdict |",
            "|---|---:|---:|---|---:|---:|---|",
        ]
        for c in self.comparisons:
            j = c.to_json()
            ci = "" if j["ci"] is None else f" [{_pp(j['ci'][0])}, {_pp(j['ci'][1])}]"
            name = "**accepted** (the gate)" if c is self.accepted else f"`{_md(c.name)}`"
            lines.append(
                f"| {name} | {_pct(j['baseline'])} | {_pct(j['candidate'])} | "
                f"{_pp(j['diff'])}{ci} | {j['p_adjusted']:.3g} | "
                f"{_pp(j['detectable'], sign=False)} | {c.verdict} |"
            )
        for w in self.warnings:
            lines.append(f"\n> **warning:** {_md(w)}")
        return "\n".join(lines) + "\n"


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f} %"


def _pp(x: float | None, *, sign: bool = True) -> str:
    """A difference of rates in percentage points."""
    if x is None:
        return "-"
    return f"{x * 100:+.1f} pp" if sign else f"{x * 100:.1f} pp"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def dataset_digest(rows: Iterable[GradedRow]) -> str:
    """A hash of what was graded, draft ids and tasks (not the drafts): two runs of
    the same dataset share it whatever their generators wrote."""
    items = sorted([r.id, r.task] for r in rows)
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode()).hexdigest()[:16]


def _index(rows: Sequence[GradedRow], by: str, side: str) -> dict[str, GradedRow]:
    out: dict[str, GradedRow] = {}
    for row in rows:
        key = row.id if by == "id" else row.task
        if key in out:
            raise InputError(
                f"the {side} run has two drafts with {by} {key!r}: pairs need one draft per "
                f"{by}; grade each {by} once"
            )
        out[key] = row
    return out


def align(
    baseline: Sequence[GradedRow], candidate: Sequence[GradedRow]
) -> tuple[str, list[tuple[GradedRow, GradedRow]], list[str], list[str]]:
    """Pair the drafts by id, else (no id in common) by task; the pairs and what only
    one side has."""
    for by in ("id", "task"):
        if by == "task" and not all(r.task for r in [*baseline, *candidate]):
            continue
        a, b = _index(baseline, by, "baseline"), _index(candidate, by, "candidate")
        common = [k for k in a if k in b]
        if common:
            pairs = [(a[k], b[k]) for k in common]
            return by, pairs, [k for k in a if k not in b], [k for k in b if k not in a]
    raise InputError(
        "the two runs share no draft id (nor task): compare runs graded on the same drafts or tasks"
    )


def compare_runs(
    baseline: Iterable[GradedRow],
    candidate: Iterable[GradedRow],
    *,
    level: float = 0.95,
    power: float = 0.8,
    detect: float = 0.05,
    max_drop: Mapping[str, float] | None = None,
    seed: int = 0,
    resamples: int = 2000,
) -> RunComparison:
    """Compare two runs' drafts pair by pair (see :class:`RunComparison`).

    ``detect`` is the smallest drop the comparison must be able to show (at
    ``power``) before a clean result counts as "no regression" rather than
    "insufficient evidence"; ``max_drop`` maps a key (or ``"accepted"``, or ``"*"``
    for every one) to a drop it tolerates: a significant drop no larger does not
    count as a regression, and that key's required resolution is its max-drop.
    """
    check_level(level)
    if not 0 < power < 1:
        raise InputError(f"power is between 0 and 1 (e.g. 0.8), not {power}")
    if not 0 < detect < 1:
        raise InputError(f"--detect is a rate difference between 0 and 1 (e.g. 0.05), not {detect}")
    base, cand = list(baseline), list(candidate)
    by, pairs, only_a, only_b = align(base, cand)
    graded = [(a, b) for a, b in pairs if a.accepted is not None and b.accepted is not None]
    drops = dict(max_drop or {})
    outcomes, keys_a, keys_b = _outcomes(graded)
    counts = {k: PairedCounts.of([x for x, _ in v], [y for _, y in v]) for k, v in outcomes.items()}
    done = compare_counts(counts, level=level, power=power, detect=detect, max_drop=drops)
    warnings = _warnings(keys_a, keys_b, base, cand, by)
    return RunComparison(
        aligned_by=by,
        pairs=len(pairs),
        accepted=done.pop(GATE),
        keys=done,
        scores=_scores(graded, level, power, seed, resamples),
        level=level,
        power=power,
        detect=detect,
        only_baseline=only_a,
        only_candidate=only_b,
        failed=len(pairs) - len(graded),
        warnings=warnings,
    )


def _outcomes(
    graded: list[tuple[GradedRow, GradedRow]],
) -> tuple[dict[str, list[tuple[bool, bool]]], set[str], set[str]]:
    """The paired outcomes of the gate and of every key both runs answered, and the
    keys each run has."""
    outcomes: dict[str, list[tuple[bool, bool]]] = {
        GATE: [(bool(a.accepted), bool(b.accepted)) for a, b in graded]
    }
    keys_a = {k for a, _ in graded for k in a.keys}
    keys_b = {k for _, b in graded for k in b.keys}
    for key in sorted(keys_a & keys_b):
        outcomes[key] = [
            (a.keys[key].met, b.keys[key].met)  # type: ignore[misc]
            for a, b in graded
            if key in a.keys
            and key in b.keys
            and a.keys[key].met is not None
            and b.keys[key].met is not None
        ]
    return outcomes, keys_a, keys_b


def compare_counts(
    counts: Mapping[str, PairedCounts],
    *,
    level: float = 0.95,
    power: float = 0.8,
    detect: float = 0.05,
    max_drop: Mapping[str, float] | None = None,
) -> dict[str, Comparison]:
    """Each paired table compared (McNemar's exact test, Holm-adjusted over all of
    them, Newcombe's interval, the detectable change and the verdict; see
    :func:`compare_runs` for ``detect`` and ``max_drop``)."""
    check_level(level)
    drops = dict(max_drop or {})
    ps = {k: mcnemar_exact(c.lost, c.gained) for k, c in counts.items()}
    adjusted = dict(zip(ps, holm(list(ps.values())), strict=True))
    alpha = 1 - level
    return {
        k: _judge(
            k, c, ps[k], adjusted[k], level, power, alpha, drops.get(k, drops.get("*")), detect
        )
        for k, c in counts.items()
    }


def _judge(
    name: str,
    c: PairedCounts,
    p: float,
    p_adj: float,
    level: float,
    power: float,
    alpha: float,
    max_drop: float | None,
    detect: float,
) -> Comparison:
    diff = paired_rate_difference(c, level)
    discord = (c.lost + c.gained) / c.n if c.n else 0.0
    detectable = detectable_rate_difference(c.n, discord, alpha=alpha, power=power)
    change = c.difference or 0.0
    if p_adj < alpha and change < 0:
        small = max_drop is not None and -change <= max_drop
        verdict = "regression within max-drop" if small else "regression"
    elif p_adj < alpha and change > 0:
        verdict = "improvement"
    else:
        need = max_drop if max_drop is not None else detect
        enough = detectable is not None and detectable <= need
        verdict = "no regression" if enough else "insufficient evidence"
    return Comparison(name, c, diff, p, p_adj, detectable, verdict, max_drop)


def _scores(
    pairs: list[tuple[GradedRow, GradedRow]], level: float, power: float, seed: int, resamples: int
) -> dict[str, ScoreComparison]:
    series: dict[str, list[tuple[float, float]]] = {
        "overall": [
            (a.overall, b.overall)
            for a, b in pairs
            if a.overall is not None and b.overall is not None
        ]
    }
    scored = {
        k
        for a, b in pairs
        for row in (a, b)
        for k, o in row.keys.items()
        if o.score is not None and o.score not in (0.0, 10.0)
    }
    for key in sorted(scored):
        series[key] = [
            (a.keys[key].score, b.keys[key].score)  # type: ignore[misc]
            for a, b in pairs
            if key in a.keys and key in b.keys
            and a.keys[key].score is not None and b.keys[key].score is not None
        ]  # fmt: skip
    out = {}
    for name, values in series.items():
        if not values:
            continue
        xs, ys = [x for x, _ in values], [y for _, y in values]
        t, p = paired_t(xs, ys, level)
        boot = paired_bootstrap(xs, ys, level, resamples=resamples, seed=seed)
        n = len(values)
        sd = _sd([y - x for x, y in values])
        detectable = (
            None if sd is None else detectable_mean_difference(n, sd, alpha=1 - level, power=power)
        )
        out[name] = ScoreComparison(name, sum(xs) / n, sum(ys) / n, t, p, boot, detectable)
    return out


def _sd(values: list[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def _warnings(
    keys_a: set[str], keys_b: set[str], base: list[GradedRow], cand: list[GradedRow], by: str
) -> list[str]:
    out = []
    if keys_a - keys_b:
        out.append(f"keys only in the baseline, not compared: {', '.join(sorted(keys_a - keys_b))}")
    if keys_b - keys_a:
        out.append(
            f"keys only in the candidate, not compared: {', '.join(sorted(keys_b - keys_a))}"
        )
    da, db = dataset_digest(base), dataset_digest(cand)
    if da != db:
        out.append(
            f"the runs graded different datasets (digest {da} vs {db}: their draft ids or "
            f"tasks differ); only the {by}s both have are compared"
        )
    return out
