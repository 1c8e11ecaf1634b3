"""A transcript as the draft (and the reference) on every road: grade, agrade, grade_many,
assert_graded, compare, calibrate, the JSONL readers, the CLI, the history and the report."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gradeloop import (
    CheckResult,
    Criterion,
    HistoryStore,
    Rubric,
    Transcript,
    Verdict,
    agrade,
    assert_graded,
    grade,
    grade_many,
)
from gradeloop.errors import BatchError, InputError, TranscriptError
from gradeloop.grading import CheckContext, Registry
from gradeloop.grading._grade import start_plan
from gradeloop.history.report import render_report
from gradeloop.migration import (
    DraftItem,
    LabelledItem,
    calibrate,
    compare,
    read_drafts,
    read_labels,
)
from gradeloop_checkers.trajectory._read import NO_CALLS
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator
from tests.support.fakes import FakeJudge, verdict


def openai_call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def run(*calls: tuple[str, dict[str, Any]], final: str = "Refunded order A1.") -> list[Any]:
    """An agent's messages: one assistant message per call, its result, then ``final``."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Refund A1, it arrived broken."}]
    for n, (name, args) in enumerate(calls):
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [openai_call(name, args, f"c{n}")]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "<b>ok</b>"})
    messages.append({"role": "assistant", "content": final})
    return messages


GOOD = run(("lookup_order", {"order_id": "A1"}), ("issue_refund", {"order_id": "A1"}))
SKIPPED = run(("issue_refund", {"order_id": "A1"}))
EXPECTED = [{"name": "lookup_order"}, {"name": "issue_refund", "args": {"order_id": "A1"}}]

RUBRIC = {
    "criteria": [
        {
            "key": "right_tools",
            "description": "Looked the order up, then refunded it.",
            "checker": "tool_sequence",
            "options": {"args": "superset", "expected": EXPECTED},
        },
        {
            "key": "says_refunded",
            "description": "Tells the customer.",
            "checker": "contains",
            "options": {"values": ["Refunded"]},
        },
        {"key": "polite", "description": "Polite to the customer."},
        {"key": "accurate", "description": "Says only what the tools returned."},
    ]
}


# -- grade ---------------------------------------------------------------------------------


def test_text_checkers_read_the_final_text_and_trajectory_checkers_the_calls() -> None:
    judge = FakeJudge(verdict(True, {"polite": True, "accurate": True}))
    ev = grade(GOOD, RUBRIC, task="Help the customer.", judge=judge)
    assert ev.accepted, ev.verdict.issues
    bad = grade(SKIPPED, RUBRIC, judge=FakeJudge(verdict(True, {"polite": True, "accurate": True})))
    assert bad.failed_keys == ("right_tools",)
    assert bad["right_tools"].issues[0].startswith("call 1 is issue_refund(")
    wrong_words = grade(run(*[]), RUBRIC, skip_judge=True)
    assert "says_refunded" not in wrong_words.failed_keys  # the final text still says it


def test_the_judge_sees_the_whole_transcript_rendered_in_one_request() -> None:
    judge = FakeJudge(verdict(True, {"polite": True, "accurate": True}))
    grade(Transcript.from_messages(GOOD), RUBRIC, task="Help.", judge=judge)
    [seen] = judge.seen
    assert seen["draft"] == Transcript.from_messages(GOOD).render()
    assert 'calls issue_refund({"order_id": "A1"})' in seen["draft"]
    assert "result of lookup_order: <b>ok</b>" in seen["draft"]
    assert seen["keys"] == ["polite", "accurate"]  # every judge key, one call


def test_the_real_judge_sends_one_structured_request_holding_the_rendering(
    emulator: Emulator,
) -> None:
    from gradeloop import AnthropicJudge
    from gradeloop.testing import verdict_reply

    emulator.enqueue(
        verdict_reply(
            {
                "reasoning": "r",
                "criteria_met": {"polite": True, "accurate": True},
                "passed": True,
                "issues": [],
            }
        )
    )
    judge = AnthropicJudge(client=emulator.client(max_retries=0))
    ev = grade(GOOD, RUBRIC, task="Help.", judge=judge)
    assert ev.accepted
    [body] = emulator.bodies
    user = body["messages"][0]["content"]
    user_text = user if isinstance(user, str) else "".join(b["text"] for b in user)
    assert "<draft>\nAn agent's transcript: 6 messages, 2 tool calls." in user_text
    assert '    calls lookup_order({"order_id": "A1"})' in user_text
    schema = body["output_config"]["format"]["schema"]
    assert json.dumps(schema).count('"polite"') >= 1 and '"accurate"' in json.dumps(schema)


def test_a_text_draft_costs_nothing_new() -> None:
    text = "Refunded order A1."
    plan = start_plan(
        text, Rubric.from_dict(RUBRIC), task="", judge=None, skip_judge=True, registry=None
    )
    assert plan.transcript is None and plan.context.transcript is None
    assert plan.judge_draft is text and plan.draft is text  # the same object: nothing read


def test_the_reference_may_be_a_transcript() -> None:
    rubric = {
        "criteria": [
            {
                "key": "same_calls",
                "description": "d",
                "checker": "tool_sequence",
                "options": {"mode": "unordered"},
            },
            {"key": "same_answer", "description": "d", "checker": "matches_reference"},
        ]
    }
    assert grade(GOOD, rubric, reference=Transcript.from_messages(GOOD)).accepted
    assert grade(GOOD, rubric, reference=GOOD).accepted  # a list of message dicts too
    ev = grade(SKIPPED, rubric, reference=GOOD)
    assert ev.failed_keys == ("same_calls",)  # the final texts are equal
    with pytest.raises(TypeError, match="reference must be a string, a Transcript"):
        grade(GOOD, rubric, reference=42)  # type: ignore[arg-type]


def test_third_party_text_checkers_keep_working_and_can_ask_for_the_transcript() -> None:
    reg = Registry(autoload=False)
    seen: list[Any] = []

    def short(text: str) -> bool:  # a plain text checker, as every plugin had
        seen.append(text)
        return len(text) < 40

    def few_calls(text: str, *, context: CheckContext) -> CheckResult:
        t = context.transcript
        return CheckResult(t is not None and len(t.tool_calls) <= 2)

    reg.add("short", short)
    reg.add("few_calls", few_calls)
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {"key": "a", "description": "d", "checker": "short"},
                {"key": "b", "description": "d", "checker": "few_calls"},
            ]
        },
        registry=reg,
    )
    assert grade(GOOD, rubric, registry=reg).accepted
    assert seen == ["Refunded order A1."]
    assert not grade("text", rubric, registry=reg).accepted


def test_malformed_messages_fail_before_anything_runs() -> None:
    bad = [*GOOD[:2], {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}]
    with pytest.raises(TranscriptError, match=r"^draft: message 2 tool call 0 has no function"):
        grade(bad, RUBRIC, skip_judge=True)
    with pytest.raises(TranscriptError, match=r"^reference: message 2"):
        grade(GOOD, RUBRIC, skip_judge=True, reference=bad)
    with pytest.raises(TypeError, match="draft must be a string, a Transcript"):
        grade(3.5, RUBRIC, skip_judge=True)  # type: ignore[arg-type]


def test_agrade_grades_a_transcript_as_grade_does() -> None:
    class AsyncJudge:
        def __init__(self) -> None:
            self.drafts: list[str] = []

        async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
            self.drafts.append(draft)
            return verdict(True, {"polite": True, "accurate": True})

        def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
            raise AssertionError("the async path awaits aevaluate")

    judge = AsyncJudge()
    ev = asyncio.run(agrade(SKIPPED, RUBRIC, judge=judge))
    assert ev.failed_keys == ("right_tools",)
    assert judge.drafts == [Transcript.from_messages(SKIPPED).render()]


def test_grade_many_takes_transcripts_message_lists_and_draft_items() -> None:
    items = [
        GOOD,
        Transcript.from_messages(SKIPPED),
        DraftItem("x", "task", Transcript.from_messages(GOOD), reference=None),
        "Refunded order A1.",
    ]
    evs = grade_many(items, RUBRIC, skip_judge=True)
    assert [e["right_tools"].passed for e in evs] == [True, False, True, False]
    assert evs[3]["right_tools"].issues == (NO_CALLS,)
    with pytest.raises(TranscriptError, match=r"^drafts\[1\]: message 0 has no 'role'"):
        grade_many([GOOD, [{"content": "x"}]], RUBRIC, skip_judge=True)


def test_assert_graded_takes_a_transcript_and_shows_why() -> None:
    code_only = {"criteria": RUBRIC["criteria"][:2]}
    assert assert_graded(GOOD, code_only).accepted
    with pytest.raises(AssertionError) as info:
        assert_graded(SKIPPED, code_only)
    assert "right_tools" in str(info.value) and "issue_refund" in str(info.value)
    reference_rubric = {"criteria": [{"key": "k", "description": "d", "checker": "tool_sequence"}]}
    assert assert_graded(GOOD, reference_rubric, reference=GOOD).accepted


# -- migration: shadow a judge key with tool_sequence, compare and calibrate ------------

SHADOWED = {
    "name": "support",
    "criteria": [
        {
            "key": "right_tools",
            "description": "The agent looked the order up before refunding it.",
            "shadow": "tool_sequence",
            "shadow_options": {"args": "superset", "expected": EXPECTED},
        }
    ],
}


class CallsJudge:
    """A judge that reads the rendering: met when it mentions a refund call at all."""

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        met = "calls issue_refund" in draft
        return verdict(met, {c.key: met for c in criteria})


def test_compare_and_calibrate_a_judge_key_shadowed_by_tool_sequence(tmp_path: Path) -> None:
    rubric = Rubric.from_dict(SHADOWED)
    drafts = [
        DraftItem("good", "Refund A1.", Transcript.from_messages(GOOD)),
        DraftItem("skipped", "Refund A1.", Transcript.from_messages(SKIPPED)),
    ]
    with HistoryStore(tmp_path / "h.db") as store:
        report = compare(drafts, rubric, judge=CallsJudge(), store=store)
    [key] = report.keys
    assert (key.stats.n, key.stats.agreement) == (2, 0.5)
    [disagreement] = key.disagreements
    assert disagreement.output_id == "skipped"
    assert disagreement.primary.passed is True and disagreement.shadow.passed is False
    labelled = [
        LabelledItem("good", "t", Transcript.from_messages(GOOD), {"right_tools": True}),
        LabelledItem("skipped", "t", Transcript.from_messages(SKIPPED), {"right_tools": False}),
    ]
    cal = calibrate(labelled, rubric, judge=CallsJudge())
    by_role = {k.role: k for k in cal.keys}
    assert by_role["primary"].stats.agreement == 0.5  # the judge
    assert by_role["shadow"].stats.agreement == 1.0  # tool_sequence agrees with people


# -- JSONL ---------------------------------------------------------------------------------


def test_jsonl_lines_may_carry_messages_and_a_reference_transcript(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    lines = [
        {"id": "a", "task": "t", "messages": GOOD, "reference": {"messages": GOOD}},
        {"id": "b", "task": "t", "draft": "text"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    a, b = read_drafts(path)
    assert a.draft == Transcript.from_messages(GOOD) and a.reference == a.draft
    assert b.draft == "text"
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "right_tools",
                    "description": "d",
                    "checker": "tool_called",
                    "options": {"name": "issue_refund"},
                }
            ]
        }
    )
    labels = tmp_path / "l.jsonl"
    labels.write_text(json.dumps({**lines[0], "labels": {"right_tools": True}}), encoding="utf-8")
    [item] = read_labels(labels, rubric)
    assert isinstance(item.draft, Transcript)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ({"task": "t", "draft": "x", "messages": GOOD}, "give 'draft' (text) or 'messages'"),
        ({"task": "t"}, "missing field 'draft' (the text to grade) or 'messages'"),
        ({"task": "t", "messages": "hi"}, "'messages' must be a list of messages"),
        (
            {"task": "t", "messages": [{"role": "x"}]},
            "d.jsonl:1: 'messages': message 0 has an unknown role",
        ),
        ({"task": "t", "draft": "x", "reference": 3}, "'reference' must be a string or a list"),
        (
            {"task": "t", "draft": "x", "reference": [{"role": "user", "content": 1}]},
            "'reference': message 0",
        ),
    ],
)
def test_bad_transcript_lines_name_the_file_line_and_message(
    tmp_path: Path, line: Any, says: str
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(line), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_drafts(path)
    assert says in str(info.value) and str(info.value).startswith(f"{path}:1: ")


# -- batches refuse transcripts (a job stores text only) -------------------------------


def test_message_batches_refuse_a_transcript_before_sending(emulator: Emulator) -> None:
    from gradeloop import AnthropicJudge
    from gradeloop.bulk import batches

    judge = AnthropicJudge(client=emulator.client(max_retries=0))
    rubric = {"criteria": [{"key": "polite", "description": "Polite."}]}
    with pytest.raises(BatchError, match="is an agent's transcript"):
        batches.submit([GOOD], rubric, judge=judge)
    assert emulator.bodies == []


# -- the CLI, the history, the report -----------------------------------------------------


def _rubric_file(tmp_path: Path) -> str:
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps({"criteria": RUBRIC["criteria"][:2]}), encoding="utf-8")
    return str(path)


def test_cli_grades_a_transcript_json_file_and_records_it_losslessly(tmp_path: Path) -> None:
    rubric, db = _rubric_file(tmp_path), tmp_path / "h.db"
    good, skipped = tmp_path / "good.json", tmp_path / "skipped.json"
    good.write_text(json.dumps({"messages": GOOD}), encoding="utf-8")
    skipped.write_text(json.dumps(SKIPPED), encoding="utf-8")
    assert cli("grade", str(good), "--rubric", rubric, "--db", str(db)).code == 0
    ran = cli("grade", str(skipped), "--rubric", rubric, "--json", "--no-history")
    assert ran.code == 1
    right = json.loads(ran.out)["criteria"][0]
    assert right["name"] == "right_tools" and right["issues"][0].startswith(
        "call 1 is issue_refund("
    )
    with HistoryStore(db) as store:
        [summary] = store.list_grading_runs()
        [record] = store.grading_run(summary.run_id)["drafts"]
    assert Transcript.from_json(record["transcript"]) == Transcript.from_messages(GOOD)
    assert record["transcript"]["messages"] == GOOD  # lossless
    assert record["content"] == Transcript.from_messages(GOOD).render()


def test_cli_bad_transcripts_exit_2_naming_the_message(tmp_path: Path) -> None:
    rubric = _rubric_file(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"role": "user", "content": "x"}, {"role": "robot"}]), "utf-8")
    ran = cli("grade", str(bad), "--rubric", rubric, "--no-history")
    assert ran.code == 2
    assert ran.err.strip() == (
        f"gradeloop: error: {bad}: message 1 has an unknown role 'robot'; expected one of: "
        "system, developer, user, assistant, tool, function; to grade the file as plain "
        f"text, give it on stdin: `gradeloop grade - < {bad}`"
    )


def test_cli_other_json_drafts_stay_text(tmp_path: Path) -> None:
    rubric = tmp_path / "r.json"
    rubric.write_text(
        json.dumps({"criteria": [{"key": "j", "description": "d", "checker": "json_valid"}]}),
        "utf-8",
    )
    # JSON that is clearly not a message list (issue 40: '{"messages": "not a list"}' is
    # meant as messages, so an error now; tests/cli/test_cli_first_hour.py)
    for content in ('{"answer": 42}', "[1, 2]", '[{"name": "a", "price": 3}]', "[{]"):
        draft = tmp_path / "d.json"
        draft.write_text(content, encoding="utf-8")
        ran = cli("grade", str(draft), "--rubric", str(rubric), "--no-history", "--json")
        assert ran.code == (1 if content == "[{]" else 0), (content, ran.err)


def test_cli_reference_transcript_and_drafts_jsonl_with_messages(tmp_path: Path) -> None:
    rubric = tmp_path / "r.json"
    rubric.write_text(
        json.dumps(
            {
                "criteria": [
                    {
                        "key": "k",
                        "description": "d",
                        "checker": "tool_sequence",
                        "options": {"mode": "unordered"},
                    }
                ]
            }
        ),
        "utf-8",
    )
    draft, reference = tmp_path / "d.json", tmp_path / "ref.json"
    draft.write_text(json.dumps(GOOD), encoding="utf-8")
    reference.write_text(json.dumps(GOOD), encoding="utf-8")
    args = ("grade", str(draft), "--rubric", str(rubric), "--no-history")
    assert cli(*args, "--reference", str(reference)).code == 0
    assert cli(*args).code == 1  # no expected calls anywhere: a failure, never a pass
    lines = tmp_path / "d.jsonl"
    lines.write_text(
        "\n".join(
            json.dumps({"id": i, "task": "t", "messages": m, "reference": GOOD})
            for i, m in (("good", GOOD), ("skipped", SKIPPED))
        ),
        encoding="utf-8",
    )
    ran = cli(
        "grade",
        "--drafts",
        str(lines),
        "--rubric",
        str(rubric),
        "--json",
        "--quiet",
        "--no-history",
    )
    assert ran.code == 1
    assert [json.loads(x)["passed"] for x in ran.out.splitlines()] == [True, False]


def test_the_report_and_the_viewer_show_the_transcript_escaped(tmp_path: Path) -> None:
    from gradeloop.history._grading import GradedDraft
    from gradeloop.history.report import Viewer
    from tests.history.test_view import get

    hostile = run(
        ("lookup_order", {"order_id": "<script>alert(1)</script>"}),
        final="<img src=x onerror=alert(1)>",
    )
    t = Transcript.from_messages(hostile)
    rubric = Rubric.from_dict({"criteria": RUBRIC["criteria"][:1]})
    ev = grade(t, rubric).with_ids("out_1")
    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        run_id = store.add_grading_run([GradedDraft("t1", t, ev, "task")], rubric=rubric.to_dict())
    html = render_report([run_id], db=db)
    assert "transcript (4 messages, 1 tool call)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img" not in html
    assert "result of lookup_order" in html and "&lt;b&gt;ok&lt;/b&gt;" in html
    with Viewer(db).start() as viewer:
        status, page, _ = get(viewer, f"/run/{run_id}")
    assert status == 200 and "transcript (4 messages, 1 tool call)" in page
    assert "calls </span><code>lookup_order({&quot;order_id&quot;: " in page


def test_cli_compare_and_calibrate_the_support_agent_example_through_the_real_judge(
    emulator: Emulator,
) -> None:
    from gradeloop.testing import verdict_reply

    example = Path(__file__).resolve().parents[2] / "examples" / "support-agent"
    shown: list[str] = []

    def hurried(body: dict[str, Any]) -> Any:  # the example's stand-in rule, over HTTP
        user = body["messages"][0]["content"]
        draft = user if isinstance(user, str) else "".join(b["text"] for b in user)
        shown.append(draft)
        met = "calls lookup_order(" in draft and "calls issue_refund(" in draft
        return verdict_reply(
            {"reasoning": "r", "criteria_met": {"right_tools": met}, "passed": met, "issues": []}
        )

    emulator.responder = hurried
    common = (
        "--rubric",
        str(example / "rubric-shadow.toml"),
        "--base-url",
        emulator.base_url,
        "--json",
        "--no-history",
    )
    ran = cli("compare", str(example / "transcripts.jsonl"), *common)
    assert ran.code == 0, ran.err
    [key] = json.loads(ran.out)["keys"]
    assert key["key"] == "right_tools" and key["agreement"] == 0.5
    assert len(shown) == 8 and all(s.startswith("<task>") for s in shown)
    assert all("\n<draft>\nAn agent's transcript:" in s for s in shown)
    ran = cli("calibrate", str(example / "labels.jsonl"), *common)
    assert ran.code == 0, ran.err
    figures = {(k["role"], k["rated_by"]): k["agreement"] for k in json.loads(ran.out)["keys"]}
    assert figures == {("primary", "judge"): 0.5, ("shadow", "tool_sequence"): 1.0}
