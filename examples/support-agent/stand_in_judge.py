"""A deterministic stand-in for the judge model, for docs/agents.md.

It is **not** a model: a judge object (``evaluate(task, draft, criteria)``) that
reads the transcript as gradeloop renders it for a judge and answers by a rule, so
the worked example runs with no key and no network. Its rule is fallible the way a
hurried judge is: it says the agent used the right tools when the transcript shows a
``lookup_order`` call and an ``issue_refund`` call anywhere, whatever their order,
their arguments, or the other calls made.
"""

from __future__ import annotations

from collections.abc import Sequence

from gradeloop import Criterion, Verdict


class StandInJudge:
    """Met when both tools were called at all; every key it is asked gets that answer."""

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        met = "calls lookup_order(" in draft and "calls issue_refund(" in draft
        keys = [c.key for c in criteria]
        return Verdict(
            reasoning="The transcript shows a lookup and a refund."
            if met
            else "A lookup or a refund is missing.",
            criteria_met=dict.fromkeys(keys, met),
            passed=met,
            issues=[] if met else [f"{k}: look the order up and refund it" for k in keys],
        )
