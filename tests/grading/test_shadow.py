"""Shadow mode: the shadow runs and is recorded, and never changes a verdict."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gradeloop import CheckResult, HistoryStore, Rubric, grade, run_loop
from gradeloop.errors import JudgeError, JudgeRequiredError, RubricError
from gradeloop.grading import Registry
from gradeloop.grading._shadow import issues_about, judge_request, split_verdict
from gradeloop.history._sql import MIGRATIONS
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator
from tests.support.fakes import FakeGenerator, FakeJudge, verdict


def word_limit(text: str, *, max_words: int = 5) -> CheckResult:
    n = len(text.split())
    return CheckResult(n <= max_words, [] if n <= max_words else [f"{n} words > {max_words}"])


def explode(text: str) -> CheckResult:
    raise RuntimeError("shadow bug")


def quality(text: str) -> CheckResult:
    return CheckResult(True, score=min(10.0, float(len(text.split()))))


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.add("word_limit", word_limit)
    r.add("explode", explode)
    r.add("quality", quality)
    return r


def rubric(reg: Registry, *criteria: dict[str, Any]) -> Rubric:
    return Rubric.from_dict({"criteria": list(criteria)}, registry=reg)


# code key shadowed by the judge; judge key shadowed by a checker
SHORT = {
    "key": "short",
    "description": "At most 5 words.",
    "checker": "word_limit",
    "shadow": "judge",
}
TONE = {"key": "tone", "description": "Polite."}
TONE_SHADOWED = {**TONE, "shadow": "word_limit", "shadow_options": {"max_words": 2}}

THREE_WORDS = "one two three"  # word_limit(5) passes; word_limit(2) fails


# -- the rubric --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("criterion", "message"),
    [
        ({**TONE, "shadow": "judge"}, 'the judge already fills this key, so shadow = "judge"'),
        ({**TONE, "shadow_options": {"max_words": 2}}, "'shadow_options' are for a shadow checker"),
        (
            {**SHORT, "shadow_options": {"max_words": 2}},
            "'shadow_options' are for a shadow checker",
        ),
        ({**TONE, "shadow": "word_limt"}, "shadow: unknown checker 'word_limt'"),
        (
            {**TONE, "shadow": "word_limit", "shadow_options": {"max_word": 2}},
            "shadow_options: unknown option 'max_word' for checker 'word_limit'",
        ),
        (
            {**TONE, "shadow": "word_limit", "shadow_options": {"max_words": "many"}},
            "shadow_options: option 'max_words' of checker 'word_limit'",
        ),
        (
            {**SHORT, "shadow": "word_limit"},
            "the shadow is the primary checker with the same options",
        ),
        ({**TONE, "shadow": " "}, "name the shadow"),
    ],
)
def test_bad_shadows_are_refused_at_load(
    reg: Registry, criterion: dict[str, Any], message: str
) -> None:
    with pytest.raises(RubricError, match=re.escape(message)) as info:
        rubric(reg, criterion)
    assert info.value.key == criterion["key"]


def test_good_shadows_load_and_round_trip(reg: Registry) -> None:
    r = rubric(
        reg,
        SHORT,
        TONE_SHADOWED,
        {
            "key": "short2",
            "description": "x",
            "checker": "word_limit",
            "shadow": "word_limit",
            "shadow_options": {"max_words": 9},
        },
    )
    assert [c.key for c in r.shadowed] == ["short", "tone", "short2"]
    assert r.judge_shadow_keys == ("short",)
    assert r["tone"].shadow_source == "code" and r["short"].shadow_source == "judge"
    assert Rubric.from_dict(r.to_dict(), registry=reg) == r
    assert r.judge_keys == ("tone",)  # a shadow never makes a code key judge-filled


def test_a_misspelt_shadow_field_is_suggested(reg: Registry) -> None:
    with pytest.raises(RubricError, match="did you mean 'shadow'"):
        rubric(reg, {**TONE, "shadw": "word_limit"})


# -- the judge is asked once, and about the shadowed code key ---------------------------


def test_the_judge_is_asked_about_a_shadowed_code_key_once_per_draft(reg: Registry) -> None:
    r = rubric(reg, SHORT, TONE)
    judge = FakeJudge(
        verdict(True, {"short": True, "tone": True}), verdict(True, {"short": True, "tone": True})
    )
    grade(THREE_WORDS, r, judge=judge, registry=reg)
    grade("four five six", r, judge=judge, registry=reg)
    assert [s["keys"] for s in judge.seen] == [["short", "tone"], ["short", "tone"]]


def test_without_a_shadow_the_code_key_is_not_asked(reg: Registry) -> None:
    r = rubric(reg, {**SHORT, "shadow": None}, TONE)
    judge = FakeJudge(verdict(True, {"tone": True}))
    ev = grade(THREE_WORDS, r, judge=judge, registry=reg)
    assert judge.seen[0]["keys"] == ["tone"] and ev.shadows == ()


def test_the_request_holds_a_judge_filled_copy_in_rubric_order(reg: Registry) -> None:
    asked = judge_request(rubric(reg, TONE, SHORT))
    assert [(c.key, c.source, c.shadow) for c in asked] == [
        ("tone", "judge", None),
        ("short", "judge", None),
    ]


def test_the_wire_schema_names_the_shadowed_key_once_per_draft(emulator: Emulator) -> None:
    from gradeloop import AnthropicJudge

    r = Rubric.load(Path("examples/payments-guide/rubric.toml"))
    shadowed = Rubric.from_dict(
        {
            "criteria": [
                {
                    **c.model_dump(exclude_defaults=True),
                    **({"shadow": "judge"} if c.key == "sentence_len" else {}),
                }
                for c in r
            ]
        }
    )
    keys = ("api_cited", "errors_named", "sentence_len", "no_invention")
    emulator.enqueue(
        verdict_reply(
            {
                "reasoning": "r",
                "criteria_met": dict.fromkeys(keys, True),
                "passed": True,
                "issues": [],
            }
        )
    )
    ev = grade(
        "# Guide\n\nShort.", shadowed, task="t", judge=AnthropicJudge(client=emulator.client())
    )
    assert len(emulator.bodies) == 1
    schema = emulator.bodies[0]["output_config"]["format"]["schema"]
    assert list(schema["$defs"]["CriteriaMet"]["properties"]) == list(keys)
    assert (
        "sentence_len: No sentence is longer than 40 words."
        in emulator.bodies[0]["system"][0]["text"]
    )
    assert [s.key for s in ev.shadows] == ["sentence_len"] and ev.shadows[0].agree is True


# -- the shadow never changes the verdict -----------------------------------------------


def test_a_judge_shadow_that_disagrees_leaves_the_code_verdict(reg: Registry) -> None:
    judge = FakeJudge(
        verdict(
            False,
            {"short": False, "tone": True},
            issues=["short: the judge finds it long"],
            reasoning="it rambles",
        )
    )
    ev = grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.accepted is True
    assert ev.verdict.criteria_met == {"short": True, "tone": True}
    assert ev.verdict.passed is True and ev.verdict.issues == []  # no revision on a shadow
    (s,) = ev.shadows
    assert (s.status, s.agree, s.primary.passed, s.shadow.passed) == ("ok", False, True, False)
    assert s.shadow.issues == ("short: the judge finds it long",)
    assert s.judge_reasoning == "it rambles"
    assert ev.disagreements == (s,)


def test_a_judge_shadow_that_agrees_is_recorded_as_agreeing(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"short": True, "tone": True}))
    ev = grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.accepted is True and ev.shadows[0].agree is True and ev.disagreements == ()


def test_a_judge_shadow_cannot_pass_a_failing_code_key(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"short": True, "tone": True}))
    ev = grade(
        "one two three four five six seven", rubric(reg, SHORT, TONE), judge=judge, registry=reg
    )
    assert ev.accepted is False and ev.failed_keys == ("short",)
    assert ev.shadows[0].agree is False


def test_a_checker_shadow_that_disagrees_leaves_the_judge_verdict(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"tone": True}))
    ev = grade(THREE_WORDS, rubric(reg, TONE_SHADOWED), judge=judge, registry=reg)
    assert ev.accepted is True and judge.seen[0]["keys"] == ["tone"]
    (s,) = ev.shadows
    assert (s.primary.source, s.shadow.source, s.shadow.filled_by) == (
        "judge",
        "code",
        "word_limit",
    )
    assert (s.agree, s.shadow.issues) == (False, ("3 words > 2",))


def test_a_checker_shadow_that_agrees(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"tone": True}))
    ev = grade("one two", rubric(reg, TONE_SHADOWED), judge=judge, registry=reg)
    assert ev.accepted is True and ev.shadows[0].agree is True


def test_the_judges_own_false_survives_when_its_shadow_keys_pass(reg: Registry) -> None:
    # the judge says "not passed" while every key it was asked is met: that False is
    # about something else, never explained by the shadow, so it stands
    judge = FakeJudge(verdict(False, {"short": True, "tone": True}, issues=["vague"]))
    ev = grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.accepted is False and "vague" in ev.issues


def test_a_false_own_key_still_fails_when_the_shadow_also_failed(reg: Registry) -> None:
    judge = FakeJudge(
        verdict(False, {"short": False, "tone": False}, issues=["short: long", "tone: rude"])
    )
    ev = grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.accepted is False and ev.failed_keys == ("tone",)
    assert ev.issues == ["tone: rude"]


def test_split_verdict_moves_shadow_issues_by_their_key() -> None:
    v = verdict(
        False,
        {"len": False, "len-max": True},
        issues=["len: long", "len-max: ok?", "- `len` again", "general"],
    )
    own, moved = split_verdict(v, ["len-max"], ["len"])
    assert own.issues == ["len-max: ok?", "general"]
    assert moved == {"len": ("len: long", "- `len` again")}
    assert own.criteria_met == {"len-max": True} and own.passed is True
    assert issues_about(["len-max: x", "len: y"], "len") == ("len: y",)


def test_a_scored_shadow_records_the_judges_score(reg: Registry) -> None:
    r = rubric(
        reg,
        {
            "key": "q",
            "description": "Quality.",
            "checker": "quality",
            "scale": "score",
            "threshold": 5,
            "shadow": "judge",
        },
    )
    judge = FakeJudge(verdict(True, {}, scores={"q": 9}))
    ev = grade("one two three", r, judge=judge, registry=reg)
    s = ev.shadows[0]
    assert ev.accepted is False  # the checker scored 3 < 5, whatever the judge thinks
    assert (s.primary.score, s.shadow.score, s.agree) == (3.0, 9.0, False)


# -- failures and skips are recorded, never raised ----------------------------------------


def test_a_shadow_checker_that_raises_is_a_failed_shadow(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"tone": True}))
    ev = grade(THREE_WORDS, rubric(reg, {**TONE, "shadow": "explode"}), judge=judge, registry=reg)
    assert ev.accepted is True
    (s,) = ev.shadows
    assert (s.status, s.agree, s.shadow.passed) == ("failed", None, None)
    assert s.error == "shadow checker 'explode' raised RuntimeError: shadow bug"


def test_a_primary_checker_that_raises_is_still_a_failed_criterion(reg: Registry) -> None:
    ev = grade(
        THREE_WORDS,
        rubric(reg, {"key": "k", "description": "d", "checker": "explode"}),
        registry=reg,
    )
    assert ev.accepted is False and ev.failed_keys == ("k",)


def test_a_judge_asked_only_for_shadows_that_fails_is_a_failed_shadow(reg: Registry) -> None:
    judge = FakeJudge(JudgeError("refused", reason="refusal"))
    ev = grade(THREE_WORDS, rubric(reg, SHORT), judge=judge, registry=reg)
    assert ev.accepted is True and ev.judge_called is True
    assert ev.shadows[0].status == "failed"
    assert ev.shadows[0].error == "refusal: refused"


def test_a_judge_that_fails_on_its_own_keys_still_raises(reg: Registry) -> None:
    judge = FakeJudge(JudgeError("refused", reason="refusal"))
    with pytest.raises(JudgeError, match="refused"):
        grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)


def test_a_judge_that_omits_the_shadow_key_fails_the_shadow_only(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"tone": True}))
    ev = grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    assert ev.accepted is True
    assert ev.shadows[0].status == "failed"
    assert ev.shadows[0].error == "the judge gave no verdict on 'short'"


def test_without_a_judge_a_judge_shadow_is_skipped_not_required(reg: Registry) -> None:
    ev = grade(THREE_WORDS, rubric(reg, SHORT), registry=reg)
    assert ev.accepted is True and ev.judge_called is False
    assert ev.shadows[0].status == "skipped"
    with pytest.raises(JudgeRequiredError):  # a judge key still needs its judge
        grade(THREE_WORDS, rubric(reg, SHORT, TONE), registry=reg)


def test_code_only_grading_skips_both_judge_sides(reg: Registry) -> None:
    judge = FakeJudge()
    ev = grade(
        THREE_WORDS, rubric(reg, SHORT, TONE_SHADOWED), judge=judge, skip_judge=True, registry=reg
    )
    assert judge.seen == []
    assert [(s.key, s.status) for s in ev.shadows] == [("short", "skipped"), ("tone", "skipped")]
    assert ev.shadows[1].shadow.passed is False  # the checker shadow still answered


# -- recorded in the evaluation and the history -----------------------------------------


def test_shadows_ride_on_the_evaluation_json_only_when_present(reg: Registry) -> None:
    judge = FakeJudge(verdict(True, {"short": False, "tone": True}))
    ev = grade(THREE_WORDS, rubric(reg, SHORT, TONE), judge=judge, registry=reg)
    data = ev.with_ids("out_1").to_json()
    assert data["shadows"][0]["output_id"] == "out_1"
    assert data["shadows"][0]["agree"] is False
    plain = grade(THREE_WORDS, rubric(reg, {**SHORT, "shadow": None}), registry=reg)
    assert "shadows" not in plain.to_json()


def test_run_loop_stores_every_shadow_outcome_with_its_output_id(
    reg: Registry, tmp_path: Path
) -> None:
    judge = FakeJudge(
        verdict(False, {"short": False, "tone": False}, issues=["tone: rude"]),
        verdict(True, {"short": True, "tone": True}),
    )
    with HistoryStore(tmp_path / "h.db") as store:
        result = run_loop(
            "t",
            rubric(reg, SHORT, TONE),
            generator=FakeGenerator(["a b", "c d"]),
            judge=judge,
            store=store,
            registry=reg,
        )
        stored = store.shadow_results(loop_id=result.loop_id)
        disagreements = store.shadow_results(disagreements_only=True)
        records = store.iterations(result.loop_id)
    assert result.passed is True
    assert [s.output_id for s in stored] == [it.output_id for it in result.history]
    assert [s.agree for s in stored] == [False, True]
    assert [d.output_id for d in disagreements] == [result.history[0].output_id]
    assert disagreements[0].shadow.issues == ()  # the judge named no issue for 'short'
    assert records[0]["evaluation"]["shadows"][0]["agree"] is False


def test_a_reused_verdict_does_not_store_its_shadows_twice(reg: Registry, tmp_path: Path) -> None:
    judge = FakeJudge(
        verdict(False, {"short": True, "tone": False}, issues=["tone: rude"]),
        verdict(False, {"short": True, "tone": False}, issues=["tone: rude"]),
    )
    with HistoryStore(tmp_path / "h.db") as store:
        result = run_loop(
            "t",
            rubric(reg, SHORT, TONE),
            generator=FakeGenerator(["same"]),
            judge=judge,
            store=store,
            registry=reg,
            max_rounds=2,
            similarity=None,
            stagnation_rounds=0,
        )
        stored = store.shadow_results()
    assert result.history[1].reused_from == result.history[0].output_id
    assert len(stored) == 1


def test_a_version_1_history_file_is_migrated_keeping_its_loops(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO loops (loop_id, started_at, task, rubric_json, config_json,"
        " writer_host, writer_pid) VALUES ('loop-1', 1, 't', '{}', '{}', 'h', 1)"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with HistoryStore(db) as store:
        assert [s.loop_id for s in store.list_loops()] == ["loop-1"]
        assert store.shadow_results() == [] and store.calibration_runs() == []
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 2
    conn.close()


def test_the_graph_engine_stores_shadow_outcomes_too(reg: Registry, tmp_path: Path) -> None:
    from gradeloop.graph import build_graph

    judge = FakeJudge(verdict(True, {"short": False, "tone": True}))
    with HistoryStore(tmp_path / "h.db") as store:
        graph = build_graph(
            rubric(reg, SHORT, TONE),
            generator=FakeGenerator(["a b"]),
            judge=judge,
            store=store,
            registry=reg,
        )
        final = graph.invoke({"task": "t"})
        stored = store.shadow_results()
    assert final["passed"] is True
    assert [(s.key, s.agree) for s in stored] == [("short", False)]


def test_tool_driven_loops_store_shadow_outcomes_too(reg: Registry, tmp_path: Path) -> None:
    from gradeloop.tools import ToolRunner

    judge = FakeJudge(verdict(True, {"short": False, "tone": True}))
    with HistoryStore(tmp_path / "h.db") as store:
        runner = ToolRunner(FakeGenerator(["a b"]), judge, store, registry=reg)
        criteria = [SHORT, TONE]
        made = runner.call("generate_initial_output", {"task": "t", "criteria": criteria})
        judged = runner.call("evaluate_output", {"output": made["content"], "criteria": criteria})
        stored = store.shadow_results()
    assert judged["passed"] is True, judged
    assert [(s.output_id, s.agree) for s in stored] == [(made["output_id"], False)]
