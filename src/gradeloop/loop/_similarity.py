"""When is a revision "the same text" as the draft before it?

Similarity is the multiset Jaccard index of the two drafts' word bigrams
(lower-cased, punctuation kept with its word): shared bigrams over all bigrams,
counting repeats. It is linear in the length of the drafts, so it costs little
even on long, repetitive text (``difflib`` is quadratic there). Each bigram is
hashed once to a 64-bit integer and the counting and intersecting run in C; a
hash collision (about one chance in 10^9 for a long draft) could only count one
more bigram as shared. Drafts over ``EXACT_UP_TO`` bigrams (about 330 KB) are
compared on a hash-chosen sample of their bigrams, so a 1 MB revision costs a few
linear passes. Equal drafts are decided by one string comparison, and drafts of
very different lengths by their sizes alone.

Two drafts are the same when their similarity is at least the threshold, 0.95 by
default. Changing k words of an n-word draft removes and adds about 2k bigrams,
giving roughly 1 - 4k/n: a revision that changed about 1% of its words or less,
or only its whitespace, did not act on the feedback.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

DEFAULT_SIMILARITY = 0.95


# Up to this many bigrams a draft is compared exactly (about 330 KB of English).
# A longer draft keeps only the bigrams whose hash is a multiple of a power of two,
# leaving 25,000-50,000 of them: the same subset of the shared bigrams is kept from
# both drafts, so the index is estimated to within about 0.002 near the threshold,
# and the cost of a round stays a few linear passes in C.
EXACT_UP_TO = 50_000


@dataclass(frozen=True)
class _Profile:
    """A draft's bigrams, as 64-bit hashes (hashing a tuple once is the costly part)."""

    counts: Counter[int]  # kept bigram hash -> occurrences
    size: int  # kept occurrences (a single word counts as one bigram)
    total: int  # all occurrences, kept or not
    step: int  # 1 when exact; else only hashes divisible by it are kept
    repeated: tuple[int, ...]  # the kept bigrams that occur more than once


# The loop compares each revision with the draft before it, which was the revision
# of the round before: remembering the last few profiles halves the work a round.
@functools.lru_cache(maxsize=4)
def _profile(text: str) -> _Profile:
    keys: list[int] = []
    total, step, last = 0, 1, ""
    for words in _word_chunks(text):
        if last:  # the pair that straddles two pieces
            words.insert(0, last)
        last = words[-1]
        fresh = list(map(hash, itertools.pairwise(words)))
        total += len(fresh)
        if step > 1:
            fresh = _multiples(fresh, step)
        keys += fresh
        while total > EXACT_UP_TO * step:  # a finer sample already holds the coarser one
            step *= 2
            keys = _multiples(keys, step)
    if not total and last:  # a single word counts as one bigram
        keys, total = [hash((last, ""))], 1
    return _make(keys, total, step)


# A draft is lowered, split and hashed a piece at a time: the pieces' words die before
# the next piece is read, so a 4 MB draft never holds 700,000 word objects at once
# (their allocation outgrew the caches and made the largest drafts super-linear).
PIECE = 1 << 16
_SPACE = re.compile(r"\s")


def _word_chunks(text: str) -> Iterator[list[str]]:
    """The lower-cased words of ``text``, in lists cut only at whitespace."""
    start, end = 0, len(text)
    while start < end:
        cut = start + PIECE
        if cut < end:
            space = _SPACE.search(text, cut)
            cut = space.start() if space else end
        words = text[start:cut].lower().split()
        if words:
            yield words
        start = cut


def _multiples(keys: list[int], step: int) -> list[int]:
    """The keys divisible by ``step``, picked out in C."""
    remainders = map(operator.mod, keys, itertools.repeat(step))
    return list(itertools.compress(keys, map(operator.not_, remainders)))


def _make(keys: list[int], total: int, step: int) -> _Profile:
    """The profile of ``keys``, already sampled at ``step``."""
    counts = Counter(keys)
    repeated: tuple[int, ...] = ()
    if len(counts) < len(keys):
        over_one = map(operator.gt, counts.values(), itertools.repeat(1))
        repeated = tuple(itertools.compress(counts.keys(), over_one))
    return _Profile(counts, len(keys), total, step, repeated)


def _coarser(p: _Profile, step: int) -> _Profile:
    """``p`` sampled at ``step`` (a multiple of its own step)."""
    if p.step == step:
        return p
    return _make(_multiples(list(p.counts.elements()), step), p.total, step)


def _shared(pa: _Profile, pb: _Profile) -> int:
    """The multiset intersection's size: each bigram counted min(in a, in b) times."""
    small, large = (pa, pb) if len(pa.counts) <= len(pb.counts) else (pb, pa)
    shared = sum(map(large.counts.__contains__, small.counts))  # no set is built
    # A bigram adds more than one only when it repeats in both drafts.
    few, other = (pa, pb) if len(pa.repeated) <= len(pb.repeated) else (pb, pa)
    for key in few.repeated:
        there = other.counts.get(key, 0)
        if there > 1:
            shared += min(few.counts[key], there) - 1
    return shared


def _jaccard(pa: _Profile, pb: _Profile) -> float:
    if not pa.total and not pb.total:
        return 1.0  # both empty or whitespace only
    step = max(pa.step, pb.step)
    pa, pb = _coarser(pa, step), _coarser(pb, step)
    shared = _shared(pa, pb)
    union = pa.size + pb.size - shared  # |A| + |B| - |A & B|
    return shared / union if union else 1.0  # an empty sample of two long drafts: no evidence


def similarity(a: str, b: str) -> float:
    """0.0 (nothing shared) to 1.0 (the same words in the same order)."""
    if a == b:
        return 1.0
    return _jaccard(_profile(a), _profile(b))


def similar(a: str, b: str, threshold: float = DEFAULT_SIMILARITY) -> bool:
    """True when ``a`` and ``b`` are the same text by the documented threshold.

    Equal strings are the same at once; drafts whose bigram counts differ by more
    than the threshold allows (the index is at most the smaller count over the
    larger) are different without intersecting anything.
    """
    if a == b:
        return True
    pa, pb = _profile(a), _profile(b)
    small, large = sorted((pa.total, pb.total))
    if large and small / large < threshold:
        return False
    return _jaccard(pa, pb) >= threshold
