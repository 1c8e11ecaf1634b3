"""A Jury through Message Batches, the real SDK against the emulator's batch desk: one
request per draft and member, one batch per client, each draft decided exactly as
Jury.evaluate decides (votes, ties failing closed, quorum, a failed member abstaining
and named), every member's calls at the batch price, counted per member."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradeloop import AnthropicJudge, HistoryStore, Rubric, grade, grade_many
from gradeloop.bulk import batches
from gradeloop.errors import BatchError
from gradeloop.judging import Jury
from gradeloop.testing import text_reply, verdict_reply
from tests.support.emulator import Emulator, HTTPError
from tests.support.judging_fakes import Voter

RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "tone", "description": "Polite."},
            {"key": "clear", "description": "Clear.", "scale": "score", "threshold": 7},
            {"key": "short", "description": "Short.", "checker": "length",
             "options": {"max_words": 8}},
        ]
    }
)  # fmt: skip
MODELS = ("claude-a", "claude-b", "claude-c")
Answer = tuple[bool, int] | str  # (tone met, clear score), or a failed request's outcome


def reply(tone: bool, clear: int) -> Any:
    return verdict_reply(
        {
            "reasoning": "read it",
            "criteria_met": {"tone": tone},
            "scores": {"clear": clear},
            "passed": tone and clear >= 7,
            "issues": ([] if tone else ["tone: curt"]) + ([] if clear >= 7 else ["clear: muddled"]),
        }
    )


class Script:
    """Each (draft, model)'s answer; drafts are found by their text in the request."""

    def __init__(self, answers: dict[str, dict[str, Answer]]) -> None:
        self.answers = answers

    def find(self, params: dict[str, Any]) -> Answer:
        text = params["messages"][0]["content"]
        hits = [d for d in self.answers if re.search(rf"\b{re.escape(d)}\b", text)]
        assert len(hits) == 1, (hits, text)
        return self.answers[hits[0]][params["model"]]

    def batch(self, custom_id: str, params: dict[str, Any]) -> Any:
        got = self.find(params)
        if got == "garbled":
            return text_reply("no verdict here")
        return got if isinstance(got, str) else reply(*got)

    def sync(self, body: dict[str, Any]) -> Any:
        got = self.find(body)
        if got == "garbled":
            return text_reply("no verdict here")
        return HTTPError(500, f"scripted {got}") if isinstance(got, str) else reply(*got)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with HistoryStore(tmp_path / "h.db") as s:
        yield s


def members(client: Any, *more: Any, models: tuple[str, ...] = MODELS) -> list[AnthropicJudge]:
    clients = [client, *more]
    return [
        AnthropicJudge(client=clients[min(i, len(clients) - 1)], model=m)
        for i, m in enumerate(models)
    ]


def creates(emulator: Emulator) -> list[Any]:
    return [r for r in emulator.requests if r.path == "/v1/messages/batches"]


def test_a_jury_of_three_over_several_drafts(emulator: Emulator, store: Any) -> None:
    script = Script(
        {
            "alpha": {"claude-a": (True, 8), "claude-b": (True, 9), "claude-c": (False, 6)},
            "bravo": {"claude-a": (False, 5), "claude-b": (False, 8), "claude-c": (True, 4)},
            "charlie": {"claude-a": (True, 9), "claude-b": (True, 9), "claude-c": (True, 9)},
        }
    )
    emulator.batches.outcome = script.batch
    jury = Jury(members(emulator.client(max_retries=0)))
    job = batches.submit(["alpha", "bravo", "charlie"], RUBRIC, judge=jury, task="t", store=store)
    [create] = creates(emulator)  # one client: one batch of 3 drafts x 3 members
    ids = [r["custom_id"] for r in create.body["requests"]]
    assert [i.rsplit("-", 1)[0] for i in ids] == [
        f"{job.job_id}-{d}-{m}" for d in range(3) for m in range(3)
    ]
    # each id ends in its own random part: no member's id can be guessed from another's
    tails = [i.rsplit("-", 1)[1] for i in ids]
    assert len(set(tails)) == 9 and all(re.fullmatch("[0-9a-f]{16}", t) for t in tails)
    assert [r["params"]["model"] for r in create.body["requests"]] == list(MODELS) * 3
    assert job.requests == 9 and job.drafts == 3 and len(job.batch_ids) == 1
    result = batches.collect(job, judge=jury, store=store)
    alpha, bravo, charlie = result.evaluations
    assert [e.output_id for e in result.evaluations] == ["draft-1", "draft-2", "draft-3"]
    assert alpha.accepted and alpha["tone"].agreement == pytest.approx(2 / 3)
    assert alpha["clear"].score == 8.0  # the median of the side that met (8, 9), down
    record = alpha["tone"].judging["jury"]  # type: ignore[index]
    assert record["votes"] == {"claude-a": True, "claude-b": True, "claude-c": False}
    assert record["abstained"] == {} and record["on"] == "all"
    assert not bravo.accepted and not bravo["tone"].passed and not bravo["clear"].passed
    assert bravo["clear"].score == 4.0 and bravo["clear"].agreement == pytest.approx(2 / 3)
    assert charlie.accepted and charlie["tone"].agreement == 1.0
    assert result.outcomes == {"succeeded": 9}
    assert emulator.bodies == []  # nothing went through /v1/messages


def test_a_tie_fails_closed_and_an_errored_member_abstains_named(
    emulator: Emulator, store: Any
) -> None:
    script = Script(
        {
            "tied": {"claude-a": (True, 9), "claude-b": (False, 9), "claude-c": "errored"},
            "fine": {"claude-a": (True, 9), "claude-b": (True, 8), "claude-c": "errored"},
        }
    )
    emulator.batches.outcome = script.batch
    jury = Jury(members(emulator.client(max_retries=0)))
    job = batches.submit(["tied", "fine"], RUBRIC, judge=jury, task="t", store=store)
    result = batches.collect(job, judge=jury, store=store)
    tied, fine = result.evaluations
    assert not tied.accepted and not tied["tone"].passed and tied.judge_error is None
    assert "tone: the jury tied: 1 of 2 judges say met, and a tie is not met" in tied.issues
    record = tied["tone"].judging["jury"]  # type: ignore[index]
    assert record["abstained"] == {"claude-c": "batch_errored: api_error: scripted batch error"}
    assert record["note"].startswith("the jury tied")
    assert tied["clear"].passed  # the two that answered agree on it
    assert fine.accepted and fine["tone"].samples == (True, True)
    assert result.outcomes == {"succeeded": 4, "errored": 2}
    assert result.members["claude-c"].abstained == 2 and result.members["claude-c"].answered == 0
    assert result.members["claude-a"].answered == 2


def test_too_few_answers_fail_the_draft_naming_every_abstention(
    emulator: Emulator, store: Any
) -> None:
    script = Script(
        {
            "lonely": {"claude-a": (True, 9), "claude-b": "expired", "claude-c": "garbled"},
            "crowd": {"claude-a": (True, 9), "claude-b": (True, 9), "claude-c": "canceled"},
        }
    )
    emulator.batches.outcome = script.batch
    jury = Jury(members(emulator.client(max_retries=0)))  # quorum: 2 of 3
    job = batches.submit(["lonely", "crowd"], RUBRIC, judge=jury, task="t", store=store)
    lonely, crowd = batches.collect(job, judge=jury, store=store).evaluations
    assert not lonely.accepted and lonely["short"].passed  # the code key is still graded
    error = lonely.judge_error or ""
    assert error.startswith("no_quorum: the jury has too few answers: 1 of 3 judges answered")
    assert "claude-b abstained (batch_expired: the request expired" in error
    assert "claude-c abstained (invalid: " in error
    assert crowd.accepted and crowd.judge_error is None
    record = crowd["tone"].judging["jury"]  # type: ignore[index]
    assert record["abstained"]["claude-c"].startswith("batch_canceled")
    # the same jury with quorum=1 takes the one answer
    lenient = Jury(jury.judges, quorum=1)
    again = batches.collect(job, judge=lenient, store=store, record=False).evaluations[0]
    assert again.accepted and again["tone"].judging["jury"]["votes"] == {"claude-a": True}  # type: ignore[index]


def test_a_duplicated_or_unreadable_member_result_abstains(emulator: Emulator, store: Any) -> None:
    script = Script({"one": {m: (True, 9) for m in MODELS}, "two": {m: (True, 9) for m in MODELS}})
    emulator.batches.outcome = script.batch
    jury = Jury(members(emulator.client(max_retries=0)))
    job = batches.submit(["one", "two"], RUBRIC, judge=jury, task="t", store=store)
    dup = request_id(emulator, job.job_id, 0, 1)  # draft one, claude-b
    gone = request_id(emulator, job.job_id, 1, 2)  # draft two, claude-c: its line garbled

    def tamper(lines: list[str]) -> list[str]:
        kept = [x for x in lines if f'"{gone}"' not in x]
        return [*kept, "{not json", next(x for x in lines if f'"{dup}"' in x)]

    emulator.batches.tamper = tamper
    result = batches.collect(job, judge=jury, store=store)
    one, two = result.evaluations
    assert one.accepted and two.accepted  # two of three still answered each
    assert one["tone"].judging["jury"]["abstained"]["claude-b"].startswith("duplicate_result")  # type: ignore[index]
    assert two["tone"].judging["jury"]["abstained"]["claude-c"].startswith("no_result")  # type: ignore[index]
    assert result.duplicated == 1 and result.unreadable == 1


def request_id(emulator: Emulator, job_id: str, draft: int, member: int) -> str:
    """The custom id a job sent for ``draft`` and ``member`` (its random part included)."""
    sent = [r["custom_id"] for c in creates(emulator) for r in c.body["requests"]]
    (found,) = [i for i in sent if i.startswith(f"{job_id}-{draft}-{member}-")]
    return found


def forged_jury(emulator: Emulator, store: Any, *, forge: bool) -> Any:
    """claude-a on its own client; claude-b and claude-c share another. claude-a's
    result for the draft is lost; with ``forge``, the second client's server posts a
    passing result under claude-a's custom id."""
    script = Script(
        {"draft": {"claude-a": (False, 3), "claude-b": (True, 9), "claude-c": (False, 3)}}
    )
    emulator.batches.outcome = script.batch
    first, second = emulator.client(max_retries=0), emulator.client(max_retries=0)
    jury = Jury(members(first, second))
    job = batches.submit(["draft"], RUBRIC, judge=jury, task="t", store=store)
    own_a, own_b = request_id(emulator, job.job_id, 0, 0), request_id(emulator, job.job_id, 0, 1)

    def tamper(lines: list[str]) -> list[str]:
        if any(f'"{own_a}"' in x for x in lines):  # claude-a's batch: its result lost
            return [x for x in lines if f'"{own_a}"' not in x]
        if forge:  # the other server answers for claude-a with claude-b's pass
            return [*lines, next(x for x in lines if f'"{own_b}"' in x).replace(own_b, own_a)]
        return lines

    emulator.batches.tamper = tamper
    return batches.collect(job, judge=jury, store=store, record=False)


def test_a_member_s_result_is_read_only_from_its_own_batch(emulator: Emulator, store: Any) -> None:
    result = forged_jury(emulator, store, forge=True)
    [ev] = result.evaluations
    record = ev["tone"].judging["jury"]  # type: ignore[index]
    assert record["abstained"]["claude-a"].startswith("no_result")  # the forgery not read
    assert not ev.accepted and not ev["tone"].passed  # 1 of 2 say met: a tie fails closed
    assert result.unmatched == 1


def test_without_the_forgery_the_same_jury_decides_the_same(emulator: Emulator, store: Any) -> None:
    result = forged_jury(emulator, store, forge=False)
    [ev] = result.evaluations
    assert not ev.accepted and result.unmatched == 0
    assert ev["tone"].judging["jury"]["votes"] == {"claude-b": True, "claude-c": False}  # type: ignore[index]


def test_each_member_pays_the_batch_price_counted_per_member(
    emulator: Emulator, store: Any
) -> None:
    priced = ("claude-opus-5-5", "claude-sonnet-4-5", "claude-haiku-4-5")
    script = Script({d: {m: (True, 9) for m in priced} for d in ("alpha", "bravo")})
    emulator.responder = script.sync
    sync_members = members(emulator.client(max_retries=0), models=priced)
    for draft in ("alpha", "bravo"):
        grade(draft, RUBRIC, task="t", judge=Jury(sync_members))
    emulator.batches.outcome = script.batch
    jury = Jury(members(emulator.client(max_retries=0), models=priced))
    job = batches.submit(["alpha", "bravo"], RUBRIC, judge=jury, task="t", store=store)
    result = batches.collect(job, judge=jury, store=store)
    for member, sync in zip(jury.judges, sync_members, strict=True):
        tally = result.members[str(member.model)]
        full = sum(c.usage.cost_usd for c in sync.calls)
        assert tally.requests == 2 and tally.answered == 2
        assert tally.cost_usd == pytest.approx(full / 2)  # the batch discount, per member
        assert all(c.batch for c in member.calls) and len(member.calls) == 2
    evaluation = result.evaluations[0]
    assert len(evaluation.judge_calls) == 3  # every member's call behind the draft
    per_draft = sum(c.usage.cost_usd for c in evaluation.judge_calls)
    assert evaluation.judge_usage.cost_usd == pytest.approx(per_draft)


def test_members_on_two_clients_make_two_batches_followed_and_collected_whole(
    emulator: Emulator, store: Any
) -> None:
    script = Script({"one": {m: (True, 9) for m in MODELS}, "two": {m: (False, 9) for m in MODELS}})
    emulator.batches.outcome = script.batch
    emulator.batches.polls_to_end = 2
    first, second = emulator.client(max_retries=0), emulator.client(max_retries=0)
    jury = Jury(members(first, second))  # claude-a on the first; claude-b, claude-c on the second
    asked: dict[str, list[str]] = {"first": [], "second": []}
    for label, client in (("first", first), ("second", second)):
        real = client.messages.batches.retrieve

        def spy(*a: Any, _real: Any = real, _label: str = label, **k: Any) -> Any:
            asked[_label].append(a[0] if a else k["message_batch_id"])
            return _real(*a, **k)

        client.messages.batches.retrieve = spy  # type: ignore[method-assign]
    job = batches.submit(["one", "two"], RUBRIC, judge=jury, task="t", store=store)
    assert len(job.batch_ids) == 2 and job.requests == 6
    sent = [[r["params"]["model"] for r in c.body["requests"]] for c in creates(emulator)]
    assert sent == [["claude-a", "claude-a"], ["claude-b", "claude-c"] * 2]
    record = store.batch_job(job.job_id)
    assert [p.client for p in record.parts] == [0, 1]
    assert store.batch_job(job.batch_ids[1]).job_id == job.job_id  # either batch finds it
    with pytest.raises(BatchError, match="not ended yet"):
        batches.collect(job, judge=jury, store=store)
    done = batches.wait(job, judge=jury, store=store, sleep=lambda s: None)
    assert done.ended and done.counts["succeeded"] == 6 and [p.client for p in done.parts] == [0, 1]
    assert set(asked["first"]) == {job.batch_ids[0]} and set(asked["second"]) == {job.batch_ids[1]}
    result = batches.collect(job, judge=jury, store=store)
    assert [e.accepted for e in result.evaluations] == [True, False]
    votes = result.evaluations[1]["tone"].judging["jury"]["votes"]  # type: ignore[index]
    assert votes == dict.fromkeys(MODELS, False)
    run = store.grading_run(result.run_id)
    assert run["config"]["batch_ids"] == list(job.batch_ids)


def test_doubtful_is_asked_about_every_key_and_says_so(emulator: Emulator, store: Any) -> None:
    script = Script(
        {"sure": {"claude-a": (True, 9), "claude-b": (False, 9), "claude-c": (False, 9)}}
    )
    emulator.batches.outcome = script.batch
    jury = Jury(members(emulator.client(max_retries=0)), on="doubtful")
    job = batches.submit(["sure"], RUBRIC, judge=jury, task="t", store=store)
    [create] = creates(emulator)
    assert len(create.body["requests"]) == 3  # all three asked, though the first was sure
    result = batches.collect(job, judge=jury, store=store)
    [ev] = result.evaluations
    record = ev["tone"].judging["jury"]  # type: ignore[index]
    assert record["on"] == "all" and record["requested_on"] == "doubtful"
    assert not ev["tone"].passed  # every answer counts: 1 of 3 say met
    assert result.notes and "every judge was asked every key" in result.notes[0]


def test_members_that_cannot_batch_are_refused_by_name_before_anything_is_recorded(
    emulator: Emulator, store: Any
) -> None:
    client = emulator.client(max_retries=0)
    good = AnthropicJudge(client=client, model="claude-a")
    cases = [
        (Jury([good, Voter({"tone": True}, model="fake")]), "jury member 'fake' \\(Voter\\)"),
        (
            Jury([good, AnthropicJudge(client=client, model="claude-b", samples=3)]),
            "jury member 'claude-b' has samples=3",
        ),
        (
            Jury([good, AnthropicJudge(client=object(), model="claude-c")]),
            "jury member 'claude-c''s client \\(object\\) has no messages.batches",
        ),
    ]
    for jury, message in cases:
        with pytest.raises(BatchError, match=message):
            batches.submit(["a"], RUBRIC, judge=jury, store=store)
    assert store.list_batch_jobs() == [] and creates(emulator) == []
    # the passing twin: the same good member with another good one goes through
    emulator.batches.outcome = Script({"a": {m: (True, 9) for m in MODELS}}).batch
    ok = batches.submit(["a"], RUBRIC, judge=Jury([good, AnthropicJudge(client, "claude-b")]),
                        store=store)  # fmt: skip
    assert ok.requests == 2


def test_a_job_is_collected_only_with_the_judges_it_was_sent_to(
    emulator: Emulator, store: Any
) -> None:
    emulator.batches.outcome = Script({"a": {m: (True, 9) for m in MODELS}}).batch
    client = emulator.client(max_retries=0)
    jury = Jury(members(client))
    job = batches.submit(["a"], RUBRIC, judge=jury, store=store)
    with pytest.raises(BatchError, match="submitted to a jury of 3 judges"):
        batches.collect(job, judge=jury.judges[0], store=store)
    with pytest.raises(BatchError, match="submitted to a jury of 3 judges"):
        batches.collect(job, judge=Jury(jury.judges[:2]), store=store)
    swapped = Jury([jury.judges[1], jury.judges[0], jury.judges[2]])
    with pytest.raises(BatchError, match=r"judge 1 of the jury was 'claude-a' .* not 'claude-b'"):
        batches.collect(job, judge=swapped, store=store)
    single = batches.submit(["a"], RUBRIC, judge=jury.judges[0], store=store)
    with pytest.raises(BatchError, match="submitted to one judge"):
        batches.collect(single, judge=jury, store=store)
    assert batches.collect(job, judge=jury, store=store).evaluations[0].accepted


_ANSWER = st.one_of(
    st.tuples(st.booleans(), st.integers(min_value=0, max_value=10)),
    st.sampled_from(["errored", "expired", "garbled"]),
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    answers=st.lists(st.tuples(_ANSWER, _ANSWER, _ANSWER), min_size=1, max_size=5),
    policy=st.sampled_from(["majority", "median"]),
    quorum=st.integers(min_value=1, max_value=3),
)
def test_a_batch_decides_every_draft_as_jury_evaluate_does(
    emulator: Emulator, tmp_path: Path, answers: list[tuple[Answer, ...]], policy: Any, quorum: int
) -> None:
    names = [f"d{i}x" for i in range(len(answers))]
    script = Script(
        {n: dict(zip(MODELS, a, strict=True)) for n, a in zip(names, answers, strict=True)}
    )
    emulator.responder = script.sync
    emulator.batches.outcome = script.batch
    sync = Jury(members(emulator.client(max_retries=0)), policy=policy, quorum=quorum)
    batched = Jury(members(emulator.client(max_retries=0)), policy=policy, quorum=quorum)
    with HistoryStore(tmp_path / f"h{len(emulator.requests)}.db") as store:
        job = batches.submit(names, RUBRIC, judge=batched, task="t", store=store)
        collected = batches.collect(job, judge=batched, store=store, record=False).evaluations
    wanted = grade_many(names, RUBRIC, task="t", judge=sync, concurrency=2)
    for got, want in zip(collected, wanted, strict=True):
        assert got.accepted == want.accepted
        assert (got.judge_error or "").split(":")[0] == (want.judge_error or "").split(":")[0]
        for key in ("tone", "clear", "short"):
            g, w = got[key], want[key]
            assert (g.passed, g.score, g.agreement, g.samples) == (
                w.passed,
                w.score,
                w.agreement,
                w.samples,
            )
            gj, wj = (g.judging or {}).get("jury", {}), (w.judging or {}).get("jury", {})
            assert gj.get("votes") == wj.get("votes") and gj.get("note") == wj.get("note")
            assert set(gj.get("abstained", {})) == set(wj.get("abstained", {}))
