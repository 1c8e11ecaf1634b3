"""Message Batches through the real SDK against the emulator: submit (recorded first),
status and wait, collect (matched by custom id, failures never passes), split jobs,
batch prices, the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, HistoryStore, JudgeCache, Rubric
from gradeloop.bulk import batches
from gradeloop.errors import BatchError
from gradeloop.migration import DraftItem
from gradeloop.models import Usage
from gradeloop.testing import refusal, text_reply, verdict_reply
from tests.support.emulator import Emulator

RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "tone", "description": "Polite."},
            {"key": "short", "description": "Short.", "checker": "length",
             "options": {"max_words": 6}},
        ]
    }
)  # fmt: skip


def verdict(met: bool) -> Any:
    return verdict_reply(
        {
            "reasoning": "looked at it",
            "criteria_met": {"tone": met},
            "passed": met,
            "issues": [] if met else ["tone: rude"],
        }
    )


def by_text(custom_id: str, params: dict[str, Any]) -> Any:
    """The outcome a request gets, decided by its draft's text."""
    text = params["messages"][0]["content"]
    for word in ("errored", "expired", "canceled"):
        if word in text:
            return word
    if "refused" in text:
        return refusal()
    if "garbled" in text:
        return text_reply("this is not JSON")
    return verdict("rude" not in text)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with HistoryStore(tmp_path / "h.db") as s:
        yield s


def judge_for(emulator: Emulator, **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), model="claude-opus-5-5", **kw)


def creates(emulator: Emulator) -> list[Any]:
    return [r for r in emulator.requests if r.path == "/v1/messages/batches"]


def test_a_batch_request_is_what_evaluate_sends_first(emulator: Emulator, store: Any) -> None:
    emulator.enqueue(verdict(True))
    j = judge_for(emulator, extra_body={"temperature": 0})
    j.evaluate("the task", "a draft", RUBRIC.judge_criteria)
    emulator.batches.outcome = by_text
    job = batches.submit(["a draft"], RUBRIC, judge=j, task="the task", store=store)
    [create] = creates(emulator)
    [request] = create.body["requests"]
    assert request["custom_id"] == f"{job.job_id}-0"
    assert request["params"] == emulator.bodies[0]  # byte for byte the sync request
    assert request["params"]["temperature"] == 0  # extra_body merged into the params


def test_the_job_is_recorded_before_anything_is_sent(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = by_text
    j = judge_for(emulator)
    seen: list[Any] = []
    real_create = j.client.messages.batches.create

    def spy(**kw: Any) -> Any:
        [job] = store.list_batch_jobs()  # already in the history, drafts and all
        seen.append((job.status, [r.draft for r in store.batch_requests(job.job_id)]))
        return real_create(**kw)

    j.client.messages.batches.create = spy  # type: ignore[method-assign]
    items = [DraftItem("x1", "t", "kind words"), DraftItem("x2", "t", "rude words")]
    job = batches.submit(items, RUBRIC, judge=j, store=store)
    assert seen == [("submitting", ["kind words", "rude words"])]
    record = store.batch_job(job.job_id)
    assert record.status == "submitted" and record.parts[0].batch_id == job.batch_ids[0]
    assert store.batch_job(job.batch_ids[0]).job_id == job.job_id  # found by batch id too


def test_a_failed_submission_stays_recorded(emulator: Emulator, store: Any) -> None:
    j = judge_for(emulator)
    emulator.batches.outcome = lambda cid, params: "nonsense"  # the emulator answers 500
    with pytest.raises(BatchError, match=r"submitting part 1 of batch job gb.*HTTP 500"):
        batches.submit(["a"], RUBRIC, judge=j, store=store)
    [job] = store.list_batch_jobs()
    assert job.status == "submit_failed" and job.parts[0].batch_id is None
    assert job.parts[0].error.startswith("HTTP 500")
    assert [r.draft for r in store.batch_requests(job.job_id)] == ["a"]


def test_collect_matches_by_custom_id_and_never_passes_a_failure(
    emulator: Emulator, store: Any
) -> None:
    emulator.batches.outcome = by_text
    drafts = [
        "kind words",
        "rude words",
        "errored one",
        "expired one",
        "canceled one",
        "refused one",
        "garbled one",
        "kind again",
    ]
    j = judge_for(emulator)
    job = batches.submit(drafts, RUBRIC, judge=j, task="t", store=store)
    result = batches.collect(job, judge=j, store=store)
    got = {e.output_id: e for e in result.evaluations}
    assert [e.output_id for e in result.evaluations] == [f"draft-{i}" for i in range(1, 9)]
    assert got["draft-1"].accepted and got["draft-8"].accepted
    assert not got["draft-2"].accepted and got["draft-2"].judge_error is None
    reasons = {k: (e.judge_error or "").split(":")[0] for k, e in got.items()}
    assert reasons == {
        "draft-1": "",
        "draft-2": "",
        "draft-3": "batch_errored",
        "draft-4": "batch_expired",
        "draft-5": "batch_canceled",
        "draft-6": "refusal",
        "draft-7": "invalid",
        "draft-8": "",
    }
    assert not any(got[f"draft-{i}"].accepted for i in range(3, 8))
    assert got["draft-3"]["short"].passed  # the code keys were still graded
    assert result.outcomes == {"succeeded": 5, "errored": 1, "expired": 1, "canceled": 1}
    assert len(emulator.bodies) == 0  # no /v1/messages request: the batch did it all


def test_results_arrive_out_of_order_and_still_land_on_their_draft(
    emulator: Emulator, store: Any
) -> None:
    emulator.batches.outcome = by_text
    drafts = [f"{'rude' if i % 3 == 0 else 'kind'} draft {i}" for i in range(30)]
    j = judge_for(emulator)
    job = batches.submit(drafts, RUBRIC, judge=j, task="t", store=store)
    order = [entry.custom_id for entry in j.client.messages.batches.results(job.batch_ids[0])]
    assert order != sorted(order, key=lambda c: int(c.rsplit("-", 1)[1]))
    result = batches.collect(job, judge=j, store=store)
    assert [e.accepted for e in result.evaluations] == [i % 3 != 0 for i in range(30)]


def test_status_wait_and_collecting_too_early(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = by_text
    emulator.batches.polls_to_end = 4  # status, collect, then wait sees it once more
    j = judge_for(emulator)
    job = batches.submit(["kind", "rude"], RUBRIC, judge=j, task="t", store=store)
    first = batches.status(job, client=j.client, store=store)
    assert not first.ended and first.counts["processing"] == 2
    with pytest.raises(BatchError, match="not ended yet"):
        batches.collect(job, judge=j, store=store)
    naps: list[float] = []
    lines: list[str] = []
    done = batches.wait(
        job.job_id,
        client=j.client,
        store=store,
        poll=2,
        sleep=naps.append,
        on_status=lambda s: lines.append(s.line()),
    )
    assert done.ended and done.counts["succeeded"] == 2 and naps == [2]
    assert "in_progress" in lines[0] and "2 succeeded" in lines[-1]


def test_wait_backs_off_up_to_its_longest_poll(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = by_text
    emulator.batches.polls_to_end = 5
    j = judge_for(emulator)
    job = batches.submit(["kind"], RUBRIC, judge=j, task="t", store=store)
    naps: list[float] = []
    done = batches.wait(job, client=j.client, store=store, poll=2, max_poll=6, sleep=naps.append)
    assert done.ended and naps == [2, 3, 4.5, 6]  # half as long again each time, capped


def test_wait_gives_up_after_the_timeout_without_losing_the_job(
    emulator: Emulator, store: Any
) -> None:
    emulator.batches.outcome = by_text
    emulator.batches.polls_to_end = 100
    j = judge_for(emulator)
    job = batches.submit(["kind"], RUBRIC, judge=j, task="t", store=store)
    with pytest.raises(BatchError, match=f"gradeloop batch collect {job.job_id}"):
        batches.wait(job, client=j.client, store=store, timeout=1, poll=5, sleep=lambda s: None)


def test_another_process_collects_from_the_history_file(emulator: Emulator, tmp_path: Path) -> None:
    emulator.batches.outcome = by_text
    path = tmp_path / "shared.db"
    with HistoryStore(path) as first:
        job = batches.submit(
            ["kind", "rude"], RUBRIC, judge=judge_for(emulator), task="t", store=first
        )
    with HistoryStore(path) as second:  # a new process: only the job id is known
        result = batches.collect(job.job_id, judge=judge_for(emulator), store=second)
        assert [e.accepted for e in result.evaluations] == [True, False]
        run = second.grading_run(result.run_id)
        assert run["origin"] == "batch" and len(run["drafts"]) == 2
        again = batches.collect(job.job_id, judge=judge_for(emulator), store=second)
        assert again.run_id == result.run_id  # recorded once
        assert len(second.list_grading_runs()) == 1


def test_a_big_job_is_split_and_collected_whole(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = by_text
    j = judge_for(emulator)
    drafts = [f"kind {i}" for i in range(7)]
    job = batches.submit(drafts, RUBRIC, judge=j, task="t", store=store, max_requests=3)
    assert len(job.batch_ids) == 3 and [len(c.body["requests"]) for c in creates(emulator)] == [
        3,
        3,
        1,
    ]
    result = batches.collect(job, judge=j, store=store)
    assert len(result.evaluations) == 7 and all(e.accepted for e in result.evaluations)
    with pytest.raises(BatchError, match="above the 100-byte batch limit"):
        batches.submit(["x"], RUBRIC, judge=j, store=store, max_bytes=100)


def test_batch_calls_cost_half_and_fill_the_cache(
    emulator: Emulator, store: Any, tmp_path: Path
) -> None:
    emulator.batches.outcome = by_text
    with JudgeCache(tmp_path / "c.db") as cache:
        j = judge_for(emulator, cache=cache)
        job = batches.submit(["kind words"], RUBRIC, judge=j, task="t", store=store)
        [ev] = batches.collect(job, judge=j, store=store).evaluations
        [call] = ev.judge_calls
        assert call.batch and not call.cached
        full = Usage(
            call.usage.input_tokens,
            call.usage.output_tokens,
            call.usage.cache_creation_input_tokens,
            call.usage.cache_read_input_tokens,
        )
        full_price = (full.input_tokens * 4 + full.output_tokens * 20) / 1e6
        assert call.usage.cost_usd == pytest.approx(full_price / 2)
        j.evaluate("t", "kind words", RUBRIC.judge_criteria)  # the same request, later
        assert emulator.bodies == [] and j.calls[-1].cached


def test_nothing_to_batch_and_samples_are_refused(emulator: Emulator, store: Any) -> None:
    code_only = Rubric.from_dict(
        {"criteria": [{"key": "s", "description": "Short.", "checker": "length",
                       "options": {"max_words": 3}}]}
    )  # fmt: skip
    j = judge_for(emulator)
    with pytest.raises(BatchError, match="every key of the rubric is filled by code"):
        batches.submit(["a"], code_only, judge=j, store=store)
    with pytest.raises(BatchError, match="no drafts"):
        batches.submit([], RUBRIC, judge=j, store=store)
    with pytest.raises(BatchError, match="samples=1"):
        batches.submit(["a"], RUBRIC, judge=judge_for(emulator, samples=3), store=store)


def test_a_job_is_found_by_a_unique_prefix_only(emulator: Emulator, store: Any) -> None:
    from gradeloop.errors import LoopNotFoundError

    emulator.batches.outcome = by_text
    j = judge_for(emulator)
    one = batches.submit(["kind"], RUBRIC, judge=j, task="t", store=store)
    batches.submit(["kind"], RUBRIC, judge=j, task="t", store=store)
    assert store.batch_job(one.job_id[:10]).job_id == one.job_id
    with pytest.raises(LoopNotFoundError, match="ambiguous"):
        store.batch_job("gb")
    with pytest.raises(LoopNotFoundError, match="no batch job or batch 'zz'"):
        store.batch_job("zz")


def _entry_line(custom_id: str, result: dict[str, Any]) -> str:
    import json

    return json.dumps({"custom_id": custom_id, "result": result})


def test_a_duplicated_custom_id_fails_closed_and_is_counted(
    emulator: Emulator, store: Any, tmp_path: Path
) -> None:
    """A failing result then a passing one for the same id: neither is used, the draft is
    not accepted (duplicate_result), and nothing reaches the verdict cache."""
    emulator.batches.outcome = by_text
    j = judge_for(emulator, cache=JudgeCache(tmp_path / "cache.db"))
    job = batches.submit(["rude one", "kind two"], RUBRIC, judge=j, task="t", store=store)
    dup = f"{job.job_id}-0"
    passing = verdict(True).to_dict(mode="json")
    passing.update(id="msg_dup", model="claude-opus-5-5")

    def repeat(lines: list[str]) -> list[str]:
        return [*lines, _entry_line(dup, {"type": "succeeded", "message": passing})]

    emulator.batches.tamper = repeat
    result = batches.collect(job, judge=j, store=store)
    first, second = result.evaluations
    assert not first.accepted and (first.judge_error or "").startswith("duplicate_result")
    assert second.accepted
    assert result.duplicated == 1 and result.outcomes["duplicate_result"] == 1
    assert any("set aside" in p for p in result.problems())
    assert j.cache is not None and j.cache.stats().entries == 1  # only draft two's reply


def test_one_unreadable_line_is_counted_and_the_rest_collected(
    emulator: Emulator, store: Any
) -> None:
    emulator.batches.outcome = by_text
    j = judge_for(emulator)
    job = batches.submit(["kind one", "kind two", "rude three"], RUBRIC, judge=j, task="t",
                         store=store)  # fmt: skip
    garbage = ["{not json", "[1, 2]", '{"custom_id": 5, "result": {}}',
               '{"custom_id": "a", "custom_id": "b", "result": {"type": "expired"}}',
               "[" * 100_000]  # fmt: skip
    emulator.batches.tamper = lambda lines: [garbage[0], *lines[:1], *garbage[1:], *lines[1:]]
    result = batches.collect(job, judge=j, store=store)
    assert result.unreadable == 5
    assert [e.accepted for e in result.evaluations] == [True, True, False]
    assert result.outcomes == {"succeeded": 3}


def test_results_for_unknown_ids_are_counted(emulator: Emulator, store: Any) -> None:
    emulator.batches.outcome = by_text
    j = judge_for(emulator)
    job = batches.submit(["kind one"], RUBRIC, judge=j, task="t", store=store)
    emulator.batches.tamper = lambda lines: [*lines, _entry_line("stranger", {"type": "expired"})]
    result = batches.collect(job, judge=j, store=store)
    assert result.unmatched == 1 and result.evaluations[0].accepted
    assert result.problems() == ["1 result for ids not in this job ignored"]
