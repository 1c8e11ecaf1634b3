"""The trajectory checkers: behaviour, load-time option checks, text drafts, hostile input."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import CheckResult, Rubric, RubricError, Transcript, grade
from gradeloop.grading import CheckContext, ToolCall
from gradeloop.grading._context import make_context
from gradeloop_checkers.trajectory import (
    CHECKERS,
    WORK_LIMIT,
    Want,
    match_strict,
    match_subset,
    match_superset,
    match_unordered,
)
from gradeloop_checkers.trajectory._args import canon, covers, same
from gradeloop_checkers.trajectory._checks import (
    step_count,
    tool_args_match,
    tool_called,
    tool_not_called,
    tool_sequence,
)
from gradeloop_checkers.trajectory._pair import pair
from gradeloop_checkers.trajectory._read import NO_CALLS


def agent(*steps: Any, final: str = "Done.") -> Transcript:
    """A transcript: each step is (name, args) or a list of them (parallel calls)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "help"}]
    n = 0
    for step in steps:
        group = step if isinstance(step, list) else [step]
        calls = []
        for name, args in group:
            calls.append(
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            )
            n += 1
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    messages.append({"role": "assistant", "content": final})
    return Transcript.from_messages(messages)


def ctx(t: Transcript | None, reference: Any = None) -> CheckContext:
    return make_context("task", reference, None, t)


def ok(said: CheckResult | bool) -> bool:
    """Whether a trajectory checker passed the draft: a pass is the bare ``True``, a
    failure a ``CheckResult(False, issues)`` (anything else breaks the contract)."""
    if said is True:
        return True
    assert isinstance(said, CheckResult) and said.passed is False and said.issues, said
    return False


def load(checker: str, options: dict[str, Any]) -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "d", "checker": checker, "options": options}]}
    )


SUPPORT = agent(
    ("lookup_order", {"id": "A1"}),
    ("refund", {"id": "A1", "amount": 20, "reason": {"code": "late", "note": "sorry"}}),
)


# -- every checker: a text draft fails, never passes ------------------------------------

OPTIONS = {
    "tool_called": {"name": "lookup_order"},
    "tool_not_called": {"names": ["delete_account"]},
    "tool_sequence": {"expected": [{"name": "lookup_order"}], "mode": "superset"},
    "tool_args_match": {"name": "refund", "args": {"id": "A1"}, "match": "subset"},
    "step_count": {"max": 10},
}


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_on_a_text_draft_every_trajectory_checker_fails_saying_there_are_no_calls(
    name: str,
) -> None:
    fn = CHECKERS[name]
    for context in (None, ctx(None)):
        result = fn("I refunded order A1.", **OPTIONS[name], context=context)
        assert (result.passed, result.issues) == (False, [NO_CALLS])
    passing = fn("ignored", **OPTIONS[name], context=ctx(SUPPORT))  # the twin: it can pass
    assert ok(passing), passing


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_through_grade_a_text_draft_fails_and_a_transcript_passes(name: str) -> None:
    rubric = load(name, OPTIONS[name])
    text = grade("I refunded order A1.", rubric)
    assert not text.accepted and text["k"].issues == (NO_CALLS,)
    assert text["k"].status == "failed"  # the draft's fault, not the checker's
    assert grade(SUPPORT, rubric).accepted


# -- tool_called, tool_not_called, tool_args_match, step_count -------------------------


def test_tool_called_counts_calls_between_min_and_max() -> None:
    c = ctx(agent(("search", {}), ("search", {}), ("buy", {})))
    assert ok(tool_called("", name="search", context=c))
    assert ok(tool_called("", name="search", min=2, max=2, context=c))
    never = tool_called("", name="refund", context=c)
    assert never.issues == ["'refund' was called never; call it at least once"]
    too_many = tool_called("", name="search", max=1, context=c)
    assert too_many.issues == ["'search' was called 2 times (messages 1, 3); at most 1 allowed"]
    assert not ok(tool_called("", name="search", min=3, context=c))


def test_tool_not_called_names_each_forbidden_call() -> None:
    c = ctx(agent(("search", {"q": "x"}), ("delete_account", {"user": 7})))
    result = tool_not_called("", names=("delete_account", "drop"), context=c)
    assert result.issues == [
        "forbidden tool 'delete_account' was called: delete_account({\"user\":7}) (message 3)"
    ]
    assert ok(tool_not_called("", names=("drop",), context=c))


def test_tool_args_match_exact_and_subset_with_nested_values() -> None:
    c = ctx(SUPPORT)
    exact = {"id": "A1", "amount": 20, "reason": {"code": "late", "note": "sorry"}}
    assert ok(tool_args_match("", name="refund", args=exact, context=c))
    assert not ok(tool_args_match("", name="refund", args={"id": "A1"}, context=c))
    nested = {"id": "A1", "reason": {"code": "late"}}
    assert ok(tool_args_match("", name="refund", args=nested, match="subset", context=c))
    wrong = tool_args_match("", name="refund", args={"amount": 200}, match="subset", context=c)
    assert not ok(wrong)
    assert wrong.issues[0].startswith(
        "no call of 'refund' has these arguments (and maybe more): {\"amount\":200}; its calls: "
        'refund({"id":"A1","amount":20,'
    )
    assert tool_args_match("", name="nope", args={}, context=c).issues == [
        "'nope' was never called"
    ]


def test_step_count_counts_assistant_messages() -> None:
    c = ctx(SUPPORT)  # two calling messages and the final answer
    assert ok(step_count("", max=3, context=c))
    assert ok(step_count("", min=3, max=3, context=c))
    assert step_count("", max=2, context=c).issues == [
        "the agent took 3 steps (assistant messages); at most 2 allowed"
    ]
    assert not ok(step_count("", min=4, context=c))


# -- tool_sequence -----------------------------------------------------------------------

LOOKUP = {"name": "lookup_order", "args": {"id": "A1"}}
REFUND = {"name": "refund", "args": {"id": "A1"}}


def seq(t: Transcript, expected: Any = None, reference: Any = None, **options: Any) -> Any:
    return tool_sequence("", expected=expected, context=ctx(t, reference), **options)


def test_strict_wants_the_same_calls_in_the_same_order() -> None:
    assert ok(seq(SUPPORT, [LOOKUP, REFUND], args="superset"))
    swapped = seq(SUPPORT, [REFUND, LOOKUP], args="superset")
    assert swapped.issues == [
        'call 1 is lookup_order({"id":"A1"}) (message 1); expected refund({"id":"A1"})'
    ]
    assert swapped.score == 0.0
    short = seq(SUPPORT, [LOOKUP], args="superset")
    assert short.issues[0].startswith("call 2, refund(")
    assert short.issues[0].endswith("was not expected: the expected list ends after 1 call")
    long = seq(SUPPORT, [LOOKUP, REFUND, LOOKUP], args="superset")
    assert long.issues == [
        'expected call 3, lookup_order({"id":"A1"}), was never made: the agent made 2 calls'
    ]
    assert long.score == round(10 * 2 / 3, 2)


def test_strict_lets_parallel_calls_come_in_any_order_but_not_across_messages() -> None:
    parallel = agent([("weather", {"city": "SF"}), ("weather", {"city": "London"})])
    sf, london = (
        {"name": "weather", "args": {"city": "SF"}},
        {"name": "weather", "args": {"city": "London"}},
    )
    assert ok(seq(parallel, [london, sf]))
    apart = agent(("weather", {"city": "SF"}), ("weather", {"city": "London"}))
    assert ok(seq(apart, [sf, london]))
    assert not ok(seq(apart, [london, sf]))
    wrong = seq(parallel, [london, {"name": "weather", "args": {"city": "Paris"}}])
    assert wrong.issues == [
        "calls 1-2 (made together in message 1: weather, weather) are not expected calls 1-2: "
        'weather({"city":"London"}), weather({"city":"Paris"})'
    ]


@pytest.mark.parametrize(
    ("mode", "expected", "passed"),
    [
        ("unordered", [REFUND, LOOKUP], True),
        ("unordered", [REFUND], False),
        ("unordered", [REFUND, LOOKUP, LOOKUP], False),
        ("subset", [REFUND, LOOKUP, {"name": "escalate"}], True),
        ("subset", [REFUND], False),
        ("superset", [REFUND], True),
        ("superset", [REFUND, {"name": "escalate"}], False),
    ],
)
def test_unordered_subset_and_superset(mode: str, expected: Any, passed: bool) -> None:
    result = seq(SUPPORT, expected, mode=mode, args="superset")
    assert ok(result) is passed, result
    assert passed or result.score < 10.0  # a pass is a bare True, read as 10


def test_issues_name_the_calls_not_expected_and_the_expected_calls_never_made() -> None:
    result = seq(SUPPORT, [{"name": "lookup_order", "args": {"id": "B2"}}], mode="unordered")
    assert result.issues == [
        'lookup_order({"id":"A1"}) (message 1) was not expected',
        'refund({"id":"A1","amount":20,"reason":{"code":"late","note":"sorry"}}) (message 3) '
        "was not expected",
        'expected call lookup_order({"id":"B2"}) was never made with matching arguments '
        "(args='exact'; lookup_order was called otherwise)",
    ]
    assert result.score == 0.0


@pytest.mark.parametrize(
    ("args", "made", "expected", "passed"),
    [
        ("ignore", {"id": "A1", "x": 1}, {"id": "B"}, True),
        ("exact", {"id": "A1"}, {"id": "A1"}, True),
        ("exact", {"id": "A1", "x": 1}, {"id": "A1"}, False),
        ("exact", {"n": 1}, {"n": 1.0}, True),  # one number
        ("exact", {"n": True}, {"n": 1}, False),  # JSON's true is not 1
        ("superset", {"id": "A1", "x": 1}, {"id": "A1"}, True),  # made more than expected
        ("superset", {"id": "A1"}, {"id": "A1", "x": 1}, False),
        ("subset", {"id": "A1"}, {"id": "A1", "x": 1}, True),  # made less than expected
        ("subset", {"id": "A1", "x": 1}, {"id": "A1"}, False),
        ("superset", {"o": {"a": 1, "b": 2}}, {"o": {"a": 1}}, True),  # nested objects
        ("superset", {"o": [{"a": 1, "b": 2}]}, {"o": [{"a": 1}]}, True),
        ("superset", {"o": [1, 2]}, {"o": [1]}, False),  # lists: element by element
    ],
)
def test_argument_modes(args: str, made: Any, expected: Any, passed: bool) -> None:
    t = agent(("f", made))
    assert ok(seq(t, [{"name": "f", "args": expected}], args=args)) is passed
    assert ok(seq(t, [{"name": "f"}], args=args))  # no args given: any arguments do


def test_expected_calls_default_to_the_reference_transcript() -> None:
    reference = agent(("lookup_order", {"id": "A1"}), ("refund", {"id": "A1"}))
    assert ok(seq(SUPPORT, reference=reference, args="superset"))
    assert not ok(seq(SUPPORT, reference=reference, args="exact"))
    assert ok(seq(SUPPORT, reference=reference.messages, args="superset"))  # as dicts
    text = seq(SUPPORT, reference="the reference answer")
    assert text.issues[0].startswith("the reference is text, with no tool calls")
    assert seq(SUPPORT).issues[0].startswith("no expected calls: list them")
    # the option wins over the reference
    assert ok(seq(SUPPORT, [LOOKUP, REFUND], reference=agent(), args="superset"))


def test_an_empty_expected_list_means_no_calls() -> None:
    assert ok(seq(agent(), []))
    assert not ok(seq(SUPPORT, []))


def test_the_pairing_is_maximum_where_first_fit_would_fail() -> None:
    # first-fit (agentevals) gives the first call to the first expected call, and then
    # the second expected call finds nothing; a maximum pairing finds both
    t = agent(("f", {"a": 1, "b": 2}), ("f", {"a": 1}))
    wants = [{"name": "f", "args": {"a": 1}}, {"name": "f", "args": {"a": 1, "b": 2}}]
    for mode in ("unordered", "superset", "subset"):
        assert ok(seq(t, wants, mode=mode, args="superset")), mode


# -- options, validated when the rubric loads ------------------------------------------


@pytest.mark.parametrize(
    ("checker", "options", "says"),
    [
        ("tool_sequence", {"mode": "fuzzy"}, "'mode'"),
        ("tool_sequence", {"args": "loose"}, "'args'"),
        ("tool_sequence", {"expected": [{"args": {}}]}, "'expected.0.name'"),
        ("tool_sequence", {"expected": [{"name": "f", "argz": {}}]}, "unknown option"),
        ("tool_sequence", {"expected": [{"name": ""}]}, "'expected.0.name'"),
        ("tool_sequence", {"expected": {"name": "f"}}, "'expected'"),
        ("tool_called", {}, "needs option 'name'"),
        ("tool_called", {"name": "f", "min": 0}, "lets every draft pass"),
        ("tool_sequence", {"mode": "superset", "expected": []}, "lets every draft pass"),
        ("tool_called", {"name": "f", "min": 3, "max": 1}, "below min"),
        ("tool_called", {"name": "f", "min": "2"}, "'min'"),
        ("tool_not_called", {"names": []}, "'names'"),
        ("tool_args_match", {"name": "f"}, "needs option 'args'"),
        ("tool_args_match", {"name": "f", "args": {}, "match": "superset"}, "'match'"),
        ("step_count", {}, "set at least one of: min, max"),
        ("step_count", {"min": 5, "max": 2}, "below min"),
    ],
)
def test_bad_options_fail_when_the_rubric_loads(checker: str, options: Any, says: str) -> None:
    with pytest.raises(RubricError) as info:
        load(checker, options)
    assert says in str(info.value) and "'k'" in str(info.value)


def test_arguments_in_a_toml_rubric_must_be_json_data(tmp_path: Any) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "tool_args_match"\n'
        'options = { name = "book", args = { day = 2025-03-22 } }\n',
        encoding="utf-8",
    )
    with pytest.raises(RubricError, match="must be JSON data"):
        Rubric.load(rubric)
    rubric.write_text(rubric.read_text().replace("2025-03-22", '"2025-03-22"'), encoding="utf-8")
    assert Rubric.load(rubric)["k"].checker == "tool_args_match"


def test_min_zero_with_a_max_is_a_real_limit() -> None:
    assert load("tool_called", {"name": "refund", "min": 0, "max": 1})  # at most once


@pytest.mark.parametrize("mode", ["strict", "unordered", "subset"])
def test_no_expected_calls_is_a_real_rule_in_the_other_modes(mode: str) -> None:
    rubric = load("tool_sequence", {"mode": mode, "expected": []})  # the agent calls nothing
    assert not ok(seq(SUPPORT, [], mode=mode))
    assert rubric["k"].checker == "tool_sequence"


# -- linear time on hostile transcripts (generous bounds) ------------------------------


def _many(n: int, distinct: bool) -> Transcript:
    return agent(*[("search", {"q": i if distinct else 0, "page": 1}) for i in range(n)])


@pytest.mark.parametrize("mode", ["strict", "unordered", "subset", "superset"])
@pytest.mark.parametrize("args", ["ignore", "exact", "subset", "superset"])
def test_ten_thousand_calls_are_checked_well_under_a_second(mode: str, args: str) -> None:
    t = _many(10_000, distinct=True)
    expected = [{"name": c.name, "args": c.args} for c in t.tool_calls]
    started = time.perf_counter()
    result = seq(t, expected, mode=mode, args=args)
    elapsed = time.perf_counter() - started
    assert ok(result), result
    assert elapsed < 5  # about 0.05 s here; quadratic pairing would take minutes


def test_a_pathological_pairing_stops_at_the_work_limit_and_says_so() -> None:
    # 10,000 calls of one tool, none identical to any of 10,000 expected ones, all
    # related by containment: a general matching would compare 10^8 pairs
    t = _many(10_000, distinct=True)
    expected = [{"name": "search", "args": {"q": i}} for i in range(10_000, 20_000)]
    started = time.perf_counter()
    result = seq(t, expected, mode="unordered", args="superset")
    assert time.perf_counter() - started < 5
    assert not ok(result)
    assert result.issues == [
        "too many calls to pair by args='superset': 10000 calls of 'search' against 10000 "
        "expected ones is past the work limit; list fewer expected calls, or compare with "
        "args='exact' or 'ignore'"
    ]
    # within the limit the same kind of input is paired in full
    small = _many(300, distinct=True)
    wants = [{"name": "search", "args": {"page": 1}}] * 300
    assert WORK_LIMIT > 300 * 300
    assert ok(seq(small, wants, mode="unordered", args="superset"))


def test_deeply_nested_arguments_do_not_exhaust_the_stack() -> None:
    deep: Any = 1
    for _ in range(400):  # 800 levels: what the JSON layer still reads
        deep = {"a": [deep]}
    t = Transcript.from_messages(
        [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "x", "name": "f", "input": deep}],
            }
        ]
    )
    assert ok(seq(t, [{"name": "f", "args": deep}]))
    assert ok(seq(t, [{"name": "f", "args": deep}], args="superset"))
    assert ok(tool_args_match("", name="f", args=deep, match="subset", context=ctx(t)))


# -- properties --------------------------------------------------------------------------

_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([1.0, 2.5])
    | st.text("ab", max_size=2)
)
_value = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text("xy", max_size=1), inner, max_size=2)
    ),
    max_leaves=5,
)
_args = st.dictionaries(st.sampled_from("pqr"), _value, max_size=2)
_calls = st.lists(st.tuples(st.sampled_from("fg"), _args), max_size=5)


def _tc(calls: list[tuple[str, dict[str, Any]]]) -> list[ToolCall]:
    return [ToolCall(n, a, i) for i, (n, a) in enumerate(calls)]


def _wants(calls: list[tuple[str, dict[str, Any] | None]]) -> list[Want]:
    return [Want(n, a, i) for i, (n, a) in enumerate(calls)]


def _brute_force_size(calls: list[ToolCall], wants: list[Want], args: Any) -> int:
    """The largest pairing, by trying every choice (each want takes a free call or none)."""
    from gradeloop_checkers.trajectory._args import relates

    def best(k: int, used: frozenset[int]) -> int:
        if k == len(wants):
            return 0
        w = wants[k]
        options = [best(k + 1, used)]
        for i, c in enumerate(calls):
            if i not in used and c.name == w.name and relates(args, c.args, w.args):
                options.append(1 + best(k + 1, used | {i}))
        return max(options)

    return best(0, frozenset())


@given(
    _calls,
    st.lists(st.tuples(st.sampled_from("fg"), _args | st.none()), max_size=5),
    st.sampled_from(["ignore", "exact", "subset", "superset"]),
)
def test_the_pairing_is_as_large_as_any(calls: Any, wants: Any, args: Any) -> None:
    made, expected = _tc(calls), _wants(wants)
    paired = pair(made, expected, args)
    size = len(made) - len(paired.unpaired_calls)
    assert size == len(expected) - len(paired.unpaired_wants)
    assert size == _brute_force_size(made, expected, args)


@given(_calls, st.randoms(use_true_random=False))
def test_a_trajectory_matches_itself_and_any_reordering_unordered(calls: Any, rnd: Any) -> None:
    made = _tc(calls)
    wants = _wants([(c.name, c.args) for c in made])
    for fn in (match_strict, match_unordered, match_subset, match_superset):
        for args in ("ignore", "exact", "subset", "superset"):
            assert fn(made, wants, args).passed  # type: ignore[arg-type]
    shuffled = list(wants)
    rnd.shuffle(shuffled)
    assert match_unordered(made, shuffled, "exact").passed


@given(_calls, _calls)
def test_unordered_is_subset_and_superset_together(a: Any, b: Any) -> None:
    made, wants = _tc(a), _wants(b)
    for args in ("ignore", "exact"):
        both = match_subset(made, wants, args).passed and match_superset(made, wants, args).passed
        assert match_unordered(made, wants, args).passed is both


@given(_value, _value)
def test_json_equality_and_containment_agree(a: Any, b: Any) -> None:
    assert same(a, b) is (canon(a) == canon(b))
    assert same(a, b) is (covers(a, b) and covers(b, a))
    assert covers(a, a) and same(a, a)
    assert same(a, json.loads(json.dumps(a)))


@given(st.sampled_from(sorted(CHECKERS)), _calls, st.text(max_size=20))
def test_checkers_never_raise(name: str, calls: Any, text: str) -> None:
    t = agent(*[(n, a) for n, a in calls])
    result = CHECKERS[name](text, **OPTIONS[name], context=ctx(t))
    assert ok(result) or all(isinstance(i, str) for i in result.issues)
