"""compare_drafts: both orders, inconsistent keys tied, code keys by their checkers;
compare_many and the position-bias figure. Plain fake judges, no SDK."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import CheckResult, Rubric, checker
from gradeloop.errors import ConfigError, InputError, JudgeError, JudgeRequiredError
from gradeloop.judging import (
    PairItem,
    acompare_drafts,
    acompare_many,
    compare_drafts,
    compare_many,
    position_bias,
)
from gradeloop.judging._choices import Choices
from gradeloop.judging._preference import build_preference
from tests.support.judging_fakes import Malformed, PositionBiased, Prefers, Raising

RUBRIC = {
    "criteria": [
        {"key": "cited", "description": "Cites the spec."},
        {"key": "clear", "description": "Clear.", "scale": "score"},
        {
            "key": "short",
            "description": "At most 6 words.",
            "checker": "length",
            "options": {"max_words": 6},
        },
    ]
}
A = "alpha draft, plain and brief"  # 5 words: meets "short"
B = "beta draft with GOOD evidence and many more words"  # 9 words: fails "short"


def test_a_consistent_judge_decides_each_judge_key_and_both_orders_are_asked() -> None:
    judge = Prefers("GOOD")
    pref = compare_drafts(A, B, RUBRIC, task="t", judge=judge)
    assert pref.by_key == {"cited": "b", "clear": "b", "short": "a"}
    assert pref.consistent == {"cited": True, "clear": True, "short": True}
    assert pref.orders["cited"] == ("b", "b")
    assert pref.winner == "b"  # two judge keys to one code key, equal weights
    assert [(p["first"], p["second"]) for p in judge.prefers] == [(A, B), (B, A)]
    assert all(p["keys"] == ["cited", "clear"] for p in judge.prefers)  # no code key asked


def test_pure_position_bias_makes_every_judge_key_an_inconsistent_tie() -> None:
    pref = compare_drafts(A, B, RUBRIC, judge=PositionBiased("first"))
    assert pref.by_key == {"cited": "tie", "clear": "tie", "short": "a"}
    assert pref.consistent == {"cited": False, "clear": False, "short": True}
    assert pref.inconsistent == ("cited", "clear")
    assert pref.orders["cited"] == ("a", "b")  # the first-shown draft, both times
    assert pref.winner == "a"  # only the checker decided anything


def test_code_keys_are_compared_by_their_checkers_met_beating_unmet() -> None:
    rubric = {"criteria": [RUBRIC["criteria"][2]]}
    assert compare_drafts(A, B, rubric).by_key == {"short": "a"}  # no judge needed
    assert compare_drafts(B, A, rubric).by_key == {"short": "b"}
    assert compare_drafts(B, B + " x", rubric).by_key == {"short": "tie"}  # both unmet


def test_a_scored_code_key_goes_to_the_higher_score() -> None:
    @checker("vowel_share_for_compare")
    def vowels(text: str) -> CheckResult:
        share = sum(ch in "aeiou" for ch in text) / max(1, len(text))
        return CheckResult(True, score=round(1 + 9 * share))

    rubric = {
        "criteria": [
            {"key": "v", "description": "Vowels.", "checker": "vowel_share_for_compare",
             "scale": "score", "threshold": 1},
        ]
    }  # fmt: skip
    pref = compare_drafts("aeiou aeiou", "xyz qrst", rubric)
    assert pref.by_key == {"v": "a"} and "met" in pref.details["v"]


def test_identical_drafts_tie_without_asking_the_judge() -> None:
    judge = Prefers("GOOD")
    pref = compare_drafts(B, B, RUBRIC, judge=judge)
    assert set(pref.by_key.values()) == {"tie"} and pref.winner == "tie"
    assert judge.prefers == [] and pref.requests == 0


def test_the_winner_goes_by_the_criteria_weights() -> None:
    rubric = {
        "criteria": [
            {"key": "heavy", "description": "h", "weight": 2.0},
            {"key": "l1", "description": "l", "weight": 0.5},
            {"key": "l2", "description": "l", "weight": 0.5},
        ]
    }

    class Split:
        def prefer(self, task: str, first: str, second: str, criteria: Any) -> dict[str, str]:
            a_first = first == "A"
            pick = {"heavy": "A", "l1": "B", "l2": "B"}
            return {
                c.key: "first" if (pick[c.key] == "A") == a_first else "second" for c in criteria
            }

    pref = compare_drafts("A", "B", rubric, judge=Split())
    assert pref.by_key == {"heavy": "a", "l1": "b", "l2": "b"}
    assert pref.winner == "a"  # 2.0 against 1.0


def test_no_judge_or_a_judge_without_prefer_is_a_clear_error() -> None:
    with pytest.raises(JudgeRequiredError, match=r"cited, clear.*prefer"):
        compare_drafts(A, B, RUBRIC)

    class EvaluateOnly:
        def evaluate(self, *a: Any) -> Any: ...

    with pytest.raises(ConfigError, match="EvaluateOnly cannot compare drafts"):
        compare_drafts(A, B, RUBRIC, judge=EvaluateOnly())


def test_a_raising_judge_is_a_judge_error_never_a_preference() -> None:
    with pytest.raises(JudgeError, match="connection refused") as info:
        compare_drafts(A, B, RUBRIC, judge=Raising())
    assert info.value.reason == "api_error"


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"cited": "First", "clear": "tie"}, "cited: expected 'first', 'second' or 'tie'"),
        ({"cited": True, "clear": "tie"}, "cited: expected .* got true"),
        ({"cited": "first"}, "clear: missing"),
        ({"cited": "a", "clear": "b"}, "cited: expected"),
        (["first", "second"], "expected an object"),
        ({"cited": None, "clear": "tie"}, "got null"),
    ],
)
def test_a_malformed_answer_is_invalid_never_a_tie(answer: Any, why: str) -> None:
    with pytest.raises(JudgeError, match=why) as info:
        compare_drafts(A, B, RUBRIC, judge=Malformed(answer=answer))
    assert info.value.reason == "invalid"


def test_a_valid_answer_with_extra_keys_passes_the_same_reader() -> None:
    answer = {"cited": "first", "clear": "tie", "unasked": "anything"}
    pref = compare_drafts(A, B, RUBRIC, judge=Malformed(answer=answer))
    assert pref.by_key["cited"] == "tie" and pref.consistent["cited"] is False
    assert pref.by_key["clear"] == "tie" and pref.consistent["clear"] is True


def test_the_async_twin_gives_the_same_preference_and_awaits_aprefer() -> None:
    class AsyncPrefers(Prefers):
        awaited = 0

        async def aprefer(self, task: str, first: str, second: str, criteria: Any) -> Any:
            AsyncPrefers.awaited += 1
            return self.prefer(task, first, second, criteria)

    judge = AsyncPrefers("GOOD")
    pref = asyncio.run(acompare_drafts(A, B, RUBRIC, judge=judge))
    assert pref == compare_drafts(A, B, RUBRIC, judge=Prefers("GOOD"))
    assert AsyncPrefers.awaited == 2
    biased = asyncio.run(acompare_drafts(A, B, RUBRIC, judge=PositionBiased("second")))
    assert biased.inconsistent == ("cited", "clear")


# -- many pairs and the position-bias figure ----------------------------------------------

PAIRS = [(A, B), (B, A), PairItem("x GOOD", "y", id="p3"), {"a": "m", "b": "n GOOD", "task": "t"}]


def test_a_purely_position_biased_judge_reads_as_fully_biased() -> None:
    batch = compare_many(PAIRS, RUBRIC, judge=PositionBiased("first"))
    bias = batch.position_bias
    assert (bias.comparisons, bias.consistent, bias.first_both) == (8, 0, 8)
    assert bias.rate == 1.0 and bias.consistency == 0.0 and bias.favours == "first"
    assert batch.to_json()["position_bias"]["rate"] == 1.0
    second = compare_many(PAIRS, RUBRIC, judge=PositionBiased("second")).position_bias
    assert second.second_both == 8 and second.favours == "second"


def test_a_consistent_judge_reads_as_unbiased() -> None:
    batch = compare_many(PAIRS, RUBRIC, judge=Prefers("GOOD"))
    bias = batch.position_bias
    assert bias.rate == 0.0 and bias.consistency == 1.0 and bias.favours is None
    assert [p.winner for p in batch] == ["b", "a", "a", "b"]
    assert batch.ids == ("0", "1", "p3", "3")
    assert batch.requests == 0  # fakes record no API calls


def test_a_failed_pair_is_marked_and_left_out_of_the_figure() -> None:
    class FailsOnY(Prefers):
        def prefer(self, task: str, first: str, second: str, criteria: Any) -> Any:
            if "y" in (first, second):
                raise RuntimeError("server down")
            return super().prefer(task, first, second, criteria)

    batch = compare_many(PAIRS, RUBRIC, judge=FailsOnY("GOOD"))
    failed = batch[2]
    assert failed.error is not None and "server down" in failed.error
    assert failed.by_key["cited"] == "tie" and "cited" not in failed.consistent
    assert batch.position_bias.comparisons == 6  # the other three pairs' two keys
    assert batch.to_json()["pairs"][2]["error"].startswith("api_error")


def test_bad_pairs_and_concurrency_are_input_errors() -> None:
    with pytest.raises(InputError, match="pair 0"):
        compare_many([("only one",)], RUBRIC, judge=Prefers("x"))  # type: ignore[list-item]
    with pytest.raises(InputError, match="pair 0: 'b'"):
        compare_many([{"a": "x", "b": 3}], RUBRIC, judge=Prefers("x"))
    with pytest.raises(InputError, match="concurrency"):
        compare_many(PAIRS, RUBRIC, judge=Prefers("x"), concurrency=0)


def test_compare_many_works_inside_a_running_event_loop_and_async() -> None:
    async def main() -> tuple[Any, Any]:
        inside = compare_many(PAIRS[:1], RUBRIC, judge=Prefers("GOOD"))
        awaited = await acompare_many(PAIRS[:1], RUBRIC, judge=Prefers("GOOD"), concurrency=1)
        return inside, awaited

    inside, awaited = asyncio.run(main())
    assert inside[0] == awaited[0] and inside[0].winner == "b"


# -- one flow, every driver: compare_drafts, acompare_drafts, compare_many ----------------

CODE_ONLY = {"criteria": [RUBRIC["criteria"][2]]}
COMPARISONS: dict[str, tuple[Any, str, str, Any]] = {
    "a consistent judge": (lambda: Prefers("GOOD"), A, B, RUBRIC),
    "position bias": (lambda: PositionBiased("first"), A, B, RUBRIC),
    "identical drafts": (lambda: Prefers("GOOD"), B, B, RUBRIC),
    "code keys only": (lambda: None, A, B, CODE_ONLY),
    "a raising judge": (lambda: Raising(), A, B, RUBRIC),
    "a malformed answer": (lambda: Malformed(answer={"cited": "First", "clear": "tie"}), A, B,
                           RUBRIC),
}  # fmt: skip


def compared(how: str, judge: Any, a: str, b: str, rubric: Any) -> tuple[Any, Any]:
    """The preference one driver gives (or its JudgeError), and the judge's questions."""
    try:
        if how == "sync":
            pref: Any = compare_drafts(a, b, rubric, judge=judge)
        elif how == "async":
            pref = asyncio.run(acompare_drafts(a, b, rubric, judge=judge))
        else:
            pref = compare_many([(a, b)], rubric, judge=judge)[0]
        got: Any = pref.to_json()
    except JudgeError as exc:
        got = (exc.reason, str(exc))
    asked = None if judge is None else sorted(repr(sorted(p.items())) for p in judge.prefers)
    return got, asked


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_every_driver_compares_alike(name: str) -> None:
    make, a, b, rubric = COMPARISONS[name]
    sync = compared("sync", make(), a, b, rubric)
    awaited = compared("async", make(), a, b, rubric)
    many, asked = compared("many", make(), a, b, rubric)
    assert awaited[0] == sync[0]
    if isinstance(sync[0], tuple):  # a failed judge: compare_many keeps the pair, failed
        # (the async drivers ask both orders at once: the second is asked all the same)
        assert many["error"] == f"{sync[0][0]}: {sync[0][1]}"
        assert {k["key"]: k["choice"] for k in many["keys"]} == {
            "cited": "tie", "clear": "tie", "short": "a",
        }  # fmt: skip
    else:
        assert many == sync[0]
        assert awaited[1] == asked == sync[1]  # the same questions, none for identical drafts


# -- properties ---------------------------------------------------------------------------

CHOICE = st.sampled_from(["first", "second", "tie"])
KEYS = ["k1", "k2", "k3"]


@given(st.lists(st.tuples(CHOICE, CHOICE), min_size=3, max_size=3), st.lists(
    st.floats(0.1, 5), min_size=3, max_size=3))  # fmt: skip
def test_a_key_counts_only_when_both_orders_chose_the_same_draft(
    answers: list[tuple[str, str]], weights: list[float]
) -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {"key": k, "description": k, "weight": w}
                for k, w in zip(KEYS, weights, strict=True)
            ]
        }
    )
    ab = Choices({k: a for k, (a, _) in zip(KEYS, answers, strict=True)})  # type: ignore[misc]
    ba = Choices({k: b for k, (_, b) in zip(KEYS, answers, strict=True)})  # type: ignore[misc]
    pref = build_preference(rubric, {}, {}, (ab, ba))
    as_a = {"first": "a", "second": "b", "tie": "tie"}
    as_b = {"first": "b", "second": "a", "tie": "tie"}
    for k, (x, y) in zip(KEYS, answers, strict=True):
        same = as_a[x] == as_b[y]
        assert pref.consistent[k] is same
        assert pref.by_key[k] == (as_a[x] if same else "tie")
    # the mirror image: the drafts swapped, the same judge answers swapped
    mirror = build_preference(rubric, {}, {}, (ba, ab))
    flip = {"a": "b", "b": "a", "tie": "tie"}
    assert mirror.by_key == {k: flip[v] for k, v in pref.by_key.items()}
    assert mirror.winner == flip[pref.winner]
    won_a = sum(w for k, w in zip(KEYS, weights, strict=True) if pref.by_key[k] == "a")
    won_b = sum(w for k, w in zip(KEYS, weights, strict=True) if pref.by_key[k] == "b")
    if pref.winner == "a":
        assert won_a > won_b
    elif pref.winner == "b":
        assert won_b > won_a


@given(st.lists(st.sampled_from(["first", "second"]), min_size=1, max_size=6))
def test_a_judge_that_always_picks_one_position_never_wins_a_key(positions: list[str]) -> None:
    prefs = []
    for p in positions:
        prefs.append(compare_drafts("one GOOD", "two", {"criteria": [
            {"key": "k", "description": "k"}]}, judge=PositionBiased(p)))  # fmt: skip
    assert all(p.by_key == {"k": "tie"} for p in prefs)
    assert position_bias(prefs).rate == 1.0


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(["first", "second", "tie", "First", "a"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["reasoning", "preferred", "k1", "k2", "x"]), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(JSONISH)
def test_any_reply_is_a_full_valid_answer_or_invalid_never_in_between(data: Any) -> None:
    from gradeloop.grading._strict import WireError
    from gradeloop.judging._choices import CHOICES, read_wire

    try:
        choices = read_wire(data, ["k1", "k2"])
    except WireError:
        return
    assert set(choices) == {"k1", "k2"} and all(v in CHOICES for v in choices.values())
    assert isinstance(choices.reasoning, str)


def test_a_hostile_reply_text_is_invalid_in_linear_time() -> None:
    import time

    from gradeloop import Criterion
    from gradeloop.grading._strict import WireError
    from gradeloop.models._prefer import prefer_spec

    spec = prefer_spec([Criterion(key="k1", description="d")])
    for text in ("[" * 100_000, '{"reasoning": "' + "\\u" * 50_000, "{" + '"a":1,' * 50_000):
        start = time.perf_counter()
        with pytest.raises(WireError):
            spec.parse_text(text)
        assert time.perf_counter() - start < 2.0
