"""grade()'s per-draft objects built the fast way are the objects the slow way builds.

Grading builds a CheckContext, a CheckResult per key, a Verdict and an Evaluation for
every draft; each is built without its class's generic constructor (no re-validation,
no field-by-field frozen ``__init__``). These tests hold each to what the generic
constructor gives, field by field, and pin the call and gate changes that came with
them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from gradeloop import CheckResult, Transcript, Verdict, accepted, grade
from gradeloop.grading import CheckContext, Registry, _grade, _results
from gradeloop.grading._checks import CheckerFailure, call_checker
from gradeloop.grading._context import make_context
from gradeloop.grading._verdict import built_verdict

keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
texts = st.text(max_size=20)


# -- Verdict --------------------------------------------------------------------------


@given(
    reasoning=texts,
    met=st.dictionaries(keys, st.booleans(), max_size=6),
    passed=st.booleans(),
    issues=st.lists(texts, max_size=4),
    scores=st.dictionaries(keys, st.floats(allow_nan=False), max_size=4),
    feedback=st.dictionaries(keys, texts, max_size=4),
)
def test_the_built_verdict_is_the_validated_one(
    reasoning: str,
    met: dict[str, bool],
    passed: bool,
    issues: list[str],
    scores: dict[str, float],
    feedback: dict[str, str],
) -> None:
    slow = Verdict(
        reasoning=reasoning,
        criteria_met=met,
        passed=passed,
        issues=issues,
        scores=scores,
        feedback=feedback,
    )
    fast = built_verdict(reasoning, dict(met), passed, list(issues), dict(scores), dict(feedback))
    assert fast == slow and repr(fast) == repr(slow)
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump_json() == slow.model_dump_json()
    # every slot pydantic keeps on an instance is set, as the validated one sets it
    for slot in BaseModel.__slots__:
        assert getattr(fast, slot) == getattr(slow, slot), slot
    # and it goes on behaving as one: assignment, copies
    fast.passed = not passed
    slow.passed = not passed
    assert fast == slow and fast.model_copy() == slow.model_copy()


def test_the_built_verdict_owns_fresh_field_sets() -> None:
    a = built_verdict("r", {}, True, [], {}, {})
    b = built_verdict("r", {}, True, [], {}, {})
    assert a.__pydantic_fields_set__ is not b.__pydantic_fields_set__
    assert a.__pydantic_fields_set__ == set(Verdict.model_fields)


# -- Evaluation -------------------------------------------------------------------------


def test_the_built_evaluation_is_the_dataclass() -> None:
    verdict = built_verdict("r", {"k": True}, True, [], {}, {})
    criteria = (_results._code_result("k", 1.0, 10.0, True, "contains", (), None),)
    args = (verdict, True, criteria, 10.0, False, "out-1", (), ("call",))
    fast = _results._evaluation(*args)
    slow = _grade.Evaluation(
        verdict=verdict,
        accepted=True,
        criteria=criteria,
        overall_score=10.0,
        judge_called=False,
        output_id="out-1",
        shadows=(),
        judge_calls=("call",),
    )
    assert fast == slow and repr(fast) == repr(slow)
    # every field is set (a field added to Evaluation must be added there too)
    assert list(vars(fast)) == [f.name for f in dataclasses.fields(_grade.Evaluation)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.accepted = False  # type: ignore[misc]


def test_a_graded_evaluation_is_what_the_dataclass_would_hold() -> None:
    rubric = {"criteria": [
        {"key": "short", "description": "d", "checker": "length", "options": {"max_words": 3}},
        {"key": "hi", "description": "d", "checker": "contains", "options": {"values": ["hi"]}},
    ]}  # fmt: skip
    ev = grade("hi there, a long greeting", rubric)
    rebuilt = _grade.Evaluation(**{f.name: getattr(ev, f.name) for f in dataclasses.fields(ev)})
    assert ev == rebuilt and ev.to_json() == rebuilt.to_json()
    assert ev.verdict == Verdict.model_validate(ev.verdict.model_dump())
    assert ev.accepted is False and ev.failed_keys == ("short",)


# -- a code key met with nothing to say ---------------------------------------------------

SHARED_RUBRIC = {"criteria": [
    {"key": "hi", "description": "says hi", "checker": "contains", "options": {"values": ["hi"]},
     "weight": 2.0},
    {"key": "sc", "description": "d", "checker": "length", "options": {"max_words": 3},
     "scale": "score", "threshold": 7},
]}  # fmt: skip


def test_a_met_key_shares_one_result_equal_to_a_fresh_one() -> None:
    from gradeloop import Rubric

    rubric = Rubric.from_dict(SHARED_RUBRIC)
    first, second = grade("hi", rubric), grade("oh hi", rubric)
    for key in ("hi", "sc"):
        shared = first[key]
        assert second[key] is shared  # built once per rubric and key
        fresh = _grade.CriterionResult(
            key, rubric[key].weight, 10.0, True, "code", rubric[key].checker or "", ()
        )
        assert shared == fresh and repr(shared) == repr(fresh)
        assert vars(shared) == vars(fresh)
        with pytest.raises(dataclasses.FrozenInstanceError):
            shared.passed = False  # type: ignore[misc]
    # a draft that fails the key gets its own result, with its issue
    failed = grade("hello there", rubric)["hi"]
    assert failed.passed is False and failed.issues and failed is not first["hi"]
    assert grade("hi", rubric)["hi"] is first["hi"]  # and the shared one is unchanged


def test_each_rubric_keeps_its_own_met_results() -> None:
    # the same key in another rubric, with another weight: never the first one's result
    other = {"criteria": [dict(SHARED_RUBRIC["criteria"][0], weight=5.0)]}
    a, b = grade("hi", SHARED_RUBRIC), grade("hi", other)
    assert a["hi"].weight == 2.0 and b["hi"].weight == 5.0


def test_a_met_result_names_the_checker_that_filled_it() -> None:
    from gradeloop import Rubric

    rubric = Rubric.from_dict(SHARED_RUBRIC)
    grade("hi", rubric)
    rubric._met["hi"] = dataclasses.replace(rubric._met["hi"], filled_by="another")
    assert grade("hi", rubric)["hi"].filled_by == "contains"  # rebuilt, not trusted


def test_a_met_key_with_its_own_score_is_not_shared() -> None:
    from gradeloop import Rubric

    def scored(text: str) -> CheckResult:
        return CheckResult(True, [], float(len(text) % 3 + 8))

    reg = Registry(autoload=False)
    reg.add("scored", scored)
    rubric = Rubric.from_dict({"criteria": [
        {"key": "s", "description": "d", "checker": "scored", "scale": "score", "threshold": 7},
        {"key": "p", "description": "d", "checker": "scored"},  # pass/fail: the score is 10
    ]}, registry=reg)  # fmt: skip
    graded = [grade(t, rubric, registry=reg) for t in ("a", "ab", "abc")]
    assert [e["s"].score for e in graded] == [9.0, 10.0, 8.0]
    assert [e["p"].score for e in graded] == [10.0, 10.0, 10.0]
    assert graded[0]["p"] is graded[2]["p"]


# -- CheckContext -------------------------------------------------------------------------

CALLS = [
    {"role": "user", "content": "refund A1"},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "refund", "input": {"order": "A1"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    {"role": "assistant", "content": "Refunded."},
]  # fmt: skip


@pytest.mark.parametrize("metadata", [None, {}, {"product": "X", "n": [1, 2]}])
@pytest.mark.parametrize("reference", [None, "the answer", CALLS, "read"])
def test_make_context_is_the_dataclass(metadata: dict[str, Any] | None, reference: Any) -> None:
    transcript = Transcript.from_messages(CALLS)
    if reference == "read":  # a Transcript already read: taken as it is
        reference = Transcript.from_messages(CALLS)
    fast = make_context("task", reference, metadata, transcript)
    ref_t = (
        None
        if reference is None or isinstance(reference, str)
        else reference
        if isinstance(reference, Transcript)
        else Transcript(reference)
    )
    if isinstance(reference, Transcript):
        assert fast.reference_transcript is reference
    slow = CheckContext(
        "task",
        "Refunded." if ref_t is not None else reference,
        MappingProxyType(dict(metadata or {})),
        transcript,
        ref_t,
    )
    assert fast == slow and repr(fast) == repr(slow)
    assert list(vars(fast)) == [f.name for f in dataclasses.fields(CheckContext)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.task = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        fast.metadata["product"] = "Y"  # type: ignore[index]


def test_contexts_without_metadata_share_nothing_a_checker_can_change() -> None:
    a, b = make_context(), make_context()
    assert a.metadata == b.metadata == {}
    with pytest.raises(TypeError):
        a.metadata["x"] = 1  # type: ignore[index]
    assert b.metadata == {}


# -- CheckResult ------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedResult:
    """CheckResult as the dataclass generated it before it had its own __init__."""

    passed: bool
    issues: list[str] = field(default_factory=list)
    score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.passed, bool):
            raise TypeError(f"CheckResult.passed must be a bool, not {type(self.passed).__name__}")
        if self.score is not None and not (
            isinstance(self.score, int | float)
            and math.isfinite(self.score)
            and 0 <= self.score <= 10
        ):
            raise ValueError(f"CheckResult.score must be a number from 0 to 10, not {self.score!r}")


def _outcome(cls: type, *args: Any, **kwargs: Any) -> Any:
    try:
        made = cls(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return made.passed, made.issues, made.score


ANYTHING = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(-3, 13),
    st.floats(),
    st.text(max_size=3),
    st.lists(st.text(max_size=3), max_size=2),
)


@given(passed=ANYTHING, issues=st.one_of(st.just("omit"), ANYTHING), score=ANYTHING)
def test_check_results_init_checks_what_the_generated_one_did(
    passed: Any, issues: Any, score: Any
) -> None:
    kwargs = {"passed": passed, "score": score} | ({} if issues == "omit" else {"issues": issues})
    # the same fields, or the same exception with the same message
    assert _outcome(CheckResult, **kwargs) == _outcome(GeneratedResult, **kwargs)


def test_a_check_result_is_still_a_dataclass() -> None:
    a, b = CheckResult(True), CheckResult(True)
    a.issues.append("mine")
    assert b.issues == [] and CheckResult(False).issues == []  # no shared default list
    assert [f.name for f in dataclasses.fields(CheckResult)] == ["passed", "issues", "score"]
    assert dataclasses.replace(a, score=4.0) == CheckResult(True, ["mine"], 4.0)
    assert CheckResult(passed=False, issues=["x"], score=2) == CheckResult(False, ["x"], 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.passed = False  # type: ignore[misc]
    assert vars(CheckResult(True)) == {"passed": True, "issues": [], "score": None}


def test_a_dataclass_subclass_still_checks_its_fields() -> None:
    @dataclass(frozen=True)
    class Noted(CheckResult):
        note: str = ""

    assert Noted(True, [], None, "n").note == "n"
    with pytest.raises(TypeError, match="must be a bool"):
        Noted(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="from 0 to 10"):
        Noted(True, [], 11.0)
    with pytest.raises(TypeError, match="must be a bool"):
        CheckerFailure(passed="no")  # type: ignore[arg-type]


# -- call_checker -----------------------------------------------------------------------


def test_a_kwargs_checker_given_a_context_option_gets_the_real_context() -> None:
    seen: dict[str, Any] = {}

    def loose(text: str, *, context: CheckContext | None = None, **options: Any) -> bool:
        seen["context"], seen["options"] = context, options
        return True

    reg = Registry(autoload=False)
    reg.add("loose", loose)
    info = reg.info("loose")
    context = make_context("task")
    result = call_checker(info, "draft", {"context": "from the rubric", "n": 1}, context)
    assert result == CheckResult(True)
    assert seen == {"context": context, "options": {"n": 1}}
    # and without such an option, the context is passed beside the options
    call_checker(info, "draft", {"n": 2}, None)
    assert seen["context"] == CheckContext() and seen["options"] == {"n": 2}


# -- accepted ---------------------------------------------------------------------------


def _accepted_as_written_before(verdict: Verdict, keys: list[str]) -> bool:
    met = verdict.criteria_met
    return bool(
        verdict.passed is True
        and all(key in met for key in keys)
        and all(value is True for value in met.values())
    )


@given(
    met=st.dictionaries(keys, st.booleans(), max_size=6),
    asked=st.lists(keys, max_size=6),
    passed=st.booleans(),
    as_generator=st.booleans(),
)
def test_the_gate_answers_as_before(
    met: dict[str, bool], asked: list[str], passed: bool, as_generator: bool
) -> None:
    verdict = Verdict(reasoning="r", criteria_met=met, passed=passed, issues=[])
    want = _accepted_as_written_before(verdict, asked)
    given_keys = (k for k in asked) if as_generator else asked
    assert accepted(verdict, given_keys) is want
    # every key asked and met, with passed True: the only way through
    assert accepted(verdict, list(met)) is (passed and all(met.values()))


def test_the_gate_refuses_truthy_values_that_are_not_true() -> None:
    verdict = built_verdict("r", {"k": 1}, True, [], {}, {})  # type: ignore[dict-item]
    assert accepted(verdict, ["k"]) is False


def test_shadows_are_kept_and_carry_the_output_id_when_one_is_given() -> None:
    from gradeloop import grade_many

    rubric = {"criteria": [{
        "key": "hi", "description": "d", "checker": "contains", "options": {"values": ["hi"]},
        "shadow": "regex", "shadow_options": {"pattern": "h."},
    }]}  # fmt: skip
    [alone] = grade("hi", rubric).shadows
    assert alone.key == "hi" and alone.output_id == ""
    batch = grade_many(["hi", "ho"], rubric, skip_judge=True)
    assert [[s.output_id for s in e.shadows] for e in batch] == [[e.output_id] for e in batch]
    assert all(e.output_id for e in batch)


# -- a draft that met every key: the kept evaluation, handed out again ------------------

ALL_MET_TEXT = "hi there"


@st.composite
def code_rubrics(draw: st.DrawFn) -> dict[str, Any]:
    """Code-only rubrics whose keys all pass on ALL_MET_TEXT (weights, scales, pass_score)."""
    n = draw(st.integers(1, 5))
    criteria = []
    for i in range(n):
        c: dict[str, Any] = {
            "key": f"k{i}",
            "description": "d",
            "checker": draw(st.sampled_from(["contains", "length"])),
            "weight": draw(st.sampled_from([0.1, 0.2, 0.3, 1.0, 2.5, 7.0])),
        }
        c["options"] = {"values": ["hi"]} if c["checker"] == "contains" else {"max_words": 9}
        if draw(st.booleans()):
            c["scale"], c["threshold"] = "score", draw(st.sampled_from([1, 7, 10]))
        criteria.append(c)
    rubric: dict[str, Any] = {"criteria": criteria}
    pass_score = draw(st.none() | st.sampled_from([0, 9.5, 10]))
    if pass_score is not None:
        rubric["pass_score"] = pass_score
    return rubric


def _eager(ev: _grade.Evaluation) -> tuple[Any, ...]:
    return tuple(getattr(ev, f.name) for f in dataclasses.fields(ev))


@given(data=code_rubrics(), output_id=st.sampled_from(["", "out-7"]))
def test_the_kept_evaluation_is_what_merge_makes(data: dict[str, Any], output_id: str) -> None:
    from gradeloop import Rubric

    rubric = Rubric.from_dict(data)
    first = grade(ALL_MET_TEXT, rubric)
    assert rubric._all_met is not None  # kept from the first such draft
    plan = _grade.start_plan(
        ALL_MET_TEXT, rubric, task="", judge=None, skip_judge=False, registry=None
    )
    _grade.run_checks(plan)
    again = _grade.finish_grade(plan, None, ("call",), output_id=output_id)
    made = _grade.merge(rubric, plan.results, None, judge_called=False, judge_calls=("call",),
                        output_id=output_id)  # fmt: skip
    assert "_verdict_from" in vars(again)  # handed out, not merged again
    assert again == made and repr(again) == repr(made) and again.to_json() == made.to_json()
    assert _eager(again) == _eager(made)
    assert vars(again.verdict) == vars(made.verdict)
    assert again.verdict.model_fields_set == made.verdict.model_fields_set
    assert first == dataclasses.replace(made, output_id="", judge_calls=())


def test_a_kept_evaluations_verdict_is_its_own() -> None:
    rubric = _kept_rubric()
    a, b = grade(ALL_MET_TEXT, rubric), grade(ALL_MET_TEXT, rubric)
    a.verdict.issues.append("mine")
    a.verdict.criteria_met["extra"] = False
    a.verdict.scores["x"] = 1.0
    a.verdict.feedback["x"] = "y"
    assert b.verdict.issues == [] and "extra" not in b.verdict.criteria_met
    assert b.verdict.scores == {} and b.verdict.feedback == {}
    c = grade(ALL_MET_TEXT, rubric)
    assert c.verdict == b.verdict and c.verdict is not b.verdict
    assert a.verdict is a.verdict  # made once, then the instance's own


def test_a_kept_evaluation_copies_pickles_and_replaces_as_an_eager_one() -> None:
    import copy
    import pickle

    rubric = _kept_rubric()
    eager = grade(ALL_MET_TEXT, _kept_rubric(warm=False))
    assert "_verdict_from" not in vars(eager)
    for make in (
        lambda ev: pickle.loads(pickle.dumps(ev)),
        copy.copy,
        copy.deepcopy,
        lambda ev: dataclasses.replace(ev, output_id=""),
    ):
        ev = make(grade(ALL_MET_TEXT, rubric))
        assert "_verdict_from" not in vars(ev)
        assert set(vars(ev)) == {f.name for f in dataclasses.fields(ev)}
        assert ev == eager
    assert dataclasses.asdict(grade(ALL_MET_TEXT, rubric)) == dataclasses.asdict(eager)


def test_threads_reading_a_kept_evaluations_verdict_at_once_get_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading
    import time

    rubric = _kept_rubric()
    make = _grade.EveryKeyMet.verdict

    def slowly(self: _grade.EveryKeyMet) -> Verdict:
        time.sleep(0.05)  # every reader is inside at once
        return make(self)

    monkeypatch.setattr(_grade.EveryKeyMet, "verdict", slowly)
    ev = grade(ALL_MET_TEXT, rubric)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(ev.verdict)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(v is ev.verdict for v in seen)


def test_a_draft_that_fails_a_key_is_merged_not_handed_out() -> None:
    rubric = _kept_rubric()
    failed = grade("hello, a greeting with far too many words in it", rubric)
    assert "_verdict_from" not in vars(failed) and failed.accepted is False
    assert set(failed.failed_keys) == {"hi", "short"}
    assert grade(ALL_MET_TEXT, rubric).accepted is True


def test_the_kept_evaluation_is_made_only_from_a_draft_that_met_every_key() -> None:
    rubric = _kept_rubric(warm=False)
    grade("no greeting", rubric)
    assert rubric._all_met is None
    grade(ALL_MET_TEXT, rubric)
    assert rubric._all_met is not None


def _kept_rubric(*, warm: bool = True) -> Any:
    from gradeloop import Rubric

    rubric = Rubric.from_dict({"criteria": [
        {"key": "hi", "description": "d", "checker": "contains", "options": {"values": ["hi"]}},
        {"key": "short", "description": "d", "checker": "length", "options": {"max_words": 5}},
    ]})  # fmt: skip
    if warm:
        grade(ALL_MET_TEXT, rubric)
    return rubric


# -- CheckResult.PASSED -----------------------------------------------------------------


def test_passed_is_a_pass_with_nothing_to_say_that_cannot_change() -> None:
    import copy
    import json
    import pickle

    shared = CheckResult.PASSED
    assert shared == CheckResult(True) and shared.issues == [] and shared.score is None
    assert isinstance(shared.issues, list) and json.dumps(shared.issues) == "[]"
    joined = shared.issues + ["x"]  # noqa: RUF005  (what a caller adding an issue writes)
    assert joined == ["x"] and type(joined) is list
    changes = [
        lambda i: i.append("x"),
        lambda i: i.extend(["x"]),
        lambda i: i.insert(0, "x"),
        lambda i: i.pop(),
        lambda i: i.remove("x"),
        lambda i: i.clear(),
        lambda i: i.sort(),
        lambda i: i.reverse(),
        lambda i: i.__setitem__(slice(0, 0), ["x"]),
        lambda i: i.__delitem__(slice(0, 1)),
        lambda i: i.__iadd__(["x"]),
        lambda i: i.__imul__(2),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="cannot change"):
            change(shared.issues)
    assert shared.issues == [] and CheckResult(True).issues == []
    for copied in (pickle.loads(pickle.dumps(shared)), copy.deepcopy(shared)):
        assert copied == shared


def test_a_checker_returning_passed_meets_its_key_on_every_road() -> None:
    from gradeloop import Rubric

    def plain(text: str) -> CheckResult:
        return CheckResult.PASSED

    def with_context(text: str, *, context: CheckContext) -> CheckResult:
        return CheckResult.PASSED

    reg = Registry()
    reg.add("plain", plain)
    reg.add("with_context", with_context)
    rubric = Rubric.from_dict({"criteria": [
        {"key": "a", "description": "d", "checker": "plain"},
        {"key": "b", "description": "d", "checker": "with_context"},
        {"key": "c", "description": "d", "checker": "contains", "options": {"values": ["hi"]}},
    ]}, registry=reg)  # fmt: skip
    for _ in range(2):  # the first grade keeps the rubric's shared results, the second uses them
        ev = grade("hi", rubric, registry=reg)
        assert ev.accepted is True and ev["a"].issues == () and ev["c"].status == "met"
    info = reg.info("plain")
    assert call_checker(info, "x", {}) is CheckResult.PASSED
    # gradeloop's own checkers return it for a pass
    from gradeloop_checkers.text import contains

    assert contains("hi", values=["hi"]) is CheckResult.PASSED
    assert contains("ho", values=["hi"]).passed is False


# -- check_keys' written-out call is call_checker's -------------------------------------


class _SubResult(CheckResult):
    """A subclass that skipped CheckResult's checks (its fields are set raw)."""

    def __init__(self, passed: Any, issues: Any, score: Any) -> None:
        object.__setattr__(self, "__dict__", {"passed": passed, "issues": issues, "score": score})


RETURNS: list[Any] = [
    True,
    False,
    CheckResult.PASSED,
    CheckResult(True),
    CheckResult(False),
    CheckResult(True, ["said"]),
    CheckResult(False, ["why", "and why"]),
    CheckResult(True, [], 4.0),
    CheckerFailure(False, ["broke"]),
    _SubResult(1, [], None),
    _SubResult(True, ("a tuple",), None),
    _SubResult(True, [3], None),
    _SubResult(True, [], 11),
    None,
    "yes",
    ValueError("it raised"),
]


@given(
    answers=st.lists(st.sampled_from(range(len(RETURNS))), min_size=1, max_size=4),
    with_context=st.booleans(),
    scored=st.booleans(),
    context_option=st.booleans(),
)
def test_gradeloops_own_checkers_are_settled_as_call_checker_settles_any(
    answers: list[int], with_context: bool, scored: bool, context_option: bool
) -> None:
    # the same functions registered twice: as gradeloop's own (run in check_keys' loop)
    # and as a plugin's (through call_checker, watched): every answer grades the same
    from gradeloop import Rubric

    def make(i: int) -> Any:
        def answer(text: str, **_: Any) -> Any:
            value = RETURNS[i]
            if isinstance(value, Exception):
                raise value
            return value

        def answer_with_context(text: str, *, context: CheckContext, **_: Any) -> Any:
            assert isinstance(context, CheckContext)  # the real one, never an option
            return answer(text)

        fn = answer_with_context if with_context else answer
        fn.__module__ = "gradeloop_checkers.fake"
        return fn

    own, plugin = Registry(autoload=False), Registry(autoload=False)
    for n, i in enumerate(answers):
        own._add(f"c{n}", make(i), "builtin", "gradeloop", None)
        plugin._add(f"c{n}", make(i), "someone", "someone-else", None)
    assert all(own.info(f"c{n}").bounded for n in range(len(answers)))
    assert not any(plugin.info(f"c{n}").bounded for n in range(len(answers)))
    criteria: list[dict[str, Any]] = []
    for n in range(len(answers)):
        c: dict[str, Any] = {"key": f"k{n}", "description": "d", "checker": f"c{n}"}
        if scored and n % 2 == 0:  # a key on the 1-10 scale: the checker's score decides
            c |= {"scale": "score", "threshold": 7}
        if context_option:  # a **kwargs checker given a `context` option
            c["options"] = {"context": "an option"}
        criteria.append(c)
    data = {"criteria": criteria}
    a, b = Rubric.from_dict(data, registry=own), Rubric.from_dict(data, registry=plugin)
    for _ in range(2):  # the second time with the shared results kept
        inline, called = grade("x", a, registry=own), grade("x", b, registry=plugin)
        assert inline.to_json() == called.to_json()
        assert inline == called


def test_a_graded_rubric_still_pickles_and_copies() -> None:
    # what grading keeps on a rubric (its checkers, looked up in a registry that cannot
    # be pickled) stays behind: the copy grades as the original, looking them up anew
    import copy
    import pickle

    rubric = _kept_rubric()
    before = grade(ALL_MET_TEXT, rubric)
    for other in (pickle.loads(pickle.dumps(rubric)), copy.deepcopy(rubric), copy.copy(rubric)):
        assert other._resolved is None and other._all_met is None and other._met == {}
        assert other.keys == rubric.keys and other.to_dict() == rubric.to_dict()
        assert grade(ALL_MET_TEXT, other) == before
        assert grade("no", other).failed_keys == grade("no", rubric).failed_keys
    assert rubric._resolved is not None  # the original keeps its own
