"""Moving a criterion from the judge to code: compare, calibrate, regrade, align and
propose, agreement statistics, per-key judge cost, and the JSONL readers for drafts
and labels::

    from gradeloop.migration import calibrate, compare, read_drafts, read_labels

    report = compare(read_drafts("drafts.jsonl"), rubric, judge=judge)
    for key in report.keys:                   # each shadowed key: code beside the judge
        print(key.criterion.key, key.stats.kappa)

See docs/migrating-a-criterion.md for the whole road.
"""

from ._align import AlignReport, KeyAlignment, align
from ._calibrate import CalibrationReport, KeyCalibration, calibrate
from ._compare import CompareReport, KeyComparison, compare
from ._evidence import KeyVerdict, StoredDraft, stored_drafts
from ._jsonl import DraftItem, LabelledItem, read_drafts, read_labels
from ._propose import CandidateResult, Proposal, propose_checkers
from ._regrade import KeyFlips, RegradeReport, regrade
from ._rubric_write import write_rubric

__all__ = [
    "AlignReport",
    "CalibrationReport",
    "CandidateResult",
    "CompareReport",
    "DraftItem",
    "KeyAlignment",
    "KeyCalibration",
    "KeyComparison",
    "KeyFlips",
    "KeyVerdict",
    "LabelledItem",
    "Proposal",
    "RegradeReport",
    "StoredDraft",
    "align",
    "calibrate",
    "compare",
    "propose_checkers",
    "read_drafts",
    "read_labels",
    "regrade",
    "stored_drafts",
    "write_rubric",
]
