"""What a miner may read: the key, its description and the training drafts (with
their transcripts, for agent runs), and the features counted over them once."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..grading._context import CheckContext, make_context
from ..grading._registry import Registry
from ._propose_evidence import Example
from ._propose_phrases import Features, Proposal, combinations, phrase_features

__all__ = ["MiningData"]

_NUMBER = re.compile(r"\d{1,7}")


@dataclass
class MiningData:
    """What a miner may read: the key, its description and the training drafts."""

    key: str
    description: str
    examples: Sequence[Example]
    registry: Registry
    notes: list[str] = field(default_factory=list)
    #: Each draft's own value of a swept option, by (checker, option, id of the
    #: example): a draft's value does not depend on the others, so the folds of
    #: cross-validation (:mod:`._propose_cv`), mined on parts of these same examples,
    #: ask the checker once.
    probes: dict[tuple[str, str, int], int | None] = field(default_factory=dict)

    @cached_property
    def texts(self) -> list[str]:
        return [e.draft for e in self.examples]

    @cached_property
    def met(self) -> list[bool]:
        return [e.met for e in self.examples]

    @cached_property
    def contexts(self) -> list[CheckContext]:
        return [make_context(e.task, e.reference, e.metadata, e.transcript) for e in self.examples]

    @cached_property
    def numbers(self) -> tuple[int, ...]:
        """The whole numbers written in the key's description, in order."""
        return tuple(int(m.group()) for m in _NUMBER.finditer(self.description))

    @cached_property
    def min_support(self) -> int:
        """A feature must be in this many training drafts to be a candidate."""
        minority = min(sum(self.met), len(self.met) - sum(self.met))
        return max(2, math.ceil(minority * 0.2))

    @cached_property
    def phrases(self) -> list[Proposal]:
        f = Features(self.texts, self.met, self.min_support, self.description)
        return combinations(f, phrase_features(f))

    def features(self, featurize: Callable[[str], Iterable[str]]) -> Features:
        """A fresh count of one kind of feature over the training drafts."""
        f = Features(self.texts, self.met, self.min_support, self.description)
        f.count(featurize)
        return f
