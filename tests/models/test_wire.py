"""The per-rubric wire schema, and reading replies against it."""

from __future__ import annotations

import copy
import json
from typing import Any

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop import Criterion, Verdict, accepted
from gradeloop.grading._strict import strict_reply
from gradeloop.models._strict_schema import strict_schema
from gradeloop.models._wire import WireError, looks_like_json, wire_spec
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator

API_CITED = Criterion(key="api_cited", description="Every API claim cites a spec section.")
NO_INVENTION = Criterion(key="no_invention", description="Nothing outside the spec.")
CLARITY = Criterion(key="clarity", description="Clear to a new reader.", scale="score", threshold=8)
CRITERIA = (API_CITED, NO_INVENTION, CLARITY)


def full(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "reasoning": "Section 4.2 is cited for every claim.",
        "scores": {"clarity": 9},
        "criteria_met": {"api_cited": True, "no_invention": True},
        "passed": True,
        "issues": [],
    }
    data.update(overrides)
    return data


# -- the schema -------------------------------------------------------------------------


def test_reasoning_comes_first_then_scores_criteria_met_passed_issues() -> None:
    schema = wire_spec(CRITERIA).schema
    assert list(schema["properties"]) == ["reasoning", "scores", "criteria_met", "passed", "issues"]
    assert schema["required"] == ["reasoning", "scores", "criteria_met", "passed", "issues"]


def resolve(schema: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return dict(schema["$defs"][name])
    return prop


def test_every_pass_fail_key_is_a_required_boolean_property() -> None:
    schema = wire_spec(CRITERIA).schema
    met = resolve(schema, schema["properties"]["criteria_met"])
    assert met["required"] == ["api_cited", "no_invention"]
    assert {k: v["type"] for k, v in met["properties"].items()} == {
        "api_cited": "boolean",
        "no_invention": "boolean",
    }
    assert met["additionalProperties"] is False


def test_every_scored_key_is_a_required_integer_under_scores() -> None:
    schema = wire_spec(CRITERIA).schema
    scores = resolve(schema, schema["properties"]["scores"])
    assert scores["required"] == ["clarity"]
    assert scores["properties"]["clarity"]["type"] == "integer"


def test_the_naive_dict_field_would_allow_only_an_empty_object() -> None:
    # The reason the schema is built per rubric (DESIGN section 4).
    naive = anthropic.transform_schema(Verdict.model_json_schema())
    assert naive["properties"]["criteria_met"]["properties"] == {}
    assert naive["properties"]["criteria_met"]["additionalProperties"] is False


def test_sections_without_keys_are_left_out() -> None:
    only_pf = wire_spec((API_CITED,)).schema
    assert "scores" not in only_pf["properties"]
    only_scored = wire_spec((CLARITY,)).schema
    assert "criteria_met" not in only_scored["properties"]
    assert list(only_scored["properties"]) == ["reasoning", "scores", "passed", "issues"]


def test_feedback_adds_one_required_string_per_key() -> None:
    schema = wire_spec(CRITERIA, feedback=True).schema
    assert list(schema["properties"])[-1] == "feedback"
    fb = resolve(schema, schema["properties"]["feedback"])
    assert fb["required"] == ["api_cited", "no_invention", "clarity"]
    assert {p["type"] for p in fb["properties"].values()} == {"string"}


def test_the_model_is_cached_per_key_set() -> None:
    assert wire_spec(CRITERIA).model is wire_spec(list(CRITERIA)).model
    assert wire_spec(CRITERIA).model is not wire_spec((API_CITED,)).model


def test_keys_that_are_not_identifiers_or_shadow_pydantic_names_work() -> None:
    odd = (
        Criterion(key="has-title", description="d"),
        Criterion(key="model_config", description="d"),
        Criterion(key="copy", description="d"),
    )
    spec = wire_spec(odd)
    met = resolve(spec.schema, spec.schema["properties"]["criteria_met"])
    assert met["required"] == ["has-title", "model_config", "copy"]
    v = spec.parse_text(
        json.dumps(
            {
                "reasoning": "r",
                "passed": True,
                "issues": [],
                "criteria_met": dict.fromkeys(met["required"], True),
            }
        )
    )
    assert v.criteria_met == {"has-title": True, "model_config": True, "copy": True}


def test_an_empty_criteria_set_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one criterion"):
        wire_spec(())


def test_the_schema_equals_what_parse_output_format_sends(emulator: Emulator) -> None:
    spec = wire_spec(CRITERIA, feedback=True)
    emulator.enqueue(
        verdict_reply(full(feedback=dict.fromkeys(["api_cited", "no_invention", "clarity"], "ok")))
    )
    client = emulator.client()
    client.messages.parse(
        model="claude-opus-5-5",
        max_tokens=100,
        output_format=spec.model,
        messages=[{"role": "user", "content": "x"}],
    )
    assert emulator.bodies[0]["output_config"] == spec.output_config()


# -- the structured-output transform, without the SDK (replaying needs no SDK) ---------

# keys as rubrics allow them: letters, digits, '_' and '-', names that shadow pydantic's
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,11}", fullmatch=True) | st.sampled_from(
    ["model_config", "schema", "json", "copy", "dict", "fields"]
)


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(KEYS, st.sampled_from(["pass_fail", "score"])),
        min_size=1,
        max_size=6,
        unique_by=lambda pair: pair[0],
    ),
    st.booleans(),
)
def test_the_judge_schema_is_the_sdks_transform_for_every_shape(
    shape: list[tuple[str, str]], feedback: bool
) -> None:
    criteria = [
        Criterion(key=key, description="d", scale=scale)  # type: ignore[arg-type]
        for key, scale in shape
    ]
    raw = wire_spec(criteria, feedback=feedback).model.model_json_schema()
    assert strict_schema(raw) == anthropic.transform_schema(raw)
    assert wire_spec(criteria, feedback=feedback).schema == anthropic.transform_schema(raw)


OTHER_SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer", "minimum": 1, "maximum": 10, "description": "A number"},
    {"type": "integer", "minimum": 1},
    {"type": "string", "format": "email"},
    {"type": "string", "format": "phone"},
    {"type": "string", "pattern": "^a"},
    {"type": "array", "items": {"type": "string"}, "minItems": 0},
    {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 3},
    {"type": "array", "minItems": 2},
    {"enum": ["a", 1, None], "type": "string", "title": "E"},
    {"enum": [{"x": 1}], "type": "object"},
    {"const": "x", "description": "only x"},
    {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
    {"allOf": [{"$ref": "#/$defs/A"}], "$defs": {"A": {"type": "object"}}},
    {"$ref": "#/$defs/A", "$defs": {"A": {"type": "object", "properties": {}}}},
    {"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": True},
    {"type": "object", "required": ("a",), "properties": {"a": {"type": "string"}}},
]


@pytest.mark.parametrize("schema", OTHER_SCHEMAS)
def test_other_schemas_transform_as_the_sdks(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    assert strict_schema(schema) == anthropic.transform_schema(schema)
    assert schema == before  # the input is left as it was


@pytest.mark.parametrize("schema", [{}, {"description": "no type"}, {"enum": []}])
def test_a_schema_without_a_type_is_refused_as_by_the_sdk(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="Schema must have"):
        anthropic.transform_schema(schema)
    with pytest.raises(ValueError, match="needs a 'type'"):
        strict_schema(schema)


# -- reading replies --------------------------------------------------------------------


def test_a_full_valid_verdict_passes_the_gate() -> None:
    v = wire_spec(CRITERIA).parse_text(json.dumps(full()))
    assert v.criteria_met == {"api_cited": True, "no_invention": True, "clarity": True}
    assert v.scores == {"clarity": 9.0}
    assert accepted(v, [c.key for c in CRITERIA])


def test_an_empty_criteria_met_is_invalid() -> None:
    with pytest.raises(WireError, match=r"criteria_met\.api_cited: missing"):
        wire_spec(CRITERIA).parse_text(json.dumps(full(criteria_met={})))


def test_a_missing_key_is_invalid() -> None:
    with pytest.raises(WireError, match=r"criteria_met\.no_invention: missing"):
        wire_spec(CRITERIA).parse_text(json.dumps(full(criteria_met={"api_cited": True})))


def test_a_missing_score_is_invalid() -> None:
    with pytest.raises(WireError, match=r"scores\.clarity: missing"):
        wire_spec(CRITERIA).parse_text(json.dumps(full(scores={})))


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("criteria_met", {"api_cited": "true", "no_invention": True}, "criteria_met.api_cited"),
        ("scores", {"clarity": 7.5}, "scores.clarity"),
        ("scores", {"clarity": "9"}, "scores.clarity"),
        ("passed", "yes", "passed"),
        ("issues", "none", "issues"),
    ],
)
def test_wrong_types_are_invalid(field: str, value: Any, where: str) -> None:
    with pytest.raises(WireError, match=where.replace(".", r"\.")):
        wire_spec(CRITERIA).parse_text(json.dumps(full(**{field: value})))


def test_non_json_is_invalid() -> None:
    with pytest.raises(WireError, match="invalid JSON"):
        wire_spec(CRITERIA).parse_text("The draft looks fine to me.")


def test_met_is_decided_in_code_from_the_score() -> None:
    spec = wire_spec(CRITERIA)
    low = spec.parse_text(json.dumps(full(scores={"clarity": 7})))
    assert low.criteria_met["clarity"] is False  # threshold 8; the judge said passed=true
    assert not accepted(low, [c.key for c in CRITERIA])
    high = spec.parse_text(json.dumps(full(scores={"clarity": 8})))
    assert high.criteria_met["clarity"] is True  # the twin, at the threshold


@pytest.mark.parametrize("score", [0, -3, 11, 42, 10**30, "1e400", "NaN"])
def test_scores_outside_1_to_10_are_invalid_never_clamped(score: Any) -> None:
    text = json.dumps(full()).replace('"clarity": 9', f'"clarity": {score}')
    with pytest.raises(WireError, match=r"scores\.clarity|NaN|Infinity"):
        wire_spec(CRITERIA).parse_text(text)


@pytest.mark.parametrize("score", [1, 10, 8.0, 1.0])
def test_integer_scores_at_the_bounds_and_integral_floats_are_valid(score: Any) -> None:
    v = wire_spec(CRITERIA).parse_text(json.dumps(full(scores={"clarity": score})))
    assert v.scores == {"clarity": float(score)}


def test_a_judge_boolean_for_a_scored_key_is_ignored() -> None:
    v = wire_spec(CRITERIA).parse_object(
        full(
            scores={"clarity": 3},
            criteria_met={"api_cited": True, "no_invention": True, "clarity": True},
        )
    )
    assert v.criteria_met["clarity"] is False


def test_extra_keys_from_a_chatty_model_are_ignored() -> None:
    v = wire_spec(CRITERIA).parse_text(json.dumps(full(confidence="high")))
    assert accepted(v, [c.key for c in CRITERIA])


def test_parse_object_accepts_a_verdict_a_wire_instance_and_a_dict() -> None:
    spec = wire_spec(CRITERIA)
    wire = spec.model.model_validate(full())
    assert spec.parse_object(wire).criteria_met["api_cited"] is True
    assert spec.parse_object(full()).scores == {"clarity": 9.0}
    ready = Verdict(
        reasoning="r",
        criteria_met={"api_cited": True, "no_invention": True, "clarity": True},
        passed=True,
        issues=[],
        scores={"clarity": 2},
    )
    assert spec.parse_object(ready).criteria_met["clarity"] is False
    with pytest.raises(WireError, match="not a verdict"):
        spec.parse_object(["a", "list"])
    with pytest.raises(WireError, match="reasoning: missing"):
        spec.parse_object({"passed": True})


def test_a_ready_verdict_keeps_its_gaps_so_the_gate_fails_them() -> None:
    spec = wire_spec(CRITERIA)
    keys = [c.key for c in CRITERIA]
    no_score = Verdict(
        reasoning="r",
        criteria_met={"api_cited": True, "no_invention": True, "clarity": True},
        passed=True,
        issues=[],
    )
    v = spec.parse_object(no_score)
    assert "clarity" not in v.criteria_met  # the judge's own boolean is not trusted
    assert accepted(v, keys) is False
    empty = Verdict(reasoning="r", criteria_met={}, passed=True, issues=[], scores={"clarity": 9})
    assert accepted(spec.parse_object(empty), keys) is False
    full = no_score.model_copy(update={"scores": {"clarity": 9}})
    assert accepted(spec.parse_object(full), keys) is True  # the twin


@pytest.mark.parametrize("bad", [float("nan"), 7.5, 11.0, 0.0, 100.0])
def test_a_ready_verdicts_bad_score_is_invalid_never_clamped(bad: float) -> None:
    ready = Verdict(
        reasoning="r",
        criteria_met={"api_cited": True, "no_invention": True},
        passed=True,
        issues=[],
        scores={"clarity": bad},
    )
    with pytest.raises(WireError, match=r"scores\.clarity"):
        wire_spec(CRITERIA).parse_object(ready)


# -- JSON extraction --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        '```JSON\n{"a": 1}\n```\n',
        '```\n{"a": 1}\n```',
    ],
)
def test_the_reply_s_one_object_is_read(text: str) -> None:
    assert strict_reply(text) == {"a": 1}


def test_prose_beside_the_object_is_refused() -> None:
    # tolerated before issue 44: prose beside a verdict can contradict it
    with pytest.raises(WireError, match="besides its JSON object"):
        strict_reply('Here is my verdict:\n{"a": 1}\nThanks.')


def test_looks_like_json() -> None:
    assert looks_like_json('  {"a": 1}') and looks_like_json("```json\n{}\n```")
    assert not looks_like_json("The draft is good.")
