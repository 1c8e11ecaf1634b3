"""Numbers a reviewer trusts: intervals on every figure, paired comparisons of two
runs, judge-error-corrected rates, power, and where the noise comes from.

Start from graded drafts (rows), or from their sufficient statistics (a tally)::

    from gradeloop.stats import GradedRow, RunTally, summarize

    rows = [GradedRow.from_evaluation(ev) for ev in evaluations]
    summary = summarize(rows, level=0.95)           # or cluster="task"
    summary.accepted.ci                             # [low, high], Wilson
    summary.to_json()                               # what `gradeloop summarize --json` prints

Two runs of the same drafts, pair by pair (McNemar's exact test per key and on the
gate, Holm-adjusted; what `gradeloop gate` decides on)::

    from gradeloop.stats import compare_runs

    result = compare_runs(baseline_rows, candidate_rows, detect=0.05)
    result.verdict, result.exit_code                # "regression" and 1, ...

**Sufficient statistics that merge exactly.** :class:`RunTally` holds, for a set of
graded drafts: the drafts, failed and accepted counts; the overall score's count,
sum and sum of squares; per key (:class:`KeyTally`) the met / unmet counts, the 0-10
scores' count, sum and sum of squares, the judge's samples (count, met, and the
per-draft moments that make each draft a cluster of samples), and the shadow's 2x2
cells against the primary; and, when a cluster field is named, per cluster value
(:class:`ClusterTally`) the same totals. Counts are integers and sums
:class:`~fractions.Fraction` (every float is one exactly), so
``RunTally.of(a) + RunTally.of(b) == RunTally.of(a + b)`` holds exactly, in any order
and grouping, and :func:`summarize` gives the same intervals from either. A
distributed run tallies each shard where it is graded and adds the tallies;
:meth:`RunTally.to_json` / :meth:`RunTally.from_json` carry one between processes
exactly::

    total = RunTally()                              # or RunTally(cluster="task")
    for shard in shards:
        total = total + RunTally.of(shard)          # or RunTally.from_evaluations(...)
    summarize(total).to_json()

Everything is computed with the standard library (no SciPy at run time); the tests
hold each statistic to ``scipy.stats`` and ``statsmodels`` within 1e-9. The methods
and their choices are in docs/statistics.md.
"""

from ._compare import (
    Comparison,
    RunComparison,
    ScoreComparison,
    compare_counts,
    compare_runs,
    dataset_digest,
)
from ._corrected import CorrectedRate, corrected_rate
from ._intervals import (
    Interval,
    clustered_mean,
    clustered_rate,
    kappa_interval,
    t_interval,
    wilson,
)
from ._paired import (
    PairedCounts,
    detectable_mean_difference,
    detectable_rate_difference,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    paired_rate_difference,
    paired_t,
    sample_size_paired_rates,
)
from ._rows import GradedRow, KeyOutcome
from ._summary import KeySummary, Summary, summarize
from ._tally import ClusterTally, KeyTally, RunTally
from ._variance import VarianceShares, variance_shares

__all__ = [
    "ClusterTally",
    "Comparison",
    "CorrectedRate",
    "GradedRow",
    "Interval",
    "KeyOutcome",
    "KeySummary",
    "KeyTally",
    "PairedCounts",
    "RunComparison",
    "RunTally",
    "ScoreComparison",
    "Summary",
    "VarianceShares",
    "clustered_mean",
    "clustered_rate",
    "compare_counts",
    "compare_runs",
    "corrected_rate",
    "dataset_digest",
    "detectable_mean_difference",
    "detectable_rate_difference",
    "holm",
    "kappa_interval",
    "mcnemar_exact",
    "paired_bootstrap",
    "paired_rate_difference",
    "paired_t",
    "sample_size_paired_rates",
    "summarize",
    "t_interval",
    "variance_shares",
    "wilson",
]
