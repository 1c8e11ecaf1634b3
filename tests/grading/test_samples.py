"""Repeated judging: decisions on scripted sample sets, doubtful-only re-asks, cache keys."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import (
    AnthropicJudge,
    Criterion,
    JudgeCache,
    OpenAICompatibleJudge,
    Rubric,
    Verdict,
    grade,
)
from gradeloop.grading._samples import SampledVerdict, combine, decide, doubtful_keys
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator
from tests.support.oai_emulator import OAIEmulator, verdict_chat

T, F = True, False
CITED = Criterion(key="cited", description="Cites the spec.")
NAMED = Criterion(key="named", description="Names the error codes.")
CLARITY = Criterion(key="clarity", description="Clear.", scale="score", threshold=7)
SHORT = Criterion(key="short", description="Short.", checker="length", options={"max_words": 50})
JUDGED = (CITED, NAMED, CLARITY)


# -- decisions on scripted sample sets ----------------------------------------------------


@pytest.mark.parametrize(
    ("values", "met", "agreement"),
    [
        ([T], T, 1.0),
        ([T, T, F], T, 2 / 3),
        ([T, F, F], F, 2 / 3),
        ([T, F], F, 0.5),  # a tie is not met
        ([F, T, T, F], F, 0.5),
        ([T, T, T, T, F], T, 0.8),
    ],
)
def test_pass_fail_keys_go_by_majority(values: list[bool], met: bool, agreement: float) -> None:
    decided, ok, agree = decide(CITED, values)
    assert (decided, ok) == (met, met)
    assert agree == pytest.approx(agreement)


@pytest.mark.parametrize(
    ("scores", "median", "met", "agreement"),
    [
        ([8.0], 8.0, T, 1.0),
        ([6.0, 8.0, 9.0], 8.0, T, 2 / 3),
        ([6.0, 7.0], 6.0, F, 0.5),  # median 6.5, rounded down: not met
        ([7.0, 8.0], 7.0, T, 1.0),  # 7.5 rounds down to 7, which still meets 7
        ([2.0, 5.0, 9.0, 9.0], 3.0, F, 0.5),  # median 7 rests on a split (5 | 9): not met
        ([5.0, 9.0], 5.0, F, 0.5),  # one sample each side: a split, not met
        ([2.0, 7.0, 9.0, 9.0], 8.0, T, 0.75),  # both middles (7, 9) meet 7
        ([1.0, 10.0, 10.0], 10.0, T, 2 / 3),
    ],
)
def test_scored_keys_take_the_median_rounded_down(
    scores: list[float], median: float, met: bool, agreement: float
) -> None:
    decided, ok, agree = decide(CLARITY, scores)
    assert decided == median and ok is met
    assert agree == pytest.approx(agreement)


def verdict(cited: bool | None = T, named: bool | None = T, clarity: float | None = 8.0) -> Verdict:
    met = {k: v for k, v in (("cited", cited), ("named", named)) if v is not None}
    if clarity is not None:
        met["clarity"] = clarity >= 7
    issues = [f"{k}: missing" for k, v in met.items() if not v]
    scores = {"clarity": clarity} if clarity is not None else {}
    return Verdict(
        reasoning=f"r{cited}{named}{clarity}",
        criteria_met=met,
        passed=not issues,
        issues=issues,
        scores=scores,
    )


def test_combine_decides_each_key_and_keeps_the_losers_issues() -> None:
    first, *extra = [verdict(T, F, 6), verdict(T, T, 8), verdict(F, F, 9)]
    v = combine(JUDGED, first, extra, requests=3)
    assert v.criteria_met == {"cited": T, "named": F, "clarity": T}
    assert v.scores == {"clarity": 8.0}
    assert v.passed is False
    assert v.issues == ["named: missing"]  # cited's and clarity's issues lost the vote
    assert v.samples["named"].values == (F, T, F)
    assert v.samples["named"].agreement == pytest.approx(2 / 3)
    assert v.samples["clarity"].values == (6.0, 8.0, 9.0)
    assert v.reasoning == first.reasoning and v.requests == 3


def test_combine_of_agreeing_samples_passes() -> None:
    v = combine(JUDGED, verdict(), [verdict(), verdict()], requests=3)
    assert v.passed and all(s.agreement == 1.0 for s in v.samples.values())


def test_a_key_no_sample_answered_stays_absent_and_fails() -> None:
    v = combine(JUDGED, verdict(named=None), [verdict(named=None)], requests=2)
    assert "named" not in v.criteria_met and v.passed is False


def test_a_tie_gets_an_issue_even_when_no_sample_wrote_one() -> None:
    first = verdict(F).model_copy(update={"issues": []})
    v = combine(JUDGED, first, [verdict()], requests=2)
    assert v.criteria_met["cited"] is False
    assert v.issues == ["cited: not met in 1 of 2 samples"]


@pytest.mark.parametrize(
    ("first", "doubtful"),
    [
        (verdict(T, T, 9), []),
        (verdict(F, T, 9), ["cited"]),
        (verdict(T, T, 8), ["clarity"]),  # within margin 1 above the threshold
        (verdict(T, T, 6), ["clarity"]),  # failed
        (verdict(T, None, 10), ["named"]),  # missing
    ],
)
def test_doubtful_keys(first: Verdict, doubtful: list[str]) -> None:
    assert doubtful_keys(JUDGED, first, margin=1) == doubtful


def test_a_wider_margin_doubts_more() -> None:
    assert doubtful_keys(JUDGED, verdict(T, T, 9), margin=2) == ["clarity"]
    assert doubtful_keys(JUDGED, verdict(T, T, 8), margin=0) == []


# -- through the judge against the emulator -----------------------------------------------


def wire(cited: bool = T, named: bool = T, clarity: int = 8, keys: Any = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "reasoning": "r",
        "scores": {"clarity": clarity},
        "criteria_met": {"cited": cited, "named": named},
        "passed": cited and named and clarity >= 7,
        "issues": [],
    }
    if keys is not None:  # a reply to a request about fewer keys
        data["criteria_met"] = {k: v for k, v in data["criteria_met"].items() if k in keys}
        if "clarity" not in keys:
            del data["scores"]
        if not data["criteria_met"]:
            del data["criteria_met"]
    return data


def schema_keys(body: dict[str, Any]) -> set[str]:
    defs = body["output_config"]["format"]["schema"].get("$defs", {})
    return {k for d in defs.values() for k in d.get("properties", {})}


def test_samples_k_asks_k_times_and_decides_by_majority(emulator: Emulator) -> None:
    emulator.enqueue(
        verdict_reply(wire(T, F, 6)), verdict_reply(wire(T, T, 8)), verdict_reply(wire(F, F, 9))
    )
    judge = AnthropicJudge(client=emulator.client(), samples=3)
    v = judge.evaluate("t", "d", (*JUDGED, SHORT))
    assert isinstance(v, SampledVerdict)
    assert len(emulator.bodies) == 3 and len(judge.calls) == 3
    assert v.criteria_met == {"cited": T, "named": F, "clarity": T}
    assert sorted(v.samples["clarity"].values) == [6.0, 8.0, 9.0]
    assert all(schema_keys(b) == {"cited", "named", "clarity"} for b in emulator.bodies)


def test_doubtful_asks_again_only_about_the_doubtful_keys(emulator: Emulator) -> None:
    asked = {"cited", "clarity"}
    emulator.enqueue(
        verdict_reply(wire(F, T, 8)),  # cited failed, clarity within the margin, named sure
        verdict_reply(wire(T, keys=asked, clarity=9)),
        verdict_reply(wire(T, keys=asked, clarity=9)),
    )
    judge = AnthropicJudge(client=emulator.client(), samples=3, resample="doubtful")
    v = judge.evaluate("t", "d", JUDGED)
    first, second, third = emulator.bodies
    assert schema_keys(first) == {"cited", "named", "clarity"}
    assert schema_keys(second) == schema_keys(third) == asked
    system = second["system"][0]["text"]
    assert "cited:" in system and "clarity (scored" in system and "named:" not in system
    assert v.criteria_met == {"cited": T, "named": T, "clarity": T}  # 2 of 3 say cited
    assert v.samples["named"].values == (T,)  # asked once, never doubted
    assert v.samples["cited"].agreement == pytest.approx(2 / 3)
    assert v.requests == 3


def test_doubtful_with_nothing_in_doubt_asks_once(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(wire(T, T, 10)))
    judge = AnthropicJudge(client=emulator.client(), samples=5, resample="doubtful")
    v = judge.evaluate("t", "d", JUDGED)
    assert len(emulator.bodies) == 1 and v.passed and v.requests == 1


def test_each_sample_has_its_own_cache_entry(emulator: Emulator, tmp_path: Path) -> None:
    emulator.enqueue(verdict_reply(wire(T)), verdict_reply(wire(T)), verdict_reply(wire(F)))
    with JudgeCache(tmp_path / "cache.db") as cache:
        judge = AnthropicJudge(client=emulator.client(), samples=3, cache=cache)
        first = judge.evaluate("t", "d", JUDGED)
        assert len(emulator.bodies) == 3  # not collapsed into one request
        again = judge.evaluate("t", "d", JUDGED)  # every sample now comes from the cache
    assert len(emulator.bodies) == 3
    # three keys hold three different replies: one shared key would repeat one of them
    assert isinstance(first, SampledVerdict) and isinstance(again, SampledVerdict)
    assert sorted(again.samples["cited"].values) == sorted(first.samples["cited"].values)
    assert sorted(again.samples["cited"].values) == [F, T, T]
    assert [c.cached for c in judge.calls] == [False] * 3 + [True] * 3


def test_aevaluate_samples_too(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(wire(T)), verdict_reply(wire(F)))
    judge = AnthropicJudge(client=emulator.client(), samples=2)
    v = asyncio.run(judge.aevaluate("t", "d", JUDGED))
    assert v.criteria_met["cited"] is False  # 1 of 2: a tie is not met
    assert len(emulator.bodies) == 2


def test_a_failing_sample_fails_the_evaluation(emulator: Emulator) -> None:
    from gradeloop.errors import JudgeError
    from gradeloop.testing import refusal

    emulator.enqueue(verdict_reply(wire()), refusal())
    judge = AnthropicJudge(client=emulator.client(), samples=2)
    with pytest.raises(JudgeError) as info:
        judge.evaluate("t", "d", JUDGED)
    assert info.value.reason == "refusal"


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"samples": 0}, "samples must be an integer >= 1"),
        ({"samples": True}, "samples must be an integer >= 1"),
        ({"resample": "some"}, "resample must be 'all' or 'doubtful'"),
        ({"margin": -1}, "margin must be a number >= 0"),
    ],
)
def test_bad_sampling_settings(emulator: Emulator, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AnthropicJudge(client=emulator.client(), **kw)


# -- grade and the evaluation JSON -------------------------------------------------------


def test_grade_records_agreement_per_judge_key(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(wire(T)), verdict_reply(wire(T)), verdict_reply(wire(F)))
    judge = AnthropicJudge(client=emulator.client(), samples=3)
    ev = grade("one two", Rubric([*JUDGED, SHORT]), task="t", judge=judge)
    assert ev["cited"].agreement == pytest.approx(2 / 3) and ev["cited"].passed
    assert sorted(ev["cited"].samples) == [F, T, T]
    assert ev["short"].agreement is None  # code keys are not sampled
    data = {c["name"]: c for c in ev.to_json()["criteria"]}
    assert data["cited"]["agreement"] == pytest.approx(0.6667)
    assert sorted(data["cited"]["samples"]) == [False, True, True]
    assert "agreement" not in data["short"]
    json.dumps(ev.to_json())


def test_without_samples_there_is_no_agreement(emulator: Emulator) -> None:
    emulator.enqueue(verdict_reply(wire()))
    ev = grade("d", Rubric(list(JUDGED)), judge=AnthropicJudge(client=emulator.client()))
    assert ev["cited"].agreement is None and "agreement" not in ev.to_json()["criteria"][0]


def test_the_open_model_judge_samples_the_same_way(oai_emulator: OAIEmulator) -> None:
    oai_emulator.enqueue(
        verdict_chat(wire(F, T, 10)),
        verdict_chat(wire(T, keys={"cited"})),
        verdict_chat(wire(F, keys={"cited"})),
    )
    judge = OpenAICompatibleJudge(
        client=oai_emulator.client(), model="m", samples=3, resample="doubtful"
    )
    v = judge.evaluate("t", "d", JUDGED)
    second = oai_emulator.bodies[1]["response_format"]["json_schema"]["schema"]
    assert set(second["$defs"]["CriteriaMet"]["properties"]) == {"cited"}
    assert "Scores" not in second.get("$defs", {})
    assert v.criteria_met["cited"] is False and v.samples["cited"].n == 3
