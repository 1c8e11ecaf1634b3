"""Anchors and examples: validated at load, rendered into the judge's system text, cache-stable."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop import AnthropicJudge, CheckResult, Rubric, RubricError
from gradeloop.errors import RubricWarning
from gradeloop.grading import Registry
from gradeloop.grading._guidance import GUIDANCE_WARN_CHARS
from gradeloop.models._prompts import criteria_block, judge_system
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator


def short(text: str) -> CheckResult:
    return CheckResult(len(text) < 10)


@pytest.fixture
def registry() -> Registry:
    reg = Registry(autoload=False)
    reg.add("short", short)
    return reg


def scored(**kw: Any) -> dict[str, Any]:
    return {"key": "persuasive", "description": "A reason to buy.", "scale": "score"} | kw


def pass_fail(**kw: Any) -> dict[str, Any]:
    return {"key": "polite", "description": "The tone is polite."} | kw


def load(registry: Registry, *criteria: dict[str, Any]) -> Rubric:
    return Rubric.from_dict({"criteria": list(criteria)}, registry=registry)


ANCHORS = {"1": "no reason to buy", "5": "generic benefits", "10": "a concrete reason"}
EXAMPLES = [{"text": "Buy it now!", "score": 2, "why": "no reason at all"}]


# -- loading ------------------------------------------------------------------------------


def test_anchors_and_examples_load_with_integer_scores_in_order(registry: Registry) -> None:
    r = load(
        registry,
        scored(anchors={"10": "a concrete reason", "1": "none"}, examples=EXAMPLES),
        pass_fail(examples=[{"text": "Hey you.", "met": False}]),
    )
    assert r["persuasive"].anchors == {1: "none", 10: "a concrete reason"}
    assert r["persuasive"].examples[0].score == 2
    assert r["polite"].examples[0].met is False


def test_a_toml_rubric_with_anchors_loads(tmp_path: Path, registry: Registry) -> None:
    path = tmp_path / "r.toml"
    path.write_text(
        '[[criteria]]\nkey = "persuasive"\ndescription = "A reason."\nscale = "score"\n'
        'anchors = { 1 = "none", 10 = "concrete" }\n'
        'examples = [ { text = "Buy!", score = 2, why = "no reason" } ]\n',
        encoding="utf-8",
    )
    r = Rubric.load(path, registry=registry)
    assert r["persuasive"].anchors == {1: "none", 10: "concrete"}


def test_round_trips_through_to_dict(registry: Registry) -> None:
    r = load(registry, scored(anchors=ANCHORS, examples=EXAMPLES))
    again = Rubric.from_dict(r.to_dict(), registry=registry)
    assert again == r


@pytest.mark.parametrize(
    ("criterion", "fragment"),
    [
        (scored(anchors={"0": "x"}), "anchor 0 is outside 1-10"),
        (scored(anchors={"11": "x"}), "anchor 11 is outside 1-10"),
        (scored(anchors={"1.5": "x"}), "anchor key '1.5' is not a score"),
        (scored(anchors={"one": "x"}), "anchor key 'one' is not a score"),
        (scored(anchors={"3": "  "}), "anchor 3 needs a non-blank text"),
        (scored(anchors=["x"]), "anchors are a table"),
        (pass_fail(anchors={"1": "x"}), "'anchors' describe scores"),
        (pass_fail(examples=[{"text": "x"}]), "example 1: an example needs `met"),
        (pass_fail(examples=[{"text": "x", "met": True, "score": 3}]), "not both"),
        (pass_fail(examples=[{"text": "x", "mett": True}]), "did you mean 'met'"),
        (pass_fail(examples=[{"met": True}]), "example 1: missing required field 'text'"),
        (pass_fail(examples=[{"text": " ", "met": True}]), "text is blank"),
        (pass_fail(examples=[{"text": "x", "met": "yes"}]), "example 1: field 'met'"),
        (scored(examples=[{"text": "x", "score": 11}]), "integer 1-10, not 11"),
        (scored(examples=[{"text": "x", "score": 7.5}]), "example 1: field 'score'"),
        (scored(examples=[{"text": "x", "met": True}]), "this key is scored"),
        (pass_fail(examples=[{"text": "x", "score": 3}]), "this key is pass/fail"),
        (
            pass_fail(checker="short", examples=[{"text": "x", "met": True}]),
            "no judge answers this key",
        ),
    ],
)
def test_bad_guidance_is_a_rubric_error(
    registry: Registry, criterion: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(RubricError) as info:
        load(registry, criterion)
    assert fragment in str(info.value)
    assert info.value.key == criterion["key"]


def test_a_code_key_shadowed_by_the_judge_may_carry_examples(registry: Registry) -> None:
    r = load(
        registry, pass_fail(checker="short", shadow="judge", examples=[{"text": "x", "met": True}])
    )
    assert r["polite"].examples[0].met is True


def test_long_guidance_warns_at_load(registry: Registry) -> None:
    long_example = [{"text": "x" * GUIDANCE_WARN_CHARS, "met": True}]
    with pytest.warns(RubricWarning, match="'polite'.*every judge request"):
        load(registry, pass_fail(examples=long_example))


def test_short_guidance_does_not_warn(registry: Registry) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        load(registry, scored(anchors=ANCHORS, examples=EXAMPLES))
    assert not [w for w in seen if issubclass(w.category, RubricWarning)]


# -- rendering ----------------------------------------------------------------------------


def test_anchors_and_examples_appear_compactly_under_their_criterion(registry: Registry) -> None:
    r = load(
        registry,
        scored(anchors=ANCHORS, examples=EXAMPLES),
        pass_fail(examples=[{"text": "Hey\nyou.", "met": False}]),
    )
    block = criteria_block(r.judge_criteria).splitlines()
    assert block[1].startswith("persuasive (scored 1-10")
    assert block[2] == (
        '  anchors: 1 = "no reason to buy"; 5 = "generic benefits"; 10 = "a concrete reason"'
    )
    assert block[3] == '  example (score 2): "Buy it now!" - why: "no reason at all"'
    assert block[4] == "polite: The tone is polite."
    assert block[5] == '  example (not met): "Hey\\nyou."'
    assert "anchors" in judge_system(r.judge_criteria)


def test_no_guidance_leaves_the_system_text_as_before(registry: Registry) -> None:
    r = load(registry, pass_fail())
    system = judge_system(r.judge_criteria)
    assert "anchors" not in system and "example" not in system


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=80).filter(lambda t: t.strip()))
def test_an_example_text_never_breaks_out_of_its_line_or_the_block(text: str) -> None:
    r = Rubric.from_dict(
        {"criteria": [pass_fail(examples=[{"text": text, "met": True, "why": text}])]},
        registry=Registry(autoload=False),
    )
    block = criteria_block(r.judge_criteria)
    assert len(block.splitlines()) == 4  # <criteria>, the key, one example line, </criteria>
    assert block.lower().count("</criteria") == 1


# -- through the judge --------------------------------------------------------------------


def test_guidance_reaches_the_judge_and_the_system_text_is_cache_stable(
    emulator: Emulator, registry: Registry
) -> None:
    emulator.cache_min_tokens = 50
    r = load(registry, scored(anchors=ANCHORS, examples=EXAMPLES))
    judge = AnthropicJudge(client=emulator.client())
    reply = {"reasoning": "r", "scores": {"persuasive": 8}, "passed": True, "issues": []}
    emulator.enqueue(verdict_reply(reply), verdict_reply(reply))
    judge.evaluate("task one", "draft one", r.judge_criteria)
    judge.evaluate("task two", "draft two", r.judge_criteria)
    first, second = (b["system"] for b in emulator.bodies)
    assert first == second
    assert '10 = "a concrete reason"' in first[0]["text"]
    assert '"Buy it now!"' in first[0]["text"]
    assert "Buy it now!" not in str(emulator.bodies[0]["messages"])  # not in the user turn
    assert judge.calls[0].usage.cache_creation_input_tokens > 0
    assert judge.calls[1].usage.cache_read_input_tokens == (
        judge.calls[0].usage.cache_creation_input_tokens
    )
