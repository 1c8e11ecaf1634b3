"""A Jury through Message Batches: one member job per judge, decided together at collect
exactly as Jury.evaluate decides (majority, quorum, ties and abstentions failing
closed, each abstaining member named), against the emulator's batch desk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import HistoryStore, Jury, Rubric, batches
from gradeloop.errors import BatchError
from gradeloop.models._judge import AnthropicJudge
from gradeloop.testing import verdict_reply
from tests.cli_helpers import cli
from tests.emulator import Emulator

RUBRIC = Rubric.from_dict({"criteria": [{"key": "tone", "description": "Polite."}]})


def vote(met: bool) -> Any:
    return verdict_reply(
        {"reasoning": "r", "criteria_met": {"tone": met}, "passed": met, "issues": []}
    )


def member_of(custom_id: str) -> int:
    """The member a request belongs to: its job id ends in m<N> (gb...m1-3)."""
    return int(custom_id.split("-")[0].rsplit("m", 1)[1])


def ballots(plan: dict[str, list[Any]]) -> Any:
    """The batch outcome of each request: ``plan[draft text][member]`` is True/False (a
    vote) or an outcome string ("errored", "expired")."""

    def outcome(custom_id: str, params: dict[str, Any]) -> Any:
        text = params["messages"][0]["content"]
        for draft, votes in plan.items():
            if f"\n{draft}\n" in text:
                choice = votes[member_of(custom_id)]
                return vote(choice) if isinstance(choice, bool) else choice
        raise AssertionError(f"no plan for {text!r}")

    return outcome


def member(client: Any, model: str) -> AnthropicJudge:
    return AnthropicJudge(client=client, model=model)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with HistoryStore(tmp_path / "h.db") as s:
        yield s


def test_a_jury_job_is_decided_as_the_jury_decides(emulator: Emulator, store: Any) -> None:
    plan = {
        "all agree": [True, True, True],
        "two of three": [True, False, True],
        "one of three": [False, True, False],
        "one errored": [True, "errored", True],
        "two failed": ["expired", True, "errored"],
    }
    emulator.batches.outcome = ballots(plan)
    client = emulator.client(max_retries=0)
    jury = Jury([member(client, m) for m in ("claude-a", "claude-b", "claude-c")])
    job = batches.submit(list(plan), RUBRIC, judge=jury, task="t", store=store)
    creates = [r for r in emulator.requests if r.path == "/v1/messages/batches"]
    assert len(creates) == 3 and job.requests == 15  # one member job each, one client
    assert len(job.batch_ids) == 3
    now = batches.status(job, judge=jury, store=store)
    assert now.ended and now.counts["succeeded"] == 12
    assert (now.counts["errored"], now.counts["expired"]) == (2, 1)
    result = batches.collect(job, judge=jury, store=store)
    got = {e.output_id: e for e in result.evaluations}
    assert [e.output_id for e in result.evaluations] == [f"draft-{i}" for i in range(1, 6)]
    assert got["draft-1"].accepted and got["draft-2"].accepted
    assert not got["draft-3"].accepted and got["draft-3"].judge_error is None
    one_errored = got["draft-4"]
    assert one_errored.accepted  # two of the two that answered
    judging = one_errored["tone"].judging or {}
    assert "claude-b" in json.dumps(judging)  # the member that abstained is named
    two_failed = got["draft-5"]
    assert not two_failed.accepted and "no_quorum" in (two_failed.judge_error or "")
    assert "claude-a abstained" in (two_failed.judge_error or "")
    # the batch price for every member's request
    assert all(c.batch for e in result.evaluations[:3] for c in e.judge_calls)
    assert len(result.evaluations[0].judge_calls) == 3
    [run] = store.list_grading_runs()
    assert run.run_id == result.run_id and store.batch_job(job.job_id).status == "collected"


def test_a_tie_fails_closed_with_the_reason(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = ballots({"split": [True, False]})
    client = emulator.client(max_retries=0)
    jury = Jury([member(client, "claude-a"), member(client, "claude-b")], quorum=2)
    job = batches.submit(["split"], RUBRIC, judge=jury, store=store)
    [ev] = batches.collect(job, judge=jury, store=store).evaluations
    assert not ev.accepted and not ev["tone"].passed
    assert "tied" in (ev["tone"].judging or {})["jury"]["note"]


def test_members_on_two_clients_make_two_batches(store: Any) -> None:
    one, two = Emulator(), Emulator()
    try:
        for server in (one, two):
            server.batches.outcome = ballots({"kind": [True, True]})
        two.batches.prefix = "two_"  # a provider's batch ids are its own
        jury = Jury(
            [member(one.client(max_retries=0), "claude-a"), member(two.client(), "claude-b")]
        )
        job = batches.submit(["kind"], RUBRIC, judge=jury, store=store)
        assert len(one.batches._batches) == 1 and len(two.batches._batches) == 1
        now = batches.status(job, judge=jury, store=store)
        assert [p.batch_id for p in now.parts] == list(job.batch_ids)
        [ev] = batches.collect(job, judge=jury, store=store).evaluations
        assert ev.accepted
    finally:
        one.close()
        two.close()


def test_what_cannot_go_through_batches_is_refused_by_name(emulator: Emulator, store: Any) -> None:
    client = emulator.client()
    doubtful = Jury([member(client, "claude-a"), member(client, "claude-b")], on="doubtful")
    with pytest.raises(BatchError, match="on='doubtful'"):
        batches.submit(["d"], RUBRIC, judge=doubtful, store=store)
    sampled = Jury([member(client, "claude-a"), AnthropicJudge(client=client, samples=2)])
    with pytest.raises(BatchError, match="samples=1"):
        batches.submit(["d"], RUBRIC, judge=sampled, store=store)

    class Other:
        model = "other"

        def evaluate(self, task: str, draft: str, criteria: Any) -> Any:
            raise AssertionError

    with pytest.raises(BatchError, match="'other'"):
        batches.submit(
            ["d"], RUBRIC, judge=Jury([member(client, "claude-a"), Other()]), store=store
        )
    assert [r for r in emulator.requests if r.path == "/v1/messages/batches"] == []


def test_a_jury_job_needs_its_jury_to_be_collected(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = ballots({"kind": [True, True]})
    client = emulator.client()
    jury = Jury([member(client, "claude-a"), member(client, "claude-b")])
    job = batches.submit(["kind"], RUBRIC, judge=jury, store=store)
    with pytest.raises(BatchError, match="collect it with a Jury of its 2 judges"):
        batches.collect(job, judge=member(client, "claude-a"), store=store)
    three = Jury([member(client, m) for m in ("claude-a", "claude-b", "claude-c")])
    with pytest.raises(BatchError, match="a jury of 2 judges; this Jury has 3"):
        batches.collect(job, judge=three, store=store)


def test_the_cli_submits_waits_and_collects_a_jury(emulator: Emulator, tmp_path: Path) -> None:
    emulator.batches.outcome = ballots({"kind words": [True, True], "rude words": [False, True]})
    drafts = tmp_path / "d.jsonl"
    drafts.write_text(
        '{"id": "k", "task": "t", "draft": "kind words"}\n'
        '{"id": "r", "task": "t", "draft": "rude words"}\n'
    )
    rubric = tmp_path / "r.toml"
    rubric.write_text('[[criteria]]\nkey = "tone"\ndescription = "Polite."\n')
    db = tmp_path / "h.db"
    common = ["--base-url", emulator.base_url, "--db", str(db)]
    ran = cli(
        "grade", "--drafts", str(drafts), "--rubric", str(rubric), "--batch", "--json",
        "--judge-model", "claude-a", "--judge-model", "claude-b", "--quorum", "2", *common,
    )  # fmt: skip
    assert ran.code == 1, ran.err  # the split one fails closed
    lines = [json.loads(x) for x in ran.out.splitlines()]
    assert [(x["output_id"], x["passed"]) for x in lines] == [("k", True), ("r", False)]
    with HistoryStore(db) as store:
        [jury_job] = [j for j in store.list_batch_jobs() if "jury" in j.judge]
    status = cli("batch", "status", jury_job.job_id, "--json", *common)
    assert status.code == 0, status.err
    assert json.loads(status.out)["ended"] and len(json.loads(status.out)["parts"]) == 2
    again = cli("batch", "collect", jury_job.job_id, "--json", *common)
    assert again.code == 1, again.err
    assert [json.loads(x)["passed"] for x in again.out.splitlines()] == [True, False]
