from __future__ import annotations

import pytest

from gradeloop.loop._similarity import DEFAULT_SIMILARITY, similar, similarity

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
