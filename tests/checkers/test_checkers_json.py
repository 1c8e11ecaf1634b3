"""The built-in JSON checkers: json_valid and json_schema."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradeloop
from gradeloop import CheckResult, Rubric, RubricError, grade
from gradeloop_checkers.json_checks import CHECKERS, json_schema, json_valid

ORDER = {
    "type": "object",
    "required": ["id", "items"],
    "properties": {
        "id": {"type": "string"},
        "items": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "when": {"type": "string", "format": "date"},
    },
}


def load(checker: str, options: dict[str, Any], key: str = "k") -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": key, "description": "d", "checker": checker, "options": options}]}
    )


def rejected(checker: str, options: dict[str, Any], option: str) -> str:
    with pytest.raises(RubricError) as info:
        load(checker, options, key="crit_under_test")
    message = str(info.value)
    assert "crit_under_test" in message
    assert option in message
    return message


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_json_checkers_are_registered_through_the_plugin(name: str) -> None:
    assert gradeloop.get_checker(name) is CHECKERS[name]


# -- json_valid -------------------------------------------------------------------------------


def test_json_valid_whole_draft() -> None:
    assert json_valid(' {"a": [1, 2.5, null, true]}\n').passed
    assert json_valid('"just a string"').passed


def test_json_valid_reports_line_column_and_the_line() -> None:
    result = json_valid('{\n  "a": 1\n  "b": 2\n}')
    assert not result.passed
    assert "line 3, column 3" in result.issues[0]
    assert "Expecting ',' delimiter" in result.issues[0]
    assert result.issues[0].endswith(': ""b": 2"')


def test_json_valid_rejects_nan_and_infinity() -> None:
    assert json_valid('{"a": 1e308}').passed
    for bad in ('{"a": NaN}', "[Infinity]", "-Infinity"):
        result = json_valid(bad)
        assert not result.passed
        assert "not valid JSON" in result.issues[0]


def test_json_valid_empty_draft_fails() -> None:
    assert "empty" in json_valid("  \n").issues[0]


def test_json_valid_hints_at_block_when_the_draft_is_fenced() -> None:
    fenced = '```json\n{"a": 1}\n```'
    result = json_valid(fenced)
    assert not result.passed
    assert "block = true" in result.issues[0]
    assert json_valid(fenced, block=True).passed


def test_json_valid_block_takes_the_first_json_block_and_maps_lines() -> None:
    text = 'Here:\n```python\nx = {\n```\n\n```JSON\n{\n  "a": 1,\n}\n```\n```json\n{}\n```'
    result = json_valid(text, block=True)
    assert not result.passed
    assert "block on line 6" in result.issues[0]
    assert "line 9" in result.issues[0]  # the draft's line, not the block's
    assert json_valid(text.replace("1,\n}", "1\n}"), block=True).passed


def test_json_valid_block_inside_a_list_item() -> None:
    assert json_valid('1. The payload:\n   ```json\n   {"a": 1}\n   ```\n', block=True).passed


def test_json_valid_block_missing_or_unclosed() -> None:
    assert "no ```json block" in json_valid('{"a": 1}', block=True).issues[0]
    assert "never closed" in json_valid('```json\n{"a": 1}', block=True).issues[0]


def test_json_valid_deep_nesting_is_a_failure_not_a_crash() -> None:
    result = json_valid("[" * 100_000 + "]" * 100_000)
    assert not result.passed
    assert "nested too deeply" in result.issues[0]


def test_json_valid_options_are_checked_at_load() -> None:
    rejected("json_valid", {"block": "perhaps"}, "block")
    rejected("json_valid", {"blocks": True}, "blocks")
    assert load("json_valid", {"block": True})["k"].options == {"block": True}


# -- json_schema ------------------------------------------------------------------------------


def test_json_schema_passes_a_valid_document() -> None:
    assert json_schema('{"id": "A1", "items": [1, 2]}', inline_schema=ORDER).passed


def test_json_schema_lists_each_violation_with_its_path() -> None:
    result = json_schema('{"items": [1, -2, "x"]}', inline_schema=ORDER)
    assert not result.passed
    assert "at $.items[1]: -2 is less than the minimum of 0" in result.issues
    assert "at $.items[2]: 'x' is not of type 'integer'" in result.issues
    assert "at $: 'id' is a required property" in result.issues


def test_json_schema_caps_the_list_and_counts_the_rest() -> None:
    result = json_schema(json.dumps({"id": "x", "items": [-1] * 14}), inline_schema=ORDER)
    assert len(result.issues) == 11
    assert result.issues[-1] == "... and 4 more schema violations"


def test_json_schema_reports_a_parse_error_before_validating() -> None:
    result = json_schema("{id: 1}", inline_schema=ORDER)
    assert not result.passed
    assert "not valid JSON" in result.issues[0]


def test_json_schema_checks_formats_unless_turned_off() -> None:
    doc = '{"id": "a", "items": [], "when": "not a date"}'
    assert "is not a 'date'" in json_schema(doc, inline_schema=ORDER).issues[0]
    assert json_schema(doc, inline_schema=ORDER, formats=False).passed
    assert json_schema(doc.replace("not a date", "2024-02-29"), inline_schema=ORDER).passed


def test_json_schema_block_mode() -> None:
    text = 'Order:\n```json\n{"id": "a", "items": [3]}\n```\n'
    assert json_schema(text, inline_schema=ORDER, block=True).passed
    assert not json_schema(text, inline_schema=ORDER).passed


def test_json_schema_names_the_closest_branch_of_a_oneof() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "object", "required": ["x"]}]}
    result = json_schema("{}", inline_schema=schema)
    assert not result.passed
    assert "closest:" in result.issues[0]


def test_a_remote_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    fetched: list[Any] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: fetched.append(a))
    schema = {"$ref": "https://example.com/order.schema.json"}
    result = json_schema("{}", inline_schema=schema)
    assert not result.passed
    assert "cannot be resolved" in result.issues[0]
    assert fetched == []
    assert json_schema("{}", inline_schema={"$defs": {"o": {}}, "$ref": "#/$defs/o"}).passed


def test_json_schema_from_a_file_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "order.schema.json").write_text(json.dumps(ORDER), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rubric = load("json_schema", {"schema_file": "order.schema.json"})
    pinned = rubric["k"].options["schema_file"]
    assert pinned == str(tmp_path.resolve() / "order.schema.json")
    monkeypatch.chdir(tmp_path.parent)  # the rubric keeps reading the file it loaded
    assert grade('{"id": "a", "items": []}', rubric).accepted
    assert not grade('{"id": 1, "items": []}', rubric).accepted


def test_json_schema_file_problems_fail_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = rejected("json_schema", {"schema_file": "missing.json"}, "schema_file")
    assert "not found" in message
    assert str(tmp_path) in message  # says where it looked (no rubric file: the working dir)
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert "not valid JSON" in rejected(
        "json_schema", {"schema_file": "broken.json"}, "schema_file"
    )
    (tmp_path / "wrong.json").write_text('{"type": 5}', encoding="utf-8")
    assert "not a valid JSON Schema" in rejected(
        "json_schema", {"schema_file": "wrong.json"}, "schema_file"
    )


def test_json_schema_file_that_vanished_fails_the_check(tmp_path: Path) -> None:
    result = json_schema("{}", schema_file=str(tmp_path / "gone.json"))
    assert not result.passed
    assert "not found" in result.issues[0]


def test_an_invalid_inline_schema_fails_at_load() -> None:
    message = rejected("json_schema", {"inline_schema": {"type": "strin"}}, "inline_schema")
    assert "not a valid JSON Schema" in message
    message = rejected(
        "json_schema", {"inline_schema": {"$schema": "https://x.test/s"}}, "inline_schema"
    )
    assert "unknown $schema" in message
    rejected("json_schema", {"inline_schema": {"$schema": 7}}, "inline_schema")
    rejected("json_schema", {"inline_schema": {"pattern": "("}}, "inline_schema")
    rejected("json_schema", {"inline_schema": "not a table"}, "inline_schema")
    assert load("json_schema", {"inline_schema": ORDER})["k"].options["inline_schema"] == ORDER


def test_exactly_one_schema_source(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("{}", encoding="utf-8")
    assert "one of" in rejected("json_schema", {}, "schema_file")
    both = {"inline_schema": ORDER, "schema_file": str(tmp_path / "s.json")}
    assert "only one" in rejected("json_schema", both, "schema_file")
    assert not json_schema("{}").passed
    assert not json_schema("{}", inline_schema=ORDER, schema_file=str(tmp_path / "s.json")).passed


def test_an_invalid_schema_called_directly_fails_instead_of_raising() -> None:
    result = json_schema("{}", inline_schema={"type": 5})
    assert not result.passed
    assert "not a valid JSON Schema" in result.issues[0]


def test_without_jsonschema_the_rubric_fails_at_load_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    load("json_schema", {"inline_schema": ORDER})
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # makes `import jsonschema` fail
    message = rejected("json_schema", {"inline_schema": ORDER}, "inline_schema")
    assert "pip install 'gradeloop[jsonschema]'" in message
    result = json_schema("{}", inline_schema=ORDER)
    assert not result.passed
    assert "pip install 'gradeloop[jsonschema]'" in result.issues[0]
    assert json_valid("{}").passed  # json_valid does not need the extra


# -- robustness -------------------------------------------------------------------------------

FRAGMENTS = [
    "```json\n",
    "```\n",
    "{",
    "}",
    "[",
    "]",
    '"a"',
    ":",
    ",",
    "1",
    "-",
    "NaN",
    "null",
    "\n",
    "\\u00",
    "é",
    "1e999",
    "9" * 30,
]
texts = st.one_of(
    st.text(),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3)).map("".join),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda kids: st.lists(kids) | st.dictionaries(st.text(max_size=3), kids),
    ).map(json.dumps),
)

CASES: list[tuple[str, dict[str, Any]]] = [
    ("json_valid", {}),
    ("json_valid", {"block": True}),
    ("json_schema", {"inline_schema": ORDER}),
    (
        "json_schema",
        {
            "inline_schema": {
                "items": {"oneOf": [{"type": "string"}, {"minimum": 1}]},
                "patternProperties": {"^a": {"format": "email"}},
            },
            "block": True,
        },
    ),
]


@pytest.mark.parametrize(("name", "options"), CASES)
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_no_text_makes_a_json_checker_raise(name: str, options: dict[str, Any], text: str) -> None:
    result = CHECKERS[name](text, **options)
    assert isinstance(result, CheckResult)
    assert result.passed or result.issues
