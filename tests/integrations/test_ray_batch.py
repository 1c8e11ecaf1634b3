"""GradeBatch without an engine: a dict-of-lists batch in, the same batch with grades
out, equal to grade_many's; identical drafts graded once; the judge after the code
keys only when asked; the limit seam in the pacing middleware (the real engines are
in tests/engines, marker ``engines``)."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Rubric, Transcript, grade_many, make_client
from gradeloop.integrations.ray import GradeBatch
from gradeloop.integrations.ray._batch import _identity
from gradeloop.integrations.ray._rows import row_of
from gradeloop.migration import DraftItem
from gradeloop.models import AnthropicJudge
from gradeloop.models._pacing import limiting
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator, http_error

RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "short", "description": "Sentences of 6 words at most.",
             "checker": "sentence_len", "options": {"max_words": 6}},
            {"key": "polite", "description": "The tone is polite."},
        ]
    }
)  # fmt: skip
TEXTS = ["Please see the guide.", "This sentence is far too long to pass the check.", "Thanks."]


def _verdict(body: dict[str, Any]) -> Any:
    text = json.dumps(body["messages"])
    polite = "Please" in text or "Thanks" in text
    return verdict_reply(
        {"reasoning": "r", "criteria_met": {"polite": polite}, "passed": polite,
         "issues": [] if polite else ["be polite"]}
    )  # fmt: skip


@pytest.fixture
def judged(emulator: Emulator) -> Emulator:
    emulator.responder = _verdict
    return emulator


def _judge(server: Emulator) -> AnthropicJudge:
    return AnthropicJudge(make_client(api_key="k", base_url=server.base_url), model="m")


def _batch(texts: list[str]) -> dict[str, list[Any]]:
    return {"id": [f"x{i}" for i in range(len(texts))], "draft": list(texts),
            "task": ["Write a note."] * len(texts)}  # fmt: skip


def test_a_batch_comes_back_with_grade_many_s_grades(judged: Emulator) -> None:
    grader = GradeBatch(RUBRIC, judge=lambda: _judge(judged), run_id="r")
    out = grader(_batch(TEXTS))
    local = grade_many(
        [DraftItem(f"x{i}", "Write a note.", t) for i, t in enumerate(TEXTS)],
        RUBRIC,
        judge=_judge(judged),
    )
    assert out["id"] == ["x0", "x1", "x2"] and out["draft"] == TEXTS  # the input is kept
    for i, evaluation in enumerate(local):
        expected = row_of(evaluation, "r")
        assert {k: out[k][i] for k in expected} == expected
    assert out["criteria_met"][1] == {"short": False, "polite": False}
    assert out["accepted"] == [True, False, True]
    assert out["judge_requests"] == [1, 1, 1] and all(n > 0 for n in out["input_tokens"])


def test_a_judge_object_and_a_judge_factory_both_work(judged: Emulator) -> None:
    built: list[int] = []

    def factory() -> AnthropicJudge:
        built.append(1)
        return _judge(judged)

    grader = GradeBatch(RUBRIC, judge=factory)
    grader(_batch(TEXTS))
    grader(_batch(TEXTS[:1]))
    assert built == [1]  # built once, for every batch
    out = GradeBatch(RUBRIC, judge=_judge(judged))(_batch(TEXTS))
    assert out["accepted"] == [True, False, True]


@pytest.mark.parametrize(
    ("judge", "message"),
    [("claude", "takes a judge or a function"), (lambda: "claude", "no judge")],
)
def test_a_judge_that_is_none_is_refused_by_name(judge: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        GradeBatch(RUBRIC, judge=judge)


def test_identical_drafts_of_a_batch_are_graded_once(judged: Emulator) -> None:
    out = GradeBatch(RUBRIC, judge=lambda: _judge(judged))(_batch([TEXTS[0]] * 3 + [TEXTS[2]]))
    assert len(judged.bodies) == 2
    assert out["reused"] == [False, True, True, False]
    assert out["judge_requests"] == [1, 0, 0, 1] and out["input_tokens"][1] == 0
    assert out["criteria_met"][1] == out["criteria_met"][0]
    assert [json.loads(e)["output_id"] for e in out["evaluation"]] == ["x0", "x1", "x2", "x3"]


def test_different_drafts_are_each_graded(judged: Emulator) -> None:
    GradeBatch(RUBRIC, judge=lambda: _judge(judged))(_batch(TEXTS))
    assert len(judged.bodies) == 3


def test_rows_that_differ_only_in_reference_or_metadata_are_each_graded(
    judged: Emulator,
) -> None:
    batch = {**_batch([TEXTS[0]] * 5), "reference": [None, "r", None, None, "s"],
             "metadata": [None, None, {"k": 1}, {"k": 1}, None]}  # fmt: skip
    out = GradeBatch(RUBRIC, judge=lambda: _judge(judged))(batch)
    assert len(judged.bodies) == 4
    assert out["reused"] == [False, False, False, True, False]


ROWS = st.fixed_dictionaries(
    {
        "task": st.sampled_from(["T", "U"]),
        "draft": st.sampled_from(["a", "b", Transcript.from_messages([{"role": "user",
                                                                        "content": "a"}])]),
        "reference": st.sampled_from([None, "a", "null", ["a"], {"a": 1}]),
        "metadata": st.sampled_from([None, {}, {"k": 1}, {"k": "1"}]),
    }
)  # fmt: skip


@given(st.lists(ROWS, min_size=2, max_size=6))
def test_rows_are_the_same_grading_exactly_when_their_values_are_equal(
    rows: list[dict[str, Any]],
) -> None:
    def value(row: dict[str, Any]) -> str:
        draft = row["draft"]
        plain = draft.to_json() if isinstance(draft, Transcript) else draft
        return json.dumps([row["task"], plain, row["reference"], row["metadata"]], sort_keys=True)

    for a in rows:
        for b in rows:
            assert (_identity(a) == _identity(b)) == (value(a) == value(b))
            hash(_identity(a))


def test_judge_after_code_skips_the_judge_where_code_failed(judged: Emulator) -> None:
    out = GradeBatch(RUBRIC, judge=lambda: _judge(judged), judge_after_code=True)(_batch(TEXTS))
    assert len(judged.bodies) == 2  # the long draft fails "short": not asked
    assert out["status"][1] == {"short": "failed", "polite": "not_checked"}
    assert out["status"][0] == {"short": "met", "polite": "met"}


def test_by_default_the_judge_grades_every_draft(judged: Emulator) -> None:
    out = GradeBatch(RUBRIC, judge=lambda: _judge(judged))(_batch(TEXTS))
    assert len(judged.bodies) == 3
    assert out["status"][1] == {"short": "failed", "polite": "failed"}


def test_code_only_needs_no_judge() -> None:
    out = GradeBatch(RUBRIC, skip_judge=True)(_batch(TEXTS))
    assert out["status"][0] == {"short": "met", "polite": "not_checked"}
    assert out["overall_score"] == [None, None, None] and out["cost_usd"] == [0.0] * 3


def test_a_batch_is_read_and_never_written_to() -> None:
    # Ray's zero-copy batches are read-only views; grade_dataset asks for them
    columns = {"id": ("x0", "x1"), "draft": ("Thanks.", "Please see the guide now.")}
    batch = MappingProxyType(columns)  # writing a key or a cell raises
    out = GradeBatch(RUBRIC, skip_judge=True)(batch)
    assert out["status"] == [{"short": "met", "polite": "not_checked"}] * 2
    assert out["draft"] == columns["draft"]
    assert dict(batch) == columns and "accepted" not in batch
    with pytest.raises(TypeError):
        batch["accepted"] = ()  # type: ignore[index]  # the twin: a write would fail


def test_outside_a_ray_actor_the_process_s_objects_are_not_frozen() -> None:
    before = gc.get_freeze_count()
    GradeBatch(RUBRIC, skip_judge=True)(_batch(TEXTS))
    assert gc.get_freeze_count() == before  # the caller's process, not ours to freeze


def test_transcripts_as_message_lists_and_as_json_text() -> None:
    messages = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}]
    listed = GradeBatch(RUBRIC, skip_judge=True)({"id": ["t"], "draft": [messages]})
    as_json = GradeBatch(RUBRIC, skip_judge=True, transcript_column="tj")(
        {"id": ["t"], "tj": [json.dumps({"messages": messages})]}
    )
    assert listed["evaluation"] == as_json["evaluation"]
    with pytest.raises(TypeError, match="column 'draft'"):
        GradeBatch(RUBRIC, skip_judge=True)({"draft": [42]})
    with pytest.raises(ValueError, match="column 'tj': a transcript is JSON"):
        GradeBatch(RUBRIC, skip_judge=True, transcript_column="tj")({"tj": ["{oops"]})


def test_rows_without_ids_or_tasks_get_the_defaults() -> None:
    out = GradeBatch(RUBRIC, skip_judge=True, task="T")({"draft": ["Short one."]})
    assert json.loads(out["evaluation"][0])["output_id"] == "row-1"
    with pytest.raises(TypeError, match=r"pyarrow\.Table, a pandas\.DataFrame or a dict"):
        GradeBatch(RUBRIC, skip_judge=True)(["Short one."])


def test_the_rubric_may_be_a_dict_or_a_path(tmp_path: Any) -> None:
    path = tmp_path / "r.toml"
    path.write_text(
        '[[criteria]]\nkey = "short"\ndescription = "d"\nchecker = "sentence_len"\n',
        encoding="utf-8",
    )
    assert GradeBatch(path).rubric.keys == ("short",)
    assert GradeBatch(RUBRIC.to_dict(), skip_judge=True).rubric == RUBRIC
    with pytest.raises(TypeError, match="rubric= takes"):
        GradeBatch(42)  # type: ignore[arg-type]


class _Counting:
    """A Limit that counts admissions and settlements."""

    def __init__(self) -> None:
        self.admitted: list[Any] = []
        self.settled: list[tuple[Any, int]] = []

    def admit(self, request: Any) -> str:
        self.admitted.append(request.url)
        return f"ticket-{len(self.admitted)}"

    async def aadmit(self, request: Any) -> str:
        return self.admit(request)

    def settle(self, ticket: Any, response: Any) -> None:
        self.settled.append((ticket, response.status_code))

    async def asettle(self, ticket: Any, response: Any) -> None:
        self.settle(ticket, response)


def test_an_active_limit_admits_every_http_attempt(judged: Emulator) -> None:
    judged.enqueue(http_error(429), http_error(529))  # two retried attempts, then replies
    limit = _Counting()
    drafts = [DraftItem(f"x{i}", "t", t) for i, t in enumerate(TEXTS)]
    with limiting(limit):
        grade_many(drafts, RUBRIC, judge=_judge(judged))
    assert len(limit.admitted) == len(judged.bodies) == 5
    assert sorted(s for _, s in limit.settled) == [200, 200, 200, 429, 529]
    assert len({t for t, _ in limit.settled}) == 5  # each answer with its own ticket


def test_the_sync_path_is_admitted_too(judged: Emulator) -> None:
    limit = _Counting()
    with limiting(limit):
        _judge(judged).evaluate("t", TEXTS[0], RUBRIC.judge_criteria)
    assert len(limit.admitted) == 1 and limit.settled == [("ticket-1", 200)]


def test_no_limit_no_admission(judged: Emulator) -> None:
    limit = _Counting()
    grade_many([TEXTS[0]], RUBRIC, judge=_judge(judged))
    assert limit.admitted == [] and len(judged.bodies) == 1


def test_a_limit_reaches_a_caller_built_client(judged: Emulator) -> None:
    limit = _Counting()
    client = judged.client()  # no gradeloop middleware on it: paced() derives one

    async def run() -> None:
        with limiting(limit):
            await AnthropicJudge(client, model="m").aevaluate("t", TEXTS[0], RUBRIC.judge_criteria)

    asyncio.run(run())
    assert len(limit.admitted) == 1


def test_a_rate_limit_needs_ray_and_says_so(
    judged: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradeloop.integrations.ray import RateLimit

    monkeypatch.setitem(sys.modules, "ray", None)  # as where the extra is not installed
    with pytest.raises(ImportError, match=r"pip install 'gradeloop\[ray\]'"):
        GradeBatch(RUBRIC, judge=_judge(judged), rate_limit=RateLimit(requests_per_minute=60))
    with pytest.raises(TypeError, match="rate_limit= takes a RateLimit"):
        GradeBatch(RUBRIC, judge=_judge(judged), rate_limit=60)  # type: ignore[arg-type]


def test_code_only_grading_asks_no_limiter(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradeloop.integrations.ray import RateLimit

    monkeypatch.setitem(sys.modules, "ray", None)
    grader = GradeBatch(RUBRIC, skip_judge=True, rate_limit=RateLimit(requests_per_minute=60))
    assert grader(_batch(TEXTS))["accepted"] == [False, False, False]


def test_cache_true_reuses_this_node_s_verdicts_on_a_rerun(judged: Emulator) -> None:
    graders = [GradeBatch(RUBRIC, judge=lambda: _judge(judged), cache=True) for _ in range(2)]
    first, again = (grader(_batch(TEXTS)) for grader in graders)
    for grader in graders:
        grader.close()
    assert len(judged.bodies) == 3  # the second grader (a rerun) sent nothing
    assert again["judge_cached"] == [True] * 3 and again["judge_requests"] == [0] * 3
    assert again["criteria_met"] == first["criteria_met"]


def test_without_a_cache_a_rerun_asks_again(judged: Emulator) -> None:
    GradeBatch(RUBRIC, judge=lambda: _judge(judged))(_batch(TEXTS))
    GradeBatch(RUBRIC, judge=lambda: _judge(judged))(_batch(TEXTS))
    assert len(judged.bodies) == 6
