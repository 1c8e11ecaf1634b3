"""Two people's labels on the same drafts: how far they agree, key by key.

A judge can agree with people no better than people agree with each other: where
two labellers split on a criterion, the criterion (not the judge) is ambiguous, and
rewriting its description to match one of them would only fit the judge to that one
person's reading. ``calibrate`` reports this beside the judge's figures, and
``align`` refuses to rewrite such a key.

Drafts are matched by their text and task (two files made by ``gradeloop label`` from
one run have the same ones), so the files may list them in any order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..grading._rubric import Rubric
from ..grading._transcript import judge_text
from ._agreement import PassFailStats, pass_fail_stats
from ._jsonl import LabelledItem

__all__ = [
    "MIN_LABELLER_AGREEMENT",
    "MIN_LABELLER_KAPPA",
    "LabellerAgreement",
    "labeller_agreement",
]

#: Below this share of drafts labelled alike, a key counts as ambiguous.
MIN_LABELLER_AGREEMENT = 0.8
#: Below this Cohen's kappa (where it says something), a key counts as ambiguous.
MIN_LABELLER_KAPPA = 0.6


@dataclass(frozen=True)
class LabellerAgreement:
    """Two labellers on one key: their figures, and whether the key is ambiguous."""

    key: str
    stats: PassFailStats

    @property
    def ambiguous(self) -> bool:
        """The labellers disagree too often for the criterion to have one reading."""
        s = self.stats
        if s.n == 0 or s.agreement is None:
            return False
        if s.agreement < MIN_LABELLER_AGREEMENT:
            return True
        # a kappa with a note (a labeller gave one answer throughout) says nothing more
        return s.kappa is not None and s.kappa_note is None and s.kappa < MIN_LABELLER_KAPPA

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: both labellers' confusion table, figures and ``ambiguous``."""
        return {**self.stats.to_json("first", "second"), "ambiguous": self.ambiguous}


def _met(rubric: Rubric, key: str, label: bool | float) -> bool:
    return label if isinstance(label, bool) else label >= rubric[key].pass_threshold


def labeller_agreement(
    first: Sequence[LabelledItem], second: Sequence[LabelledItem], rubric: Rubric
) -> dict[str, LabellerAgreement]:
    """Per key both files labelled on the same drafts: the labellers' agreement on met
    / not met (a scored label is met at the key's threshold), in rubric order."""
    theirs: dict[tuple[str, str], Mapping[str, bool | float]] = {}
    for item in second:
        theirs.setdefault((item.task, judge_text(item.draft)), item.labels)
    pairs: dict[str, tuple[list[bool], list[bool]]] = {}
    for item in first:
        other = theirs.get((item.task, judge_text(item.draft)))
        if other is None:
            continue
        for key, label in item.labels.items():
            if key in other:
                a, b = pairs.setdefault(key, ([], []))
                a.append(_met(rubric, key, label))
                b.append(_met(rubric, key, other[key]))
    return {
        key: LabellerAgreement(key, pass_fail_stats(*pairs[key]))
        for key in rubric.keys
        if key in pairs
    }
