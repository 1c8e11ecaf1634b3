"""The cluster's pieces that need no cluster: the token buckets' arithmetic, RateLimit's
checks and provider headers, and GradeCounts merging exactly into one run's figures."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop.integrations.ray import GradeCounts, RateLimit, TokenBuckets, cohen_kappa, wilson
from gradeloop.integrations.ray._limit import _usage, estimate_input


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_leave_spaced_at_the_limit_after_the_burst() -> None:
    clock = Clock()
    buckets = TokenBuckets(RateLimit(requests_per_minute=600, burst_seconds=0.5), clock)
    waits = [buckets.reserve(0)[0] for _ in range(15)]  # 10 a second, 5 at once
    assert waits[:5] == [0.0] * 5
    assert waits[5:] == pytest.approx([0.1 * k for k in range(1, 11)])
    clock.now += 10  # a quiet spell refills the bucket, up to its size only
    assert [buckets.reserve(0)[0] for _ in range(6)][-1] == pytest.approx(0.1)


@given(st.lists(st.floats(0, 0.5), min_size=1, max_size=60), st.integers(1, 5))
def test_no_window_gets_more_than_the_rate_and_the_burst(gaps: list[float], burst: int) -> None:
    clock = Clock()
    rate = 2.0  # a second
    buckets = TokenBuckets(RateLimit(requests_per_minute=rate * 60, burst_seconds=burst), clock)
    sent = []
    for gap in gaps:
        clock.now += gap
        sent.append(clock.now + buckets.reserve(0)[0])
    sent.sort()
    for i, start in enumerate(sent):
        for j in range(i, len(sent)):
            assert j - i + 1 <= rate * (sent[j] - start) + burst * rate + 1e-6


def test_tokens_are_guessed_then_settled_with_the_reply_s_usage() -> None:
    clock = Clock()
    limit = RateLimit(input_tokens_per_minute=6000, output_tokens_per_minute=600, burst_seconds=1.0)
    buckets = TokenBuckets(limit, clock)  # 100 in and 10 out a second, 1 s bursts
    assert buckets.reserve(50) == (0.0, 0)  # no reply seen: no output guessed
    buckets.settle((50, 0), (50, 20))  # 20 out spent: the output bucket owes 10
    wait, guess = buckets.reserve(50)
    assert guess == 20 and wait == pytest.approx(3.0)  # 10 owed + 20 guessed at 10/s
    buckets.settle((50, 20), None)  # no usage in the reply: the guess stands
    assert buckets.level["output_tokens"] == pytest.approx(-30)
    level = buckets.level["input_tokens"]
    buckets.settle((50, 20), (0, 0))  # an error answer: the whole guess back
    assert buckets.level["input_tokens"] == pytest.approx(level + 50)


def test_a_request_counts_in_the_total_token_bucket_both_ways() -> None:
    buckets = TokenBuckets(RateLimit(tokens_per_minute=600, burst_seconds=1.0), Clock())
    assert buckets.reserve(10)[0] == 0.0
    assert buckets.reserve(10)[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one limit"),
        ({"requests_per_minute": 0}, "requests_per_minute must be a positive number"),
        ({"tokens_per_minute": float("inf")}, "tokens_per_minute must be a positive"),
        ({"requests_per_minute": "60"}, "requests_per_minute must be a number"),
        ({"requests_per_minute": 60, "burst_seconds": -1}, "burst_seconds must be a positive"),
        ({"requests_per_minute": 60, "name": ""}, "name must be a non-empty string"),
    ],
)
def test_a_bad_rate_limit_is_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RateLimit(**kwargs)


def test_a_good_rate_limit_is_taken() -> None:
    assert RateLimit(requests_per_minute=60).rates()["requests_per_minute"] == 60


def test_limits_are_read_from_the_provider_s_headers() -> None:
    anthropic = {
        "anthropic-ratelimit-requests-limit": "4000",
        "anthropic-ratelimit-input-tokens-limit": "2000000",
        "anthropic-ratelimit-output-tokens-limit": "400000",
    }
    limit = RateLimit.from_headers(anthropic, fraction=0.5, name="key-1")
    assert (limit.requests_per_minute, limit.input_tokens_per_minute) == (2000, 1_000_000)
    assert (limit.output_tokens_per_minute, limit.tokens_per_minute, limit.name) == (
        200_000, None, "key-1"
    )  # fmt: skip
    openai = RateLimit.from_headers({"x-ratelimit-limit-requests": "500",
                                     "x-ratelimit-limit-tokens": "30000"})  # fmt: skip
    assert (openai.requests_per_minute, openai.tokens_per_minute) == (500, 30000)
    with pytest.raises(ValueError, match="announce no rate limit"):
        RateLimit.from_headers({"content-type": "application/json"})
    with pytest.raises(ValueError, match="is not a number"):
        RateLimit.from_headers({"x-ratelimit-limit-requests": "lots"})
    with pytest.raises(ValueError, match="fraction"):
        RateLimit.from_headers(anthropic, fraction=0)


class _Request:
    def __init__(self, body: Any) -> None:
        self.options = type("Options", (), {"json_data": body})()


def test_input_is_estimated_from_the_request_s_text() -> None:
    body = {
        "system": [{"type": "text", "text": "s" * 400}],
        "messages": [{"role": "user", "content": "u" * 200},
                     {"role": "user", "content": [{"type": "text", "text": "v" * 200}]}],
    }  # fmt: skip
    assert estimate_input(_Request(body)) == 200
    assert estimate_input(_Request(None)) == 0 and estimate_input(object()) == 0


def test_usage_is_read_from_a_reply_body() -> None:
    body = {"usage": {"input_tokens": 10, "cache_creation_input_tokens": 5,
                      "cache_read_input_tokens": 100, "output_tokens": 7}}  # fmt: skip
    assert _usage(json.dumps(body).encode()) == (15, 7)  # cache reads are not limited
    assert _usage(b"not json") is None and _usage(b'{"usage": 3}') is None


def _row(rng: random.Random) -> dict[str, Any]:
    """A row as GradeBatch writes it: the evaluation JSON and the judge's columns."""
    criteria = []
    for key in ("a", "b", "c"):
        status = rng.choice(["met", "failed", "error", "not_checked"])
        criteria.append({"name": key, "status": status, "passed": status == "met",
                         "score": rng.choice([0.0, 10.0, 7.5, 0.1, 3.3])})  # fmt: skip
    evaluation: dict[str, Any] = {
        "criteria": criteria,
        "passed": rng.random() < 0.4,
        "overall_score": None if rng.random() < 0.2 else round(rng.random() * 10, 2),
        "shadows": [{"key": "a", "primary": {"passed": rng.random() < 0.5},
                     "shadow": {"passed": rng.choice([True, False, None])}}],
    }  # fmt: skip
    if rng.random() < 0.1:
        evaluation["judge_error"] = "api_error: down"
    return {
        "evaluation": json.dumps(evaluation),
        "judge_requests": rng.randint(0, 2),
        "judge_cached": rng.random() < 0.1,
        "input_tokens": rng.randint(0, 900),
        "output_tokens": rng.randint(0, 90),
        "cost_usd": rng.random() / 100,
    }


@given(st.integers(0, 2**32), st.integers(1, 80), st.integers(1, 6))
def test_shards_merge_into_exactly_one_run_s_figures(seed: int, n: int, shards: int) -> None:
    rng = random.Random(seed)
    rows = [(_row(rng), {"b": rng.random() < 0.5}, f"c{rng.randint(0, 4)}") for _ in range(n)]
    whole = GradeCounts()
    for row, labels, cluster in rows:
        whole.add_row(row, labels=labels, cluster=cluster)
    rng.shuffle(rows)  # shards see the rows in any order
    parts = [GradeCounts() for _ in range(shards)]
    for i, (row, labels, cluster) in enumerate(rows):
        parts[i % shards].add_row(row, labels=labels, cluster=cluster)
    # shard counts travel as JSON
    merged = GradeCounts.merged(GradeCounts.from_json(json.loads(json.dumps(p.to_json())))
                                for p in reversed(parts))  # fmt: skip
    assert merged == whole
    assert merged.figures() == whole.figures()


def _graded(accepted: bool, status: str, *, error: bool = False) -> dict[str, Any]:
    criterion = {"name": "a", "status": status, "passed": status == "met",
                 "score": 10.0 if status == "met" else 0.0}  # fmt: skip
    evaluation: dict[str, Any] = {"criteria": [criterion], "passed": accepted,
                                  "overall_score": None}  # fmt: skip
    if error:
        evaluation["judge_error"] = "invalid_reply: no JSON"
    return {"evaluation": json.dumps(evaluation), "cost_usd": None}


def test_the_figures_are_the_counts_rates() -> None:
    counts = GradeCounts()
    rows = [
        _graded(True, "met"),
        _graded(False, "failed"),
        _graded(False, "not_checked"),
        _graded(True, "met"),
        _graded(False, "error"),
        _graded(False, "failed", error=True),
    ]
    for row in rows:
        counts.add_row(row)
    figures = counts.figures()
    # the failed draft (the judge never answered) is left out of every rate
    assert (figures["drafts"], figures["failed"], figures["n"]) == (6, 1, 5)
    assert figures["accepted"] == {"rate": 0.4, "ci": [round(x, 4) for x in wilson(2, 5)], "n": 5}
    # a key not checked or in error has no answer
    assert figures["keys"]["a"]["rate"] == round(2 / 3, 4) and figures["keys"]["a"]["n"] == 3
    assert figures["keys"]["a"]["score"] == {"mean": round(20 / 3, 4), "n": 3}
    assert figures["judge"]["cost_usd"] is None  # an unknown price: the sum is unknown
    with pytest.raises(ValueError, match="confidence level"):
        counts.figures(level=1.5)


def test_labels_and_shadows_give_agreement_and_kappa() -> None:
    counts = GradeCounts()
    # 20 both met, 15 neither, 5 verdict only, 10 label only: po 0.7, pe 0.5, kappa 0.4
    for met, label, times in [(True, True, 20), (False, False, 15), (True, False, 5),
                              (False, True, 10)]:  # fmt: skip
        for _ in range(times):
            counts.add_row(_graded(met, "met" if met else "failed"), labels={"a": label})
    figure = counts.figures()["keys"]["a"]["labels"]
    assert figure == {"n": 50, "agreement": 0.7, "kappa": pytest.approx(0.4)}
    assert "shadow" not in counts.figures()["keys"]["a"]


def test_wilson_and_kappa_against_known_values() -> None:
    assert wilson(0, 10) == [0.0, pytest.approx(0.27753279986288915)]
    assert wilson(10, 10)[1] == 1.0 and wilson(0, 0) == [0.0, 1.0]
    low, high = wilson(50, 100)
    assert (low, high) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))
    assert cohen_kappa((20, 15, 5, 10)) == pytest.approx(0.4)
    assert cohen_kappa((3, 0, 0, 0)) is None and cohen_kappa((0, 0, 0, 0)) is None


def test_clusters_widen_the_interval() -> None:
    def counts(clustered: bool) -> GradeCounts:
        out = GradeCounts()
        for i in range(60):
            met = i < 30  # clusters of ten rows that all agree
            row = _graded(met, "met" if met else "failed")
            out.add_row(row, cluster=f"c{i // 10}" if clustered else None)
        return out

    plain, grouped = counts(False).figures(), counts(True).figures()
    low, high = plain["accepted"]["ci"]
    glow, ghigh = grouped["accepted"]["ci"]
    assert glow < low and ghigh > high and grouped["clusters"] == 6
    assert grouped["accepted"]["rate"] == plain["accepted"]["rate"] == 0.5


def _shadowed(status: str) -> dict[str, Any]:
    row = _graded(True, status)
    evaluation = json.loads(row["evaluation"])
    evaluation["shadows"] = [{"key": "a", "primary": {"passed": True}, "shadow": {"passed": False}}]
    return {**row, "evaluation": json.dumps(evaluation)}


def test_a_shadow_counts_only_on_a_key_with_an_answer() -> None:
    counts = GradeCounts()
    counts.add_row(_shadowed("error"))  # the key has no answer: neither has its shadow
    assert counts.keys["a"].shadow == (0, 0, 0, 0)
    counts.add_row(_shadowed("met"))
    assert counts.keys["a"].shadow == (0, 0, 1, 0)  # primary only
