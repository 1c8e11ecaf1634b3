from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop.loop import _similarity
from gradeloop.loop._similarity import DEFAULT_SIMILARITY, EXACT_UP_TO, similar, similarity

TEXT = " ".join(f"word{i}" for i in range(400))


def test_identical_and_whitespace_only_changes_are_the_same() -> None:
    assert similarity(TEXT, TEXT) == 1.0
    assert similar(TEXT, TEXT.replace(" ", "\n  "))
    assert similar("", "   ")


def test_a_one_percent_edit_is_the_same_text() -> None:
    words = TEXT.split()
    words[200] = "changed"
    words[300] = "edited"
    assert similar(TEXT, " ".join(words))


def test_a_real_revision_is_different() -> None:
    words = TEXT.split()
    revised = words[:300] + ["new"] * 40 + words[300:]
    assert not similar(TEXT, " ".join(revised))
    assert not similar("the cat sat", "a dog ran")
    assert similarity("the cat sat", "a dog ran") == 0.0


def test_repetition_counts() -> None:
    # a multiset: doubling the text is not "the same"
    assert not similar("alpha beta " * 50, "alpha beta " * 100)


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_drafts(n: int) -> None:
    short = " ".join(["word"] * n)
    assert similar(short, short)
    assert not similar(short, "other")


def test_threshold_is_documented_value() -> None:
    assert DEFAULT_SIMILARITY == 0.95


# -- the fast measure gives the old measure's numbers --------------------------------


def reference(a: str, b: str) -> float:
    """The plain definition: Counter intersection over Counter union of the bigrams."""

    def bigrams(text: str) -> Counter[tuple[str, str]]:
        words = text.lower().split()
        if len(words) == 1:
            return Counter({(words[0], ""): 1})
        return Counter(itertools.pairwise(words))

    if a == b:
        return 1.0
    ca, cb = bigrams(a), bigrams(b)
    if not ca and not cb:
        return 1.0
    return sum((ca & cb).values()) / sum((ca | cb).values())


_WORDS = st.lists(st.sampled_from(["a", "b", "c", "A", "a.", " ", "\n", "dd"]), max_size=30)


@settings(max_examples=400, deadline=None)
@given(_WORDS, _WORDS, st.sampled_from([0.3, 0.8, 0.95, 1.0]))
def test_the_same_index_and_decision_as_the_definition(
    xs: list[str], ys: list[str], threshold: float
) -> None:
    a, b = " ".join(xs), " ".join(xs[: len(ys)] + ys)
    assert similarity(a, b) == reference(a, b)
    assert similar(a, b, threshold) == (reference(a, b) >= threshold)


def _prose(words: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(3000)]
    return rng.choices(vocab, k=words)


def _edit(words: list[str], fraction: float, seed: int) -> str:
    rng = random.Random(seed)
    out = list(words)
    for i in rng.sample(range(len(out)), int(len(out) * fraction)):
        out[i] = "changed"
    return " ".join(out)


def test_an_ordinary_long_draft_is_compared_exactly() -> None:
    words = _prose(EXACT_UP_TO, seed=1)  # just under the limit: exact
    a = " ".join(words)
    for fraction in (0.005, 0.0125, 0.02):
        b = _edit(words, fraction, seed=2)
        assert similarity(a, b) == reference(a, b)


@pytest.mark.parametrize(("fraction", "same"), [(0.004, True), (0.03, False)])
def test_a_sampled_comparison_keeps_the_decision(fraction: float, same: bool) -> None:
    words = _prose(3 * EXACT_UP_TO, seed=3)  # sampled at 1 bigram in 4
    a, b = " ".join(words), _edit(words, fraction, seed=4)
    assert abs(similarity(a, b) - reference(a, b)) < 0.01
    assert similar(a, b) is same


def test_drafts_sampled_at_different_rates_are_still_compared() -> None:
    words = _prose(2 * EXACT_UP_TO - 10, seed=5)  # step 2, the other step 4
    a = " ".join(words)
    b = a + " " + " ".join(_prose(40, seed=6))
    assert abs(similarity(a, b) - reference(a, b)) < 0.01
    assert similar(a, b)


def test_a_round_on_a_4_mb_draft_is_checked_quickly() -> None:
    # In the loop each revision is compared with the draft before it, itself compared
    # the round before. The old Counter arithmetic took ~2 s of CPU a round at 4 MB;
    # now the new draft is profiled once and looked up against the remembered one.
    words = _prose(640_000, seed=7)
    first, second = _edit(words, 0.005, seed=8), _edit(words, 0.01, seed=9)
    assert similar(" ".join(words), first)  # the previous round
    start = time.process_time()
    assert similar(first, second)
    assert time.process_time() - start < 0.8


_TEXT_CHARS = st.sampled_from(
    ["a", "B", "Σ", "ς", "İ", ".", " ", "\n", "\t", "\x1c", "\u2028", "\xa0"]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_TEXT_CHARS, max_size=60).map("".join),
    st.integers(1, 9),
    st.sampled_from([1, 2, 3, 10**6]),
)
def test_a_draft_read_in_pieces_has_the_profile_of_the_whole(
    text: str, piece: int, exact_up_to: int
) -> None:
    # Long drafts are lowered, split and hashed a piece at a time (cut at whitespace)
    # and sampled as they go; the profile must be the one of the whole text at once.
    whole = _similarity._profile.__wrapped__  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_similarity, "EXACT_UP_TO", exact_up_to)
        expected = _definition_profile(text, exact_up_to)
        mp.setattr(_similarity, "PIECE", piece)
        assert whole(text) == expected


def _definition_profile(text: str, exact_up_to: int) -> _similarity._Profile:
    words = text.lower().split()
    pairs = itertools.pairwise(words) if len(words) != 1 else [(words[0], "")]
    keys = [hash(pair) for pair in pairs]
    step = 1
    while len(keys) > exact_up_to * step:
        step *= 2
    kept = [k for k in keys if k % step == 0]
    counts = Counter(kept)
    repeated = tuple(k for k, c in counts.items() if c > 1)
    return _similarity._Profile(counts, len(kept), len(keys), step, repeated)
