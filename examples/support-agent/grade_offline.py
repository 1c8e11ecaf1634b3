"""Grade the support agent's transcripts offline, then weigh moving "right_tools" to code.

Run from the repository root::

    python examples/support-agent/grade_offline.py

It grades every line of transcripts.jsonl with rubric.toml (code only), then runs
``compare`` and ``calibrate`` for rubric-shadow.toml, where the judge (here the
stand-in of stand_in_judge.py) decides "right_tools" and tool_sequence shadows it.
"""

from __future__ import annotations

import runpy
from pathlib import Path

from gradeloop import Evaluation, Rubric, grade_many
from gradeloop.migration import (
    CalibrationReport,
    CompareReport,
    calibrate,
    compare,
    read_drafts,
    read_labels,
)

HERE = Path(__file__).resolve().parent
StandInJudge = runpy.run_path(str(HERE / "stand_in_judge.py"))["StandInJudge"]


def grade_all() -> list[tuple[str, Evaluation]]:
    """Each transcript's id and its evaluation by rubric.toml."""
    items = read_drafts(HERE / "transcripts.jsonl")
    evaluations = grade_many(items, Rubric.load(HERE / "rubric.toml"))
    return [(item.output_id, ev) for item, ev in zip(items, evaluations, strict=True)]


def migrate() -> tuple[CompareReport, CalibrationReport]:
    """compare (judge vs shadow) and calibrate (both vs people's labels)."""
    rubric = Rubric.load(HERE / "rubric-shadow.toml")
    judge = StandInJudge()
    report = compare(read_drafts(HERE / "transcripts.jsonl"), rubric, judge=judge)
    labels = read_labels(HERE / "labels.jsonl", rubric)
    return report, calibrate(labels, rubric, judge=judge)


def main() -> None:
    for ident, ev in grade_all():
        verdict = "accepted" if ev.accepted else "failed: " + ", ".join(ev.failed_keys)
        print(f"{ident:20} {verdict}")
    report, calibration = migrate()
    [key] = report.keys
    print(f"\nright_tools: judge and tool_sequence agree on {key.stats.agreement:.0%} of drafts")
    for k in calibration.keys:
        print(f"  {k.rated_by:14} agrees with people on {k.stats.agreement:.0%}")


if __name__ == "__main__":
    main()
