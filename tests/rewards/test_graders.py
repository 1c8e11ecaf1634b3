"""OpenAI grader configs as a rubric: what translates, and what is refused and why.

The grader shapes are the openai SDK's own (openai.types.graders, openai 3.63.0); each
test's config validates against them first, so a config the SDK would not accept never
stands in for OpenAI's.
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.graders import (
    LabelModelGrader,
    MultiGrader,
    PythonGrader,
    ScoreModelGrader,
    StringCheckGrader,
    TextSimilarityGrader,
)

from gradeloop import Rubric, grade
from gradeloop.errors import InputError
from gradeloop.rewards import import_graders
from gradeloop.rewards._formula import FormulaError, weights
from gradeloop.rewards._graders import translate
from tests.rewards.fakes import WordJudge
from tests.support.cli_helpers import cli

ANSWER = "{{sample.output_text}}"
STRING = {
    "type": "string_check",
    "name": "exact",
    "input": ANSWER,
    "reference": "{{item.answer}}",
    "operation": "eq",
}
SIMILAR = {
    "type": "text_similarity",
    "name": "close",
    "input": ANSWER,
    "reference": "Paris is the capital of France.",
    "evaluation_metric": "rouge_l",
}
SCORE = {
    "type": "score_model",
    "name": "helpful",
    "model": "o3-mini",
    "range": [0, 1],
    "input": [
        {"role": "system", "content": "Rate how helpful the answer is."},
        {"role": "user", "content": f"Answer: {ANSWER}"},
    ],
}
LABEL = {
    "type": "label_model",
    "name": "tone",
    "model": "gpt-4o",
    "input": [{"role": "user", "content": f"Classify the tone: {ANSWER}"}],
    "labels": ["polite", "neutral", "rude"],
    "passing_labels": ["polite", "neutral"],
}
PYTHON = {"type": "python", "name": "runs", "source": "def grade(sample, item): return 1.0"}
SDK = {
    "string_check": StringCheckGrader,
    "text_similarity": TextSimilarityGrader,
    "score_model": ScoreModelGrader,
    "label_model": LabelModelGrader,
    "python": PythonGrader,
}


@pytest.mark.parametrize("config", [STRING, SIMILAR, SCORE, LABEL, PYTHON], ids=lambda c: c["type"])
def test_the_configs_here_are_the_sdks_shapes(config: dict[str, Any]) -> None:
    SDK[config["type"]].model_validate(config)


def test_each_grader_type_becomes_a_key() -> None:
    graders = [STRING, {**SIMILAR, "pass_threshold": 0.6}, {**SCORE, "pass_threshold": 0.7}, LABEL]
    rubric = Rubric.from_dict(import_graders({"testing_criteria": graders}))
    assert rubric.keys == ("exact", "close", "helpful", "tone")
    exact, close, helpful, tone = rubric
    assert exact.checker == "string_check"
    assert exact.options == {"operation": "eq", "reference_field": "answer"}
    assert (close.checker, close.scale, close.threshold) == ("text_similarity", "score", 6.0)
    assert helpful.source == "judge" and helpful.scale == "score"
    assert helpful.threshold == 8  # 1 + 9 * 0.7 = 7.3: the judge scores whole numbers
    assert "[the answer]" in helpful.description and "{{" not in helpful.description
    assert tone.source == "judge" and tone.scale == "pass_fail"
    assert "Met when the label is one of: polite, neutral" in tone.description


def test_the_translated_code_keys_grade_like_openais() -> None:
    rubric = Rubric.from_dict(import_graders([STRING, {**SIMILAR, "pass_threshold": 0.6}]))
    ok = grade(
        "Paris is the capital of France.",
        rubric,
        metadata={"answer": "Paris is the capital of France."},
    )
    assert ok.accepted
    off = grade("Lyon.", rubric, metadata={"answer": "Paris is the capital of France."})
    assert not off["exact"].passed and not off["close"].passed


def test_a_multi_grader_is_its_graders_weighted_by_the_formula() -> None:
    multi = {
        "type": "multi",
        "name": "combo",
        "graders": {"name": {**SIMILAR, "name": "name"}, "email": {**STRING, "name": "email"}},
        "calculate_output": "(2 * name + email) / 3",
        "pass_threshold": 0.5,
    }
    MultiGrader.model_validate({**multi, "graders": multi["graders"]["email"]})  # the SDK's form
    data = import_graders(multi)
    rubric = Rubric.from_dict(data)
    assert {c.key: round(c.weight, 4) for c in rubric} == {"name": 0.6667, "email": 0.3333}
    assert data["pass_score"] == 5.0


def test_a_multi_beside_other_graders_sets_no_pass_score() -> None:
    multi = {"type": "multi", "name": "m", "graders": {"a": STRING}, "calculate_output": "a",
             "pass_threshold": 0.5}  # fmt: skip
    out = translate([multi, LABEL])
    assert "pass_score" not in out.rubric
    assert any("no pass_score equivalent" in n for n in out.notes)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            PYTHON,
            r"'runs' \(python\): gradeloop never runs a grader's code: write the check as a "
            "checker plugin",
        ),
        ({**SIMILAR, "evaluation_metric": "cosine"}, "cosine needs an embedding model"),
        ({**SIMILAR, "evaluation_metric": "meteor"}, "meteor needs a thesaurus"),
        ({**STRING, "input": "{{sample.output_json.city}}"}, "is not {{sample.output_text}}"),
        ({**STRING, "reference": "x {{item.a}}"}, "mixes text and templates"),
        (
            {
                "type": "multi",
                "name": "m",
                "graders": {"a": STRING, "b": LABEL},
                "calculate_output": "min(a, b)",
            },
            "'min\\(a, b\\)', which is not a weighted sum",
        ),
        ({"type": "unknown_kind", "name": "u"}, "not an OpenAI grader type"),
        ({**LABEL, "passing_labels": ["great"]}, "passing_labels are not all among labels"),
        ({**SCORE, "range": [1, 1]}, "range \\[1, 1\\] is not \\[low, high\\]"),
    ],
)
def test_what_has_no_equivalent_is_refused_naming_it(config: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        import_graders([LABEL, config])


def test_every_refusal_is_named_at_once() -> None:
    with pytest.raises(InputError, match=r"cannot translate 2 graders: 'runs'.*; 'close'"):
        import_graders([PYTHON, {**SIMILAR, "evaluation_metric": "cosine"}, LABEL])


@pytest.mark.parametrize("data", [[], "graders", 3, [{"name": "no type"}]])
def test_a_file_of_no_graders_says_what_it_expects(data: Any) -> None:
    with pytest.raises(InputError, match="grader"):
        import_graders(data)


def test_an_rft_grader_object_is_read() -> None:
    assert Rubric.from_dict(import_graders({"grader": LABEL})).keys == ("tone",)


def test_names_become_unique_valid_keys() -> None:
    graders = [
        {**LABEL, "name": "Tone check!"},
        {**LABEL, "name": "Tone check?"},
        {**LABEL, "name": "9 lives"},
    ]
    assert Rubric.from_dict(import_graders(graders)).keys == (
        "Tone_check",
        "Tone_check_2",
        "g_9_lives",
    )


@pytest.mark.parametrize(
    ("formula", "want"),
    [
        ("(a + b) / 2", {"a": 0.5, "b": 0.5}),
        ("0.3 * a + 0.7 * b", {"a": 0.3, "b": 0.7}),
        ("a + 2 * b - b", {"a": 1.0, "b": 1.0}),
        ("a", {"a": 1.0, "b": 0.0}),
        ("-(-a)", {"a": 1.0, "b": 0.0}),
    ],
)
def test_weighted_sums_are_read(formula: str, want: dict[str, float]) -> None:
    assert weights(formula, ["a", "b"]) == pytest.approx(want)


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("a * b", "multiplies graders"),
        ("a + 1", "adds a constant"),
        ("a - b", "negative weight"),
        ("a / 0", "divides by zero"),
        ("a / b", "not a weighted sum"),
        ("c + a", "'c', which is not one of the graders"),
        ("a ** 2", "not a weighted sum"),
        ("__import__('os')", "not a weighted sum"),
        ("a +", "not an expression"),
        ("0 * a", "weighs no grader"),
        ("True * a", "not a weighted sum"),
    ],
)
def test_other_formulas_are_refused_with_the_reason(formula: str, message: str) -> None:
    with pytest.raises(FormulaError, match=message):
        weights(formula, ["a", "b"])


@given(st.text(max_size=60))
def test_any_formula_text_is_read_or_refused_never_run(formula: str) -> None:
    with contextlib.suppress(FormulaError):
        weights(formula, ["a", "b"])


def test_a_deeply_nested_formula_is_refused() -> None:
    with pytest.raises(FormulaError):
        weights("(" * 400 + "a" + ")" * 400 + "+ -" * 3000 + "a", ["a"])


# -- the command ---------------------------------------------------------------------


def _file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "graders.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_command_writes_a_rubric_that_loads(tmp_path: Path) -> None:
    out = tmp_path / "r.toml"
    ran = cli("import-graders", str(_file(tmp_path, [STRING, SCORE, LABEL])), "--out", str(out))
    assert ran.code == 0, ran.err
    assert "wrote" in ran.err and "3 keys (1 code, 2 judge)" in ran.err
    rubric = Rubric.load(out)
    assert rubric.keys == ("exact", "helpful", "tone")
    text = out.read_text(encoding="utf-8")
    assert "# OpenAI scored 0 to 1" in text and "import-graders" in text
    assert tomllib.loads(text)["criteria"][0]["options"]["reference_field"] == "answer"


def test_the_command_prints_without_out(tmp_path: Path) -> None:
    ran = cli("import-graders", str(_file(tmp_path, LABEL)))
    assert ran.code == 0 and Rubric.from_dict(tomllib.loads(ran.out)).keys == ("tone",)


def test_the_command_exits_2_naming_what_it_cannot_translate(tmp_path: Path) -> None:
    out = tmp_path / "r.toml"
    ran = cli("import-graders", str(_file(tmp_path, [LABEL, PYTHON])), "--out", str(out))
    assert ran.code == 2
    assert "'runs' (python)" in ran.err and "checker plugin" in ran.err
    assert not out.exists()  # nothing half-translated is written


@pytest.mark.parametrize(
    ("content", "message"), [("{not json", "invalid JSON"), ("[" * 100_000, "nested too deeply")]
)
def test_the_command_names_a_bad_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "g.json"
    path.write_text(content, encoding="utf-8")
    ran = cli("import-graders", str(path))
    assert ran.code == 2 and message in ran.err


def test_the_translated_judge_keys_are_judged() -> None:
    rubric = Rubric.from_dict(import_graders([SCORE, LABEL]))
    ev = grade("Thank you, here it is.", rubric, judge=WordJudge())
    assert ev.accepted
