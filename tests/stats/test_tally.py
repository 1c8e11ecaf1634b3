"""RunTally: sufficient statistics that merge exactly (a distributed run adds the
tallies of its shards and must get the figures of the whole, to the last digit)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop.stats import GradedRow, KeyOutcome, RunTally, summarize
from tests.stats.strategies import rows

CLUSTER = st.sampled_from([None, "group", "task"])


@given(st.lists(rows(), max_size=30), st.data(), CLUSTER)
def test_merging_shards_gives_the_tally_of_the_whole(
    drafts: list[GradedRow], data: st.DataObject, cluster: str | None
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(drafts)), max_size=4)))
    shards = [drafts[a:b] for a, b in zip([0, *cuts], [*cuts, len(drafts)], strict=True)]
    whole = RunTally.of(drafts, cluster=cluster)
    merged = RunTally(cluster=cluster)
    for shard in reversed(shards):  # any order
        merged = RunTally.of(shard, cluster=cluster) + merged
    assert merged == whole
    assert summarize(merged) == summarize(whole)


@given(st.lists(rows(), max_size=12), st.lists(rows(), max_size=12), st.lists(rows(), max_size=12))
def test_merge_is_associative_and_commutative(
    a: list[GradedRow], b: list[GradedRow], c: list[GradedRow]
) -> None:
    ta, tb, tc = (RunTally.of(x, cluster="group") for x in (a, b, c))
    assert (ta + tb) + tc == ta + (tb + tc)
    assert ta + tb == tb + ta


@given(st.lists(rows(), max_size=20), CLUSTER)
def test_a_tally_survives_json_exactly(drafts: list[GradedRow], cluster: str | None) -> None:
    tally = RunTally.of(drafts, cluster=cluster)
    assert RunTally.from_json(json.loads(json.dumps(tally.to_json()))) == tally


def test_float_sums_are_exact_where_float_addition_is_not() -> None:
    # 0.1 + 0.2 + 0.3 differs by grouping in floats; the tally's sums do not
    scores = [0.1, 0.2, 0.3]
    drafts = [GradedRow(str(i), True, {"k": KeyOutcome(True, s)}, s) for i, s in enumerate(scores)]
    assert (0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3)
    left = RunTally.of(drafts[:2]) + RunTally.of(drafts[2:])
    right = RunTally.of(drafts[:1]) + RunTally.of(drafts[1:])
    assert left == right
    assert left.keys["k"].score_sum == right.keys["k"].score_sum


def test_tallies_of_different_cluster_fields_do_not_merge() -> None:
    with pytest.raises(ValueError, match="clustered by 'task' and None"):
        RunTally(cluster="task") + RunTally()


def test_a_failed_draft_is_counted_apart() -> None:
    tally = RunTally.of([GradedRow("a", None), GradedRow("b", True, {"k": KeyOutcome(True)})])
    assert (tally.drafts, tally.failed, tally.graded, tally.accepted) == (2, 1, 1, 1)
    assert summarize(tally).to_json()["accepted"]["n"] == 1


def test_an_unanswered_key_is_left_out_of_its_rate() -> None:
    drafts = [
        GradedRow("a", True, {"k": KeyOutcome(True)}),
        GradedRow("b", False, {"k": KeyOutcome(None)}),
    ]
    assert summarize(drafts).keys["k"].rate.n == 1
