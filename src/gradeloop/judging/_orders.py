"""The order each sample of a repeated judgement shows the criteria in.

A judge reads its criteria in order and answers them in the schema's order, and
where a criterion sits changes how it is judged (an order effect; see
docs/judging.md). With ``samples=k``, sample 0 keeps the rubric's order (so a
one-sample run and sample 0 share their prompt and their prompt cache) and every
later sample shows a seeded shuffle of it.

The shuffle depends only on the seed, the sample number and the keys themselves,
never on the draft: sample ``i`` sends a byte-identical system prompt for every draft
and every round, so prompt caching still works, once per order. What it costs:
``k`` cached prefixes instead of one, so up to ``k`` cache writes per cache lifetime
where one write and ``k - 1`` reads would do (docs/judging.md has the figures).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from ..grading._rubric import Criterion

__all__ = ["sample_order"]

C = TypeVar("C", bound=Criterion)


def sample_order(criteria: Sequence[C], sample: int, *, seed: int = 0) -> tuple[C, ...]:
    """``criteria`` in the order sample ``sample`` shows them.

    Sample 0 keeps the given order. A later sample gets a shuffle seeded by ``seed``,
    ``sample`` and the keys, which differs from the given order whenever there are at
    least two criteria (a shuffle that comes back unchanged is rotated by one).
    """
    items = list(criteria)
    if sample == 0 or len(items) < 2:
        return tuple(items)
    keys = "\x1f".join(c.key for c in items)
    # a string seed is hashed with SHA-512 by random.Random: stable across processes
    rng = random.Random(f"gradeloop-order:{seed}:{sample}:{keys}")
    shuffled = items[:]
    rng.shuffle(shuffled)
    if shuffled == items:
        shuffled = shuffled[1:] + shuffled[:1]
    return tuple(shuffled)
