"""Controls for a judge's own biases: pairwise comparison in both orders, juries
across model families, shuffled criteria orders, and the same-family warning::

    from gradeloop.judging import Jury, compare_drafts

    jury = Jury([judge_a, judge_b, judge_c])          # itself a judge
    preference = compare_drafts(a, b, rubric, judge=judge_a)
    print(preference.winner, preference.by_key)

Nothing here imports the model tier, so the model tier can use the small pieces
(``_choices``, ``_orders``) without a cycle.
"""

from ._bias import (
    PairItem,
    PositionBias,
    PreferenceBatch,
    acompare_many,
    compare_many,
    position_bias,
)
from ._jury import Jury
from ._preference import Preference, acompare_drafts, compare_drafts
from ._votes import JuryVerdict

__all__ = [
    "Jury",
    "JuryVerdict",
    "PairItem",
    "PositionBias",
    "Preference",
    "PreferenceBatch",
    "acompare_drafts",
    "acompare_many",
    "compare_drafts",
    "compare_many",
    "position_bias",
]
