"""The cluster's pieces that need no cluster: the token buckets' arithmetic, RateLimit's
checks and provider headers, and GradeCounts merging exactly into one run's figures
(gradeloop.stats.summarize's, clustered or not)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop.errors import InputError
from gradeloop.integrations.ray import GradeCounts, RateLimit, TokenBuckets
from gradeloop.integrations.ray._limit import _usage, estimate_input
from gradeloop.stats import GradedRow, RunTally, kappa_interval, summarize, wilson


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


def _row(rng: random.Random, i: int) -> dict[str, Any]:
    """A row as GradeBatch writes it (the evaluation JSON and the judge's columns)
    beside the input's id, cluster and labels columns."""
    criteria = []
    for key in ("a", "b", "c"):
        status = rng.choice(["met", "failed", "error", "not_checked"])
        criterion = {"name": key, "status": status, "passed": status == "met",
                     "score": rng.choice([0.0, 10.0, 7.5, 0.1, 3.3])}  # fmt: skip
        if key == "c" and rng.random() < 0.7:  # the judge's repeated samples
            criterion["samples"] = [rng.random() < 0.6 for _ in range(rng.randint(1, 3))]
        criteria.append(criterion)
    evaluation: dict[str, Any] = {
        "output_id": f"d{i}",
        "criteria": criteria,
        "passed": rng.random() < 0.4,
        "overall_score": None if rng.random() < 0.2 else round(rng.random() * 10, 2),
        "shadows": [{"key": "a", "primary": {"passed": rng.random() < 0.5},
                     "shadow": {"passed": rng.choice([True, False, None])}}],
    }  # fmt: skip
    if rng.random() < 0.1:
        evaluation["judge_error"] = "api_error: down"
    return {
        "id": f"d{i}",
        "source": rng.choice(["s0", "s1", "s2", "s3", 4]),  # any JSON value is a cluster
        "labels": {"b": rng.random() < 0.5, "c": rng.choice([True, False, None])},
        "evaluation": json.dumps(evaluation),
        "judge_requests": rng.randint(0, 2),
        "judge_cached": rng.random() < 0.1,
        "input_tokens": rng.randint(0, 900),
        "output_tokens": rng.randint(0, 90),
        "cost_usd": rng.random() / 100,
    }


def _one_machine(rows: list[dict[str, Any]]) -> list[GradedRow]:
    """The same drafts as one machine reads them: `grade --drafts --json` lines."""
    return [
        GradedRow.from_json(
            {**json.loads(r["evaluation"]), "id": r["id"], "metadata": {"source": r["source"]}}
        )
        for r in rows
    ]


@given(st.integers(0, 2**32), st.integers(1, 80), st.integers(1, 6), st.booleans())
def test_merged_shards_give_exactly_summarize_of_all_rows(
    seed: int, n: int, shards: int, clustered: bool
) -> None:
    rng = random.Random(seed)
    rows = [_row(rng, i) for i in range(n)]
    cluster = "source" if clustered else None
    expected = summarize(_one_machine(rows), cluster=cluster).to_json()
    expected.pop("variance", None)  # the judge / generator / item split needs the rows
    shuffled = rows[:]
    rng.shuffle(shuffled)  # shards see the rows in any order, split anywhere
    cuts = sorted(rng.randint(0, n) for _ in range(shards - 1))
    parts = [shuffled[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    counted = [GradeCounts.of(p, cluster_column=cluster, labels_column="labels") for p in parts]
    # shard counts travel as JSON, and merge in any order
    merged = GradeCounts.merged(
        (GradeCounts.from_json(json.loads(json.dumps(c.to_json()))) for c in reversed(counted)),
        cluster_column=cluster,
    )
    whole = GradeCounts.of(rows, cluster_column=cluster, labels_column="labels")
    assert merged == whole
    assert merged.tally == RunTally.of(_one_machine(rows), cluster=cluster)
    figures = merged.figures()
    assert {k: v for k, v in figures.items() if k != "judge"} == _with_labels(expected, whole)
    assert figures == whole.figures()
    assert figures["judge"]["requests"] == sum(r["judge_requests"] for r in rows)


def _with_labels(expected: dict[str, Any], counts: GradeCounts) -> dict[str, Any]:
    for key, (both, neither, verdict_only, label_only) in counts.labels.items():
        expected["keys"][key]["labels"] = {
            "agreement": wilson(both + neither, sum(counts.labels[key])).to_json(),
            "kappa": kappa_interval(both, neither, verdict_only, label_only).to_json("kappa"),
        }
    return expected


def test_clustered_figures_are_summarize_s_cluster_robust_ones() -> None:
    # the counts' own design effect gave another interval here before they were a RunTally
    rows = [_graded(i < 30, "met" if i < 30 else "failed") for i in range(60)]
    for i, row in enumerate(rows):
        row["id"], row["source"] = f"d{i}", f"c{i // 10}"  # clusters of ten that agree
    figures = GradeCounts.of(rows, cluster_column="source").figures()
    expected = summarize(_one_machine(rows), cluster="source").to_json()
    assert figures["accepted"] == expected["accepted"]
    assert figures["accepted"]["clusters"] == 6 and figures["cluster"] == "source"


def _graded(accepted: bool, status: str, *, error: bool = False) -> dict[str, Any]:
    criterion = {"name": "a", "status": status, "passed": status == "met",
                 "score": 10.0 if status == "met" else 0.0}  # fmt: skip
    evaluation: dict[str, Any] = {"criteria": [criterion], "passed": accepted,
                                  "overall_score": None}  # fmt: skip
    if error:
        evaluation["judge_error"] = "invalid_reply: no JSON"
    return {"evaluation": json.dumps(evaluation), "cost_usd": None}


def test_the_figures_are_the_counts_rates() -> None:
    rows = [
        _graded(True, "met"),
        _graded(False, "failed"),
        _graded(False, "not_checked"),
        _graded(True, "met"),
        _graded(False, "error"),
        _graded(False, "failed", error=True),
    ]
    counts = GradeCounts.of(rows)
    figures = counts.figures()
    # the failed draft (the judge never answered) is left out of every rate
    assert (figures["drafts"], figures["failed"], figures["n"]) == (6, 1, 5)
    assert figures["accepted"] == {"rate": 0.4, "ci": wilson(2, 5).to_json()["ci"], "n": 5}
    # a key not checked or in error has no answer
    assert figures["keys"]["a"]["rate"] == round(2 / 3, 4) and figures["keys"]["a"]["n"] == 3
    assert figures["judge"]["cost_usd"] is None  # an unknown price: the sum is unknown
    with pytest.raises(ValueError, match="confidence level"):
        counts.figures(level=1.5)


def test_labels_give_agreement_and_kappa_with_intervals() -> None:
    # 20 both met, 15 neither, 5 verdict only, 10 label only: po 0.7, pe 0.5, kappa 0.4
    rows = [{**_graded(met, "met" if met else "failed"), "labels": {"a": label}}
            for met, label, times in [(True, True, 20), (False, False, 15), (True, False, 5),
                                      (False, True, 10)]
            for _ in range(times)]  # fmt: skip
    rows.append({**_graded(True, "met", error=True), "labels": {"a": False}})  # failed: no cell
    rows.append({**_graded(True, "error"), "labels": {"a": False}})  # no answer: no cell
    counts = GradeCounts.of(rows, labels_column="labels")
    assert counts.labels == {"a": (20, 15, 5, 10)}
    figure = counts.figures()["keys"]["a"]["labels"]
    assert figure["agreement"] == {"rate": 0.7, "ci": wilson(35, 50).to_json()["ci"], "n": 50}
    assert figure["kappa"]["kappa"] == pytest.approx(0.4)
    assert figure["kappa"] == kappa_interval(20, 15, 5, 10).to_json("kappa")
    assert "shadow" not in counts.figures()["keys"]["a"]
    assert "labels" not in GradeCounts.of(rows).figures()["keys"]["a"]  # no labels column


def _shadowed(status: str) -> dict[str, Any]:
    row = _graded(True, status)
    evaluation = json.loads(row["evaluation"])
    evaluation["shadows"] = [{"key": "a", "primary": {"passed": True}, "shadow": {"passed": False}}]
    return {**row, "evaluation": json.dumps(evaluation)}


def test_a_shadow_counts_only_on_a_key_with_an_answer() -> None:
    # the key has no answer: neither has its shadow
    assert GradeCounts.of([_shadowed("error")]).tally.keys["a"].shadow == (0, 0, 0, 0)
    counts = GradeCounts.of([_shadowed("error"), _shadowed("met")])
    assert counts.tally.keys["a"].shadow == (0, 0, 1, 0)  # primary only


def test_a_row_without_a_cluster_value_is_refused_naming_the_column() -> None:
    rows = [{**_graded(True, "met"), "id": "d1", "source": "s1"}]
    assert GradeCounts.of(rows, cluster_column="source").tally.clusters.keys() == {"s1"}
    rows.append({**_graded(True, "met"), "id": "d2", "source": None})
    with pytest.raises(InputError, match="row d2: no value in the cluster column 'source'"):
        GradeCounts.of(rows, cluster_column="source")


def test_shards_clustered_by_different_columns_do_not_merge() -> None:
    rows = [{**_graded(True, "met"), "source": "s1", "task": "t"}]
    by_source = GradeCounts.of(rows, cluster_column="source")
    assert GradeCounts.merged([by_source, by_source], cluster_column="source").drafts == 2
    with pytest.raises(ValueError, match="cannot merge tallies clustered by"):
        by_source + GradeCounts.of(rows, cluster_column="task")
