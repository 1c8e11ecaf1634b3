"""CheckContext: the task, a reference and metadata reach the checkers that ask, and only those."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop import CheckResult, Rubric, RubricError, grade
from gradeloop.cli import main
from gradeloop.errors import InputError
from gradeloop.grading import CheckContext, Registry
from gradeloop.migration import calibrate, read_drafts, read_labels
from gradeloop_checkers.text import contains, not_contains, regex
from gradeloop_checkers.text._reference import matches_reference, similarity
from gradeloop_checkers.text._templates import expand_values, render_pattern, template_problem

SEEN: dict[str, Any] = {}


def asks(text: str, *, minimum: int = 0, context: CheckContext) -> CheckResult:
    SEEN["asks"] = context
    return CheckResult(True)


def plain(text: str, *, minimum: int = 0) -> CheckResult:
    SEEN["plain"] = minimum
    return CheckResult(True)


def kwargs_only(text: str, **options: Any) -> CheckResult:
    SEEN["kwargs"] = dict(options)
    return CheckResult(True)


def optional(text: str, context: CheckContext | None = None) -> bool:
    SEEN["optional"] = context
    return True


@pytest.fixture
def reg() -> Registry:
    SEEN.clear()
    r = Registry(autoload=False)
    for name, fn in (("asks", asks), ("plain", plain), ("kwargs", kwargs_only)):
        r.add(name, fn)
    r.add("optional", optional)
    return r


def rubric(reg: Registry, *criteria: dict[str, Any]) -> Rubric:
    return Rubric.from_dict({"criteria": list(criteria)}, registry=reg)


def key(name: str, checker: str, **kw: Any) -> dict[str, Any]:
    return {"key": name, "description": "d", "checker": checker} | kw


def test_the_context_reaches_only_the_checkers_that_declare_it(reg: Registry) -> None:
    r = rubric(
        reg,
        key("a", "asks", options={"minimum": 2}),
        key("p", "plain", options={"minimum": 3}),
        key("k", "kwargs", options={"x": 1}),
        key("o", "optional"),
    )
    meta = {"product": "Acme"}
    ev = grade("draft", r, task="the task", reference="the ref", metadata=meta, registry=reg)
    assert ev.accepted
    ctx = SEEN["asks"]
    assert (ctx.task, ctx.reference, dict(ctx.metadata)) == ("the task", "the ref", meta)
    assert SEEN["plain"] == 3
    assert SEEN["kwargs"] == {"x": 1}  # **kwargs alone does not ask for the context
    assert SEEN["optional"] == ctx


def test_without_reference_or_metadata_the_context_is_empty(reg: Registry) -> None:
    grade("draft", rubric(reg, key("a", "asks")), registry=reg)
    assert SEEN["asks"] == CheckContext("", None, {})


def test_metadata_is_a_read_only_copy(reg: Registry) -> None:
    meta = {"product": "Acme"}
    grade("d", rubric(reg, key("a", "asks")), metadata=meta, registry=reg)
    meta["product"] = "changed"
    assert SEEN["asks"].metadata["product"] == "Acme"
    with pytest.raises(TypeError):
        SEEN["asks"].metadata["product"] = "x"


def test_context_is_never_a_rubric_option(reg: Registry) -> None:
    with pytest.raises(RubricError, match="unknown option 'context' for checker 'asks'"):
        rubric(reg, key("a", "asks", options={"context": "x"}))


def test_a_shadow_checker_gets_the_context_too(reg: Registry) -> None:
    r = rubric(reg, key("p", "plain", shadow="asks"))
    ev = grade("d", r, reference="ref", registry=reg)
    assert SEEN["asks"].reference == "ref"
    assert ev.shadows[0].status == "ok"


def test_bad_reference_or_metadata_types_are_refused(reg: Registry) -> None:
    with pytest.raises(TypeError, match="metadata must be a mapping"):
        grade("d", rubric(reg, key("a", "asks")), metadata=["x"], registry=reg)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reference must be a string"):
        grade("d", rubric(reg, key("a", "asks")), reference=3, registry=reg)  # type: ignore[arg-type]


# -- templates in the built-in text checkers ------------------------------------------------


def ctx(**kw: Any) -> CheckContext:
    return CheckContext(**kw)


def test_contains_a_metadata_value_passes_and_its_absence_fails() -> None:
    c = ctx(metadata={"product": "Acme Phone"})
    assert contains("Meet the Acme Phone.", values=("{metadata[product]}",), context=c).passed
    r = contains("Meet our phone.", values=("{metadata[product]}",), context=c)
    assert not r.passed and r.issues == ["the text does not contain 'Acme Phone'; add it"]


def test_quoted_metadata_names_and_lists_expand() -> None:
    c = ctx(metadata={"products": ["Acme", "Bolt"]})
    assert contains("Acme and Bolt", values=('{metadata["products"]}',), context=c).passed
    r = contains("Acme only", values=("{metadata[products]}",), context=c)
    assert r.issues == ["the text does not contain 'Bolt'; add it"]


def test_task_and_reference_fields() -> None:
    c = ctx(task="Write about Oslo", reference="42")
    assert contains("The answer is 42.", values=("answer is {reference}",), context=c).passed
    assert not not_contains("Write about Oslo", values=("{task}",), context=c).passed


def test_a_missing_field_fails_with_an_issue_saying_what_to_give() -> None:
    r = contains("anything", values=("{reference}",), context=ctx())
    assert not r.passed and "has no reference answer" in r.issues[0]
    assert "--reference FILE" in r.issues[0]
    r = contains("anything", values=("{metadata[sku]}",), context=ctx(metadata={"a": 1}))
    assert not r.passed and "metadata has no 'sku' (its entries: a)" in r.issues[0]
    r = not_contains("anything", values=("{task}",), context=None)
    assert not r.passed and "no task was given" in r.issues[0]  # never a pass for not_contains
    r = regex("anything", pattern="{metadata[x]}", context=ctx(metadata={"x": {"y": 1}}))
    assert not r.passed and "give a non-empty string or number" in r.issues[0]


def test_regex_fields_are_escaped_and_quantifiers_untouched() -> None:
    c = ctx(metadata={"v": "1.5"})
    assert regex("version 1.5", pattern=r"version {metadata[v]}", context=c).passed
    assert not regex("version 105", pattern=r"version {metadata[v]}", context=c).passed
    assert regex("code 123", pattern=r"\d{3}", context=c).passed
    assert regex("a {name}", pattern=r"\{name}", context=c).passed  # an escaped brace is literal
    assert regex("{x}", pattern=r"{{x}}", context=c).passed
    lists = ctx(metadata={"v": ["a.b", "c"]})
    assert render_pattern("^{metadata[v]}$", lists) == (r"^(?:a\.b|c)$", None)


def test_literal_braces_in_values() -> None:
    assert contains('{"a": 1} and {x}', values=('{"a": 1}', "{{x}}"), context=None).passed


@pytest.mark.parametrize(
    ("options", "checker", "fragment"),
    [
        ({"values": ["{task.product}"]}, "contains", "unknown template field {task.product"),
        ({"values": ["{refrence}"]}, "contains", "unknown template field {refrence}"),
        ({"values": ["{metadata}"]}, "not_contains", "names no metadata entry"),
        ({"values": ["{task[x]}"]}, "contains", "only metadata takes [name]"),
        ({"pattern": "{reference}("}, "regex", "is not a valid regular expression"),
        ({"pattern": "{product}"}, "regex", "unknown template field {product}"),
    ],
)
def test_a_template_naming_an_unknown_field_is_a_rubric_error(
    options: dict[str, Any], checker: str, fragment: str
) -> None:
    with pytest.raises(RubricError) as info:
        Rubric.from_dict(
            {"criteria": [{"key": "k", "description": "d", "checker": checker, "options": options}]}
        )
    assert fragment in str(info.value) and "criterion 'k'" in str(info.value)


def test_templates_load_and_run_through_grade() -> None:
    r = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "names_product",
                    "description": "Names the product.",
                    "checker": "contains",
                    "options": {"values": ["{metadata[product]}"]},
                },
                {
                    "key": "same",
                    "description": "Gives the reference answer.",
                    "checker": "matches_reference",
                    "options": {"normalize": "case"},
                },
            ]
        }
    )
    good = grade("ACME  rocks", r, reference="acme rocks", metadata={"product": "ACME"})
    assert good.accepted
    bad = grade("Bolt rocks", r, reference="acme rocks", metadata={"product": "ACME"})
    assert bad.failed_keys == ("names_product", "same")


def test_pathological_templates_are_linear() -> None:
    nasty = "{a" * 50_000 + "{{" * 50_000 + "{metadata[" * 20_000 + "\\" * 10_001
    started = time.perf_counter()
    assert "unknown template field {a" not in (template_problem(nasty, regex=True) or "")
    expand_values((nasty,), None)
    render_pattern(nasty, None)
    assert time.perf_counter() - started < 5


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("{}[]\\atskmer_\"' x1"), max_size=40))
def test_template_helpers_never_raise(template: str) -> None:
    problem = template_problem(template)
    values, problems = expand_values((template,), ctx(task="t", reference="r", metadata={"k": 1}))
    if problem is None and "[" not in template:
        assert problems == [] or all("metadata" in p for p in problems)
    render_pattern(template, None)
    assert isinstance(values, list)


# -- matches_reference --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reference", "normalize", "passed"),
    [
        ("Paris", "Paris", "none", True),
        ("Paris ", "Paris", "none", False),
        ("The  answer\nis Paris", "The answer is Paris", "whitespace", True),
        ("the answer is paris", "The answer is Paris", "whitespace", False),
        ("the answer is PARIS", "The answer is Paris", "case", True),
        ("the answer is Rome", "The answer is Paris", "case", False),
    ],
)
def test_matches_reference_equality(
    text: str, reference: str, normalize: Any, passed: bool
) -> None:
    r = matches_reference(text, normalize=normalize, context=ctx(reference=reference))
    assert r.passed is passed
    if not passed:
        assert (
            "does not match the reference" in r.issues[0] and "differ from character" in r.issues[0]
        )


def test_matches_reference_by_similarity_scores_it() -> None:
    ref = "the quick brown fox jumps over the lazy dog"
    near = matches_reference(
        "the quick brown fox jumps over the lazy cat",
        min_similarity=0.8,
        context=ctx(reference=ref),
    )
    assert not near.passed and near.score == pytest.approx(7.78, abs=0.01)
    ok = matches_reference(ref + " today", min_similarity=0.8, context=ctx(reference=ref))
    assert ok.passed and ok.score is not None and ok.score >= 8


def test_matches_reference_without_a_reference_fails() -> None:
    r = matches_reference("anything", context=ctx())
    assert not r.passed and "no reference answer was given" in r.issues[0]
    assert not matches_reference("anything", context=None).passed


def test_similarity_is_linear_on_long_repetitive_text() -> None:
    a, b = "word " * 200_000, "word " * 199_999 + "other"
    started = time.perf_counter()
    assert 0.99 < similarity(a, b) < 1
    assert time.perf_counter() - started < 5


@settings(max_examples=100, deadline=None)
@given(
    st.text(max_size=200), st.text(max_size=200), st.sampled_from(["none", "whitespace", "case"])
)
def test_matches_reference_never_raises(text: str, reference: str, normalize: Any) -> None:
    r = matches_reference(text, normalize=normalize, context=ctx(reference=reference))
    assert r.passed is (text == reference) or normalize != "none"


# -- JSONL and the command line -----------------------------------------------------------

RUBRIC_TOML = """
[[criteria]]
key = "names_product"
description = "Names the product."
checker = "contains"
options = { values = ["{metadata[product]}"] }

[[criteria]]
key = "same"
description = "Gives the reference answer."
checker = "matches_reference"
"""


def test_jsonl_lines_carry_reference_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "drafts.jsonl"
    path.write_text(
        '{"task": "t", "draft": "d", "reference": "r", "metadata": {"product": "Acme"}}\n'
        '{"task": "t", "draft": "d2"}\n'
    )
    first, second = read_drafts(path)
    assert (first.reference, dict(first.metadata)) == ("r", {"product": "Acme"})
    assert (second.reference, dict(second.metadata)) == (None, {})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"task": "t", "draft": "d", "reference": 3}',
            "drafts.jsonl:1: 'reference' must be a string",
        ),
        (
            '{"task": "t", "draft": "d", "metadata": [1]}',
            "drafts.jsonl:1: 'metadata' must be an object",
        ),
        ('{"task": "t", "draft": "d", "referense": "x"}', "did you mean 'reference'?"),
    ],
)
def test_bad_context_fields_in_jsonl(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "drafts.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError, match=re.escape(message)):
        read_drafts(path)


def test_labelled_lines_reach_checkers_through_calibrate(tmp_path: Path) -> None:
    rubric_path = tmp_path / "r.toml"
    rubric_path.write_text(RUBRIC_TOML)
    r = Rubric.load(rubric_path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"task": "t", "draft": "Acme rocks", "reference": "Acme rocks", '
        '"metadata": {"product": "Acme"}, "labels": {"same": true, "names_product": true}}\n'
    )
    report = calibrate(read_labels(labels, r), r)
    assert {k.key: k.stats.agreement for k in report.keys} == {"names_product": 1.0, "same": 1.0}


def test_cli_grade_reads_reference_and_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric_path, draft, ref = tmp_path / "r.toml", tmp_path / "d.md", tmp_path / "ref.md"
    rubric_path.write_text(RUBRIC_TOML)
    draft.write_text("Acme  rocks\n")
    ref.write_text("Acme rocks")
    meta = '{"product": "Acme"}'
    args = ["grade", str(draft), "--rubric", str(rubric_path)]
    assert main([*args, "--reference", str(ref), "--metadata", meta, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] is True
    assert main(args) == 1  # neither given: both keys fail, with issues saying what to give
    out = capsys.readouterr().out
    assert "no reference answer was given" in out and "metadata has no 'product'" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metadata", "{nope"], "--metadata is not valid JSON"),
        (["--metadata", "[1]"], "--metadata must be a JSON object"),
        (["--reference", "/no/such/file"], "reference file not found"),
    ],
)
def test_cli_grade_bad_context_arguments_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    rubric_path, draft = tmp_path / "r.toml", tmp_path / "d.md"
    rubric_path.write_text(RUBRIC_TOML)
    draft.write_text("x")
    assert main(["grade", str(draft), "--rubric", str(rubric_path), *extra]) == 2
    assert message in capsys.readouterr().err
