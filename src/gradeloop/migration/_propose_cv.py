"""Choosing among candidates by cross-validation, and the simplest among near-equals.

A mined candidate is fitted to the training drafts (a phrase chosen because it
separates them, a combination grown while its kappa rose), so its kappa on those
drafts flatters it: a combination of common words can fit 40 drafts by chance and
fail on the next 20. So the training drafts are cut into :data:`FOLDS` stratified
folds and mining is run again on each fold's complement. A mined candidate is scored
on each fold whose complement mined it too (its answers on those drafts, which that
mining never saw), and the kappa over those drafts is weighted by the share of folds
that found it: a candidate that the data yields again and again keeps its score, one
found by chance once loses it. Thresholds count as found again when the same option
is swept, whatever cut each fold chose. Candidates nobody fitted (the model's, the
caller's) are scored on the training drafts as they are.

Among candidates whose score is within :data:`NEAR` of the best, the simplest wins
(fewest values: one phrase before four), so that a long list that scores a hair
higher by fitting noise does not beat the plain rule.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from ._agreement import pass_fail_stats
from ._propose_candidates import Candidate, canonical
from ._propose_evidence import Example

__all__ = ["FOLDS", "NEAR", "complexity", "cv_scores", "folds", "shape"]

#: Folds of the training drafts (each fold's complement is mined again).
FOLDS = 5
#: Candidates scoring within this much of the best are near-equal: the simplest wins.
NEAR = 0.05


def folds(examples: Sequence[Example], k: int = FOLDS, seed: int = 0) -> list[list[int]]:
    """``k`` folds of indices into ``examples``, each verdict dealt round-robin after
    a seeded shuffle (so each fold has its share of met and unmet drafts)."""
    rng = random.Random(seed)
    out: list[list[int]] = [[] for _ in range(k)]
    for verdict in (True, False):
        group = [i for i, e in enumerate(examples) if e.met is verdict]
        rng.shuffle(group)
        for n, i in enumerate(group):
            out[n % k].append(i)
    return [sorted(f) for f in out if f]


def shape(candidate: Candidate) -> str:
    """What makes two mined candidates the same recipe: the checker and its options,
    a number option standing for the threshold swept (each fold cuts its own)."""
    shown = {
        k: "#" if isinstance(v, int) and not isinstance(v, bool) else v
        for k, v in candidate.options.items()
    }
    return canonical(candidate.checker, shown)


def complexity(candidate: Candidate) -> tuple[int, int]:
    """How much a candidate says: its option values (each list item counts; flags
    do not), then the length of its options written out."""
    values = 0
    stack: list[Any] = list(candidate.options.values())
    while stack:
        v = stack.pop()
        if isinstance(v, list | tuple):
            stack.extend(v)
        elif not isinstance(v, bool) and v is not None:
            values += 1
    return values, len(json.dumps(canonical(candidate.checker, candidate.options)))


def cv_scores(
    candidates: Sequence[Candidate],
    fitted: Sequence[bool],
    predicted: Sequence[Sequence[bool]],
    truth: Sequence[bool],
    fold_indices: Sequence[Sequence[int]],
    mined_in_fold: Callable[[Sequence[int]], set[str]],
) -> list[float]:
    """Each candidate's score: for a mined one (``fitted``), its kappa on the folds
    whose complement mined its :func:`shape` again, times the share of such folds; for
    any other, its kappa on all ``truth``. ``predicted[j]`` are candidate ``j``'s
    answers on the training drafts; ``mined_in_fold(train_indices)`` mines on those
    drafts and gives the shapes found."""
    shapes_by_fold: list[set[str]] = []
    for held in fold_indices:
        out = set(held)
        shapes_by_fold.append(mined_in_fold([i for i in range(len(truth)) if i not in out]))
    scores = []
    for cand, mined, answers in zip(candidates, fitted, predicted, strict=True):
        if not mined:
            scores.append(_kappa(answers, truth))
            continue
        own = shape(cand)
        found = [
            held for held, shapes in zip(fold_indices, shapes_by_fold, strict=True) if own in shapes
        ]
        if not found:
            scores.append(0.0)
            continue
        drafts = [i for held in found for i in held]
        k = _kappa([answers[i] for i in drafts], [truth[i] for i in drafts])
        scores.append(k * len(found) / len(fold_indices))
    return scores


def _kappa(predicted: Sequence[bool], truth: Sequence[bool]) -> float:
    kappa = pass_fail_stats(list(predicted), list(truth)).kappa
    return 0.0 if kappa is None else kappa
