"""``gradeloop calibrate``'s statistics: intervals on agreement and kappa, and each
key's met rate corrected for the errors the labels show the rater makes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..migration._calibrate import CalibrationReport, KeyCalibration
from ..stats import GradedRow, corrected_rate, kappa_interval, wilson
from ._io import console
from ._runs import LoadedRun, add_level_option, check_level, load_run


def add_options(p: argparse.ArgumentParser) -> None:
    """``--correct RUN|FILE`` and ``--level``."""
    p.add_argument(
        "--correct",
        metavar="RUN|FILE",
        help="a grading run (id, or a `grade --drafts --json` file) whose met rates to "
        "correct for the judge's errors the labels show; default: the labelled drafts",
    )
    add_level_option(p)


def run_to_correct(args: argparse.Namespace) -> LoadedRun | None:
    """The ``--correct`` run, read before any judge is paid for (a typo fails first)."""
    check_level(args.level)
    return None if args.correct is None else load_run(args.correct, args.db)


def figures(
    report: CalibrationReport, run: LoadedRun | None, level: float
) -> dict[tuple[str, str], Any]:
    """Per (key, role): ``corrected_rate``, ``ci``, ``correction`` (what went in),
    ``agreement_ci`` and ``kappa_ci``."""
    label, rows = ("labelled drafts", None) if run is None else (run.label, run.rows)
    return {(k.key, k.role): _key(k, rows, label, level) for k in report.keys}


def _key(
    k: KeyCalibration, rows: Sequence[GradedRow] | None, label: str, level: float
) -> dict[str, Any]:
    t = k.stats.table  # people (a) against the rater (b)
    tp, fn, fp, tn = t.both_pass, t.a_pass_b_fail, t.a_fail_b_pass, t.both_fail
    source = label
    if rows is not None and k.role == "primary":
        answers = [r.keys[k.key].met for r in rows if r.accepted is not None and k.key in r.keys]
        met, n = sum(1 for a in answers if a), sum(1 for a in answers if a is not None)
    else:  # on the labelled drafts themselves (equal to the people's rate, by design)
        met, n, source = tp + fp, t.n, "labelled drafts"
    fixed = corrected_rate(
        met, n, true_positive=tp, positives=tp + fn, true_negative=tn, negatives=tn + fp,
        level=level,
    )  # fmt: skip
    kappa = kappa_interval(tp, tn, fn, fp, level)
    agreement = wilson(tp + tn, t.n, level)
    correction = fixed.to_json()
    correction["from"] = source
    correction["n"] = n
    return {
        "corrected_rate": correction.pop("corrected_rate"),
        "ci": correction.pop("ci"),
        "correction": correction,
        "agreement_ci": agreement.to_json()["ci"],
        "kappa_ci": kappa.to_json()["ci"],
        "level": level,
    }


def merge_json(out: dict[str, Any], extra: dict[tuple[str, str], Any]) -> None:
    """Add each key's figures to the report's JSON, in place."""
    for row in out["keys"]:
        row.update(extra.get((row["key"], row["role"]), {}))


def render(report: CalibrationReport, extra: dict[tuple[str, str], Any]) -> None:
    """One line per key: its corrected met rate (or why there is none)."""
    out = console()
    lines = []
    for k in report.keys:
        f = extra.get((k.key, k.role))
        if f is None or k.stats.n == 0:
            continue
        c = f["correction"]
        who = k.rated_by + (" (shadow)" if k.role == "shadow" else "")
        if f["corrected_rate"] is None:
            lines.append(f"  {k.key} ({who}): {c['note']}")
            continue
        ci = "" if f["ci"] is None else f" [{f['ci'][0] * 100:.1f}, {f['ci'][1] * 100:.1f}]"
        lines.append(
            f"  {k.key} ({who}): {f['corrected_rate'] * 100:.1f} %{ci}, observed "
            f"{c['observed_rate'] * 100:.1f} % of {c['n']} in {c['from']} "
            f"(TPR {c['tpr']:.2f}, TNR {c['tnr']:.2f})"
        )
    if lines:
        level = next(iter(extra.values()))["level"]
        out.print(
            f"\nmet rate corrected for the rater's errors ({level * 100:g} % intervals):",
            markup=False,
        )
        for line in lines:
            out.print(line, markup=False)
