"""Do gradeloop's 95 % intervals cover the truth 95 % of the time?

Run: ``python benchmarks/bench_stats_coverage.py [--reps 4000] [--seed 42] [--level 0.95]``

Each scenario draws data from a model whose true value is known, computes the
interval gradeloop.stats gives, and counts how often it holds the truth. A correct
95 % interval covers 93-97 % of the time (the band the statistics issue asks for;
with 4,000 replicates the Monte Carlo error of a coverage near 95 % is about 0.35
points). Scenarios:

* **Wilson**: a pass rate p from n independent drafts.
* **t**: the mean of 0-10 scores drawn from a skewed, discrete distribution.
* **clustered**: drafts grouped in tasks that differ (each task's pass rate drawn
  from a Beta with intra-class correlation 0.2; each task's scores shifted by a task
  effect): the cluster-robust interval, beside plain Wilson / t on the same data,
  which ignore the grouping and undercover.
* **samples**: k judge samples of each draft, whose own met-probability varies: the
  votes clustered by draft, beside counting every vote as independent.
* **corrected**: the true met rate of a run judged by a judge with TPR 0.85 and TNR
  0.90, corrected by Rogan-Gladen with TPR and TNR estimated from labelled drafts;
  the delta-method interval must carry all three uncertainties.

Nothing here asserts; the figures go into benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from fractions import Fraction

from gradeloop.stats import (
    Interval,
    clustered_mean,
    clustered_rate,
    corrected_rate,
    t_interval,
    wilson,
)

Scenario = Callable[[random.Random, float], tuple[Interval, float]]


def binomial(rng: random.Random, n: int, p: float) -> int:
    return sum(rng.random() < p for _ in range(n))


def wilson_case(n: int, p: float) -> Scenario:
    def run(rng: random.Random, level: float) -> tuple[Interval, float]:
        return wilson(binomial(rng, n, p), n, level), p

    return run


SCORES = (0, 2, 5, 6, 7, 8, 9, 10)
WEIGHTS = (0.05, 0.05, 0.10, 0.15, 0.20, 0.25, 0.12, 0.08)
SCORE_MEAN = sum(s * w for s, w in zip(SCORES, WEIGHTS, strict=True))


def t_case(n: int) -> Scenario:
    def run(rng: random.Random, level: float) -> tuple[Interval, float]:
        xs = [Fraction(x) for x in rng.choices(SCORES, WEIGHTS, k=n)]
        return t_interval(n, sum(xs), sum(x * x for x in xs), level), SCORE_MEAN

    return run


def _tasks(rng: random.Random, g: int, mu: float, icc: float) -> list[tuple[int, int]]:
    """g tasks of 3-12 drafts, each task's rate ~ Beta(mean mu, ICC icc)."""
    total = 1 / icc - 1
    a, b = mu * total, (1 - mu) * total
    out = []
    for _ in range(g):
        m = rng.randint(3, 12)
        out.append((binomial(rng, m, rng.betavariate(a, b)), m))
    return out


def clustered_case(g: int, mu: float, *, naive: bool) -> Scenario:
    def run(rng: random.Random, level: float) -> tuple[Interval, float]:
        tasks = _tasks(rng, g, mu, 0.2)
        if naive:
            return wilson(sum(s for s, _ in tasks), sum(m for _, m in tasks), level), mu
        return clustered_rate(tasks, level), mu

    return run


def clustered_mean_case(g: int, *, naive: bool) -> Scenario:
    def run(rng: random.Random, level: float) -> tuple[Interval, float]:
        groups = []
        for _ in range(g):
            shift = rng.gauss(0, 1.2)  # a task's effect on every score of its drafts
            m = rng.randint(3, 12)
            groups.append([Fraction(x + shift) for x in rng.choices(SCORES, WEIGHTS, k=m)])
        if naive:
            flat = [x for grp in groups for x in grp]
            return t_interval(len(flat), sum(flat), sum(x * x for x in flat), level), SCORE_MEAN
        return clustered_mean([(sum(grp), len(grp)) for grp in groups], level), SCORE_MEAN

    return run


def samples_case(drafts: int, k: int, mu: float, *, naive: bool) -> Scenario:
    def run(rng: random.Random, level: float) -> tuple[Interval, float]:
        # a draft's chance that one judge call says met: Beta around mu (judge noise)
        votes = [
            (binomial(rng, k, rng.betavariate(mu * 2, (1 - mu) * 2)), k) for _ in range(drafts)
        ]
        if naive:
            return wilson(sum(s for s, _ in votes), drafts * k, level), mu
        return clustered_rate(votes, level), mu

    return run


def corrected_case(n: int, labels: int, prevalence: float) -> Scenario:
    tpr, tnr = 0.85, 0.90

    def run(rng: random.Random, level: float) -> tuple[Interval, float]:
        truth = [rng.random() < prevalence for _ in range(n)]
        met = sum((rng.random() < tpr) if t else (rng.random() >= tnr) for t in truth)
        tp, tn = binomial(rng, labels, tpr), binomial(rng, labels, tnr)
        got = corrected_rate(
            met, n, true_positive=tp, positives=labels, true_negative=tn, negatives=labels,
            level=level,
        )  # fmt: skip
        return got.interval, prevalence

    return run


CASES: list[tuple[str, str, Scenario]] = [
    ("Wilson", "n=30, p=0.5", wilson_case(30, 0.5)),
    ("Wilson", "n=30, p=0.9", wilson_case(30, 0.9)),
    ("Wilson", "n=100, p=0.8", wilson_case(100, 0.8)),
    ("Wilson", "n=100, p=0.95", wilson_case(100, 0.95)),
    ("Wilson", "n=400, p=0.7", wilson_case(400, 0.7)),
    ("t", "n=20 scores", t_case(20)),
    ("t", "n=50 scores", t_case(50)),
    ("t", "n=200 scores", t_case(200)),
    ("clustered rate", "30 tasks, ICC 0.2, p=0.7", clustered_case(30, 0.7, naive=False)),
    ("clustered rate", "60 tasks, ICC 0.2, p=0.85", clustered_case(60, 0.85, naive=False)),
    ("  plain Wilson, same data", "30 tasks, ICC 0.2, p=0.7", clustered_case(30, 0.7, naive=True)),
    ("clustered mean", "30 tasks, task sd 1.2", clustered_mean_case(30, naive=False)),
    ("  plain t, same data", "30 tasks, task sd 1.2", clustered_mean_case(30, naive=True)),
    ("samples (votes by draft)", "100 drafts x 5, p=0.7", samples_case(100, 5, 0.7, naive=False)),
    ("  every vote independent", "100 drafts x 5, p=0.7", samples_case(100, 5, 0.7, naive=True)),
    ("corrected rate", "run 500, labels 100+100, p=0.3", corrected_case(500, 100, 0.3)),
    ("corrected rate", "run 1000, labels 200+200, p=0.6", corrected_case(1000, 200, 0.6)),
    ("corrected rate", "run 300, labels 60+60, p=0.5", corrected_case(300, 60, 0.5)),
]  # fmt: skip


def coverage(case: Scenario, reps: int, seed: int, level: float) -> tuple[float, float]:
    """The share of intervals holding the truth, and their mean width."""
    rng = random.Random(seed)
    hits, width = 0, 0.0
    for _ in range(reps):
        interval, truth = case(rng, level)
        hits += interval.contains(truth)
        if interval.ci is not None:
            width += interval.ci[1] - interval.ci[0]
    return hits / reps, width / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--level", type=float, default=0.95)
    args = parser.parse_args()
    mc = 100 * math.sqrt(args.level * (1 - args.level) / args.reps)
    print(f"{args.reps} replicates a scenario, level {args.level:g} (Monte Carlo error ~{mc:.2f})")
    print(f"{'interval':28} {'scenario':36} {'coverage':>9} {'mean width':>11}")
    started = time.perf_counter()
    for i, (name, label, case) in enumerate(CASES):
        cov, width = coverage(case, args.reps, args.seed + i, args.level)
        print(f"{name:28} {label:36} {cov * 100:8.1f}% {width:11.3f}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
