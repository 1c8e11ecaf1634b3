"""``string_check`` and ``text_similarity``: OpenAI's code graders as checkers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Rubric, grade
from gradeloop.grading import CheckContext
from gradeloop_checkers.similarity import string_check, text_similarity
from gradeloop_checkers.similarity._metrics import METRICS, lcs_length, similarity


def _lcs_table(a: str, b: str) -> int:
    """The textbook quadratic LCS, as the oracle."""
    prev = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b):
            row.append(prev[j] + 1 if x == y else max(prev[j + 1], row[j]))
        prev = row
    return prev[-1]


@given(st.text(alphabet="abc", max_size=30), st.text(alphabet="abc", max_size=30))
def test_the_bit_parallel_lcs_is_the_lcs(a: str, b: str) -> None:
    assert lcs_length(a, b) == _lcs_table(a, b) == lcs_length(b, a)


@pytest.mark.parametrize(
    ("operation", "text", "passed"),
    [
        ("eq", "Paris", True),
        ("eq", "paris", False),
        ("ne", "Lyon", True),
        ("ne", "Paris", False),
        ("like", "It is Paris.", True),
        ("like", "It is paris.", False),
        ("ilike", "It is PARIS.", True),
        ("ilike", "It is Lyon.", False),
    ],
)
def test_string_check_operations(operation: str, text: str, passed: bool) -> None:
    result = string_check(text, operation=operation, reference="Paris")  # type: ignore[arg-type]
    assert result.passed is passed
    assert result.issues == ([] if passed else [result.issues[0]])


def test_the_reference_comes_from_the_option_the_metadata_or_the_draft() -> None:
    meta = CheckContext(metadata={"answer": "Paris", "year": 1889}, reference="Lyon")
    assert string_check("Paris", operation="eq", reference_field="answer", context=meta).passed
    assert string_check("1889", operation="eq", reference_field="year", context=meta).passed
    assert string_check("Lyon", operation="eq", context=meta).passed
    missing = string_check("Paris", operation="eq", reference_field="city", context=meta)
    assert not missing.passed and "no text field 'city'" in missing.issues[0]
    none = string_check("Paris", operation="eq", context=CheckContext())
    assert not none.passed and "no reference to compare with" in none.issues[0]


@pytest.mark.parametrize(
    ("metric", "text", "reference", "want"),
    [
        ("fuzzy_match", "kitten", "sitting", 2 * 4 / 13),  # LCS "ittn"
        ("fuzzy_match", "", "", 1.0),
        ("rouge_1", "the cat sat", "the cat sat down", 2 * 1 * 0.75 / 1.75),
        ("rouge_2", "the cat sat", "the cat sat down", 2 * 1 * (2 / 3) / (1 + 2 / 3)),
        ("rouge_l", "The cat, sat!", "the cat sat", 1.0),
        ("rouge_l", "a b c d", "d c b a", 0.25),
        ("gleu", "a b", "a b", 1.0),
        ("bleu", "the cat sat on the mat", "the cat sat on the mat", 1.0),
        ("bleu", "dog", "the cat sat on the mat", 0.0),
    ],
)
def test_metrics_on_known_pairs(metric: str, text: str, reference: str, want: float) -> None:
    assert similarity(metric, text, reference) == pytest.approx(want)


def test_bleu_punishes_brevity_and_gleu_is_symmetric() -> None:
    full = similarity("bleu", "the cat sat on the mat today", "the cat sat on the mat today")
    short = similarity("bleu", "the cat sat", "the cat sat on the mat today")
    assert full == pytest.approx(1.0) and 0 < short < 0.5
    assert similarity("gleu", "a b c", "a b c d e") == similarity("gleu", "a b c d e", "a b c")


@given(st.sampled_from(sorted(METRICS)), st.text(max_size=80), st.text(max_size=80))
def test_every_metric_is_between_0_and_1_on_any_text(metric: str, text: str, ref: str) -> None:
    assert 0.0 <= similarity(metric, text, ref) <= 1.0
    result = text_similarity(text, metric=metric, reference=ref)  # type: ignore[arg-type]
    assert result.passed and 0 <= (result.score or 0) <= 10


def test_min_score_fails_below_and_passes_at_it() -> None:
    below = text_similarity("Lyon", metric="fuzzy_match", reference="Paris", min_score=0.5)
    assert not below.passed and "below 0.5" in below.issues[0]
    at = text_similarity("Paris", metric="fuzzy_match", reference="Paris", min_score=1.0)
    assert at.passed and at.score == 10.0


def test_long_texts_take_one_pass() -> None:
    # 100,000 characters each way: the bit-parallel LCS does 100,000 Python steps where
    # the table would do 10^10; this test would not finish with the quadratic one
    a = "ab" * 50_000
    b = "ba" * 50_000
    assert similarity("fuzzy_match", a, b) == pytest.approx(2 * 99_999 / 200_000)
    words = " ".join(str(i) for i in range(30_000))
    assert similarity("rouge_l", words, words) == 1.0


def test_a_rubric_scores_and_thresholds_the_similarity() -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "close",
                    "description": "Close to the answer.",
                    "checker": "text_similarity",
                    "options": {"metric": "rouge_l", "reference_field": "answer"},
                    "scale": "score",
                    "threshold": 6,
                }
            ]
        }
    )
    meta = {"answer": "Paris is the capital of France"}
    assert grade("Paris is the capital of France", rubric, metadata=meta).accepted
    ev = grade("It is Lyon", rubric, metadata=meta)
    assert not ev.accepted and ev["close"].score < 6


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"operation": "contains"}, "operation"),
        ({"operation": "eq", "reference_field": ""}, "reference_field"),
    ],
)
def test_bad_options_fail_when_the_rubric_loads(options: dict[str, object], field: str) -> None:
    from gradeloop.errors import RubricError

    with pytest.raises(RubricError, match=field):
        Rubric.from_dict(
            {
                "criteria": [
                    {"key": "k", "description": "d", "checker": "string_check", "options": options}
                ]
            }
        )
