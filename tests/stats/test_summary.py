"""summarize(): a run's figures with their intervals, in the shape the contract names."""

from __future__ import annotations

import pytest

from gradeloop import grade
from gradeloop.errors import InputError
from gradeloop.stats import GradedRow, KeyOutcome, RunTally, summarize, wilson

RUBRIC = {
    "criteria": [
        {"key": "short", "description": "short", "checker": "length", "options": {"max_chars": 12}},
        {
            "key": "hi",
            "description": "says hi",
            "checker": "contains",
            "options": {"values": ["hi"]},
        },
    ]
}
DRAFTS = ["hi there", "a much longer draft, hi", "no", "hi"] * 5


def _rows(cluster_values: bool = True) -> list[GradedRow]:
    return [
        GradedRow.from_evaluation(
            grade(d, RUBRIC), id=str(i), metadata={"topic": f"t{i % 3}"} if cluster_values else None
        )
        for i, d in enumerate(DRAFTS)
    ]


def test_the_json_has_the_contract_shape_with_wilson_intervals() -> None:
    out = summarize(_rows()).to_json()
    assert out["n"] == 20 and out["level"] == 0.95
    assert out["accepted"]["rate"] == 0.5
    expected = wilson(10, 20, 0.95)
    assert out["accepted"]["ci"] == [round(expected.low or 0, 4), round(expected.high or 0, 4)]
    assert set(out["keys"]) == {"short", "hi"}
    for key in out["keys"].values():
        assert set(key) >= {"rate", "ci", "n"} and key["n"] == 20
    assert out["score"]["mean"] == 7.5 and len(out["score"]["ci"]) == 2


def test_clustering_widens_the_intervals_and_says_how_many_clusters() -> None:
    plain = summarize(_rows())
    clustered = summarize(_rows(), cluster="topic")
    assert clustered.cluster == "topic" and clustered.accepted.clusters == 3
    assert plain.accepted.ci is not None and clustered.accepted.ci is not None
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    assert width(clustered.accepted.ci) > width(plain.accepted.ci)


def test_a_draft_without_the_cluster_field_is_bad_input_naming_it() -> None:
    with pytest.raises(InputError, match="draft 0 has no metadata field 'topic'"):
        summarize(_rows(cluster_values=False), cluster="topic")


def test_samples_make_each_draft_a_cluster_of_votes() -> None:
    # 20 drafts, 5 votes each, all votes of a draft alike: 100 votes that say no more
    # than 20 drafts do; counted as 100 independent votes the interval would shrink
    rows = [
        GradedRow(str(i), True, {"k": KeyOutcome(i % 2 == 0, votes=(i % 2 == 0,) * 5)})
        for i in range(20)
    ]
    key = summarize(rows).keys["k"]
    assert key.votes is not None and key.votes.n == 100 and key.votes.clusters == 20
    naive = wilson(50, 100)
    assert key.votes.ci is not None and naive.ci is not None
    assert key.votes.ci[1] - key.votes.ci[0] > naive.ci[1] - naive.ci[0]
    one_vote = [GradedRow(str(i), True, {"k": KeyOutcome(True, votes=(True,))}) for i in range(5)]
    assert summarize(one_vote).keys["k"].votes is None  # one sample is no repetition


def test_a_shadowed_key_gets_agreement_and_kappa_with_intervals() -> None:
    rows = [
        GradedRow(
            str(i), True, {"k": KeyOutcome(i % 2 == 0)}, shadows={"k": (i % 2 == 0, i % 4 == 0)}
        )
        for i in range(40)
    ]
    shadow = summarize(rows).to_json()["keys"]["k"]["shadow"]
    assert shadow["agreement"]["rate"] == 0.75
    assert shadow["kappa"]["kappa"] == 0.5 and len(shadow["kappa"]["ci"]) == 2


def test_a_tally_and_its_rows_summarize_alike() -> None:
    rows = _rows()
    assert summarize(RunTally.of(rows)).to_json() == {
        k: v for k, v in summarize(rows).to_json().items() if k != "variance"
    }
    with pytest.raises(ValueError, match="clustered by None, not 'topic'"):
        summarize(RunTally.of(rows), cluster="topic")


def test_a_bad_level_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        summarize(_rows(), level=95)


def test_rows_read_the_grade_drafts_json_and_the_stored_record_alike() -> None:
    ev = grade("hi", RUBRIC)
    line = {"id": "a", **ev.to_json()}
    stored = {"item_id": "a", "task": "", "error": None, "evaluation": ev.to_json()}
    assert GradedRow.from_json(line) == GradedRow.from_json(stored)
    failed = GradedRow.from_json({"item_id": "b", "error": "judge failed", "evaluation": None})
    assert failed.accepted is None
    with pytest.raises(InputError, match='line 3: no "criteria" list'):
        GradedRow.from_json({"id": "x", "passed": True}, where="line 3")
    with pytest.raises(InputError, match="no draft id"):
        GradedRow.from_json({"passed": True, "criteria": []})
