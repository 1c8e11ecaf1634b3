"""Weights and overall scores are finite numbers; JSON never carries NaN or Infinity;
and with keys not checked there is no overall score (None) on every road."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import CheckResult, Rubric, grade
from gradeloop.errors import RubricError
from gradeloop.grading import CriterionResult, Registry
from gradeloop.grading._grade import merge
from gradeloop.grading._jsonout import dumps, finite
from tests.cli.test_cli_grade_many import files
from tests.support.cli_helpers import cli


def write(tmp_path: Path, a: str, b: str) -> tuple[str, str]:
    """A rubric of two length-checked keys with weights ``a`` and ``b``, and a draft."""
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        "pass_score = 8\n"
        + "".join(
            f'[[criteria]]\nkey = "{key}"\ndescription = "Short."\nchecker = "length"\n'
            f"options = {{ max_words = 50 }}\nweight = {weight}\n"
            for key, weight in (("a", a), ("b", b))
        )
    )
    draft = tmp_path / "d.md"
    draft.write_text("hello world\n")
    return str(draft), str(rubric)


def test_weights_whose_sum_overflows_are_refused_at_load_naming_the_criterion(
    tmp_path: Path,
) -> None:
    draft, rubric = write(tmp_path, "1e307", "1e308")
    ran = cli("grade", draft, "--rubric", rubric, "--json")
    assert ran.code == 2 and ran.out == ""
    assert "criterion 'b'" in ran.err and "weight" in ran.err
    assert len(ran.err.strip().splitlines()) == 1


def test_large_finite_weights_that_add_up_are_accepted(tmp_path: Path) -> None:
    draft, rubric = write(tmp_path, "1e300", "1e300")
    ran = cli("grade", draft, "--rubric", rubric, "--json")
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    assert data["overall_score"] == 10.0 and data["passed"] is True


def test_one_weight_too_large_for_a_score_of_ten_is_refused() -> None:
    with pytest.raises(RubricError, match="'a'"):
        Rubric.from_dict(
            {"criteria": [{"key": "a", "description": "x", "weight": 1e308}]},
        )


def test_an_overall_score_that_is_not_finite_is_never_accepted() -> None:
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "a", "description": "x"}, {"key": "b", "description": "y"}]}
    )
    # results built by hand (a caller's merge), whose weights overflow: NaN overall
    huge = {k: CriterionResult(k, 1e308, 10.0, True, "judge", "judge") for k in ("a", "b")}
    ev = merge(rubric, huge, None)
    assert ev.overall_score is not None and math.isnan(ev.overall_score)
    assert ev.accepted is False and ev.verdict.passed is False
    assert any("not a finite number" in i for i in ev.issues)
    assert ev.to_json()["overall_score"] is None
    json.loads(dumps(ev.to_json()), parse_constant=_refuse)
    fine = {k: CriterionResult(k, 1.0, 10.0, True, "judge", "judge") for k in ("a", "b")}
    assert merge(rubric, fine, None).accepted is True


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} in JSON output")


def test_json_output_writes_non_finite_numbers_as_null() -> None:
    data = {"a": math.nan, "b": [1.5, math.inf, (-math.inf,)], "c": {"d": "NaN"}}
    text = dumps(data)
    assert json.loads(text, parse_constant=_refuse) == {
        "a": None, "b": [1.5, None, [None]], "c": {"d": "NaN"}
    }  # fmt: skip
    assert dumps({"a": 1.0}) == json.dumps({"a": 1.0})  # untouched when finite
    assert data["a"] is math.nan  # the caller's value is not changed


def test_finite_copies_deep_values_without_recursion() -> None:
    deep: Any = math.nan
    for _ in range(100_000):
        deep = [deep]
    out = finite(deep)
    for _ in range(100_000):
        out = out[0]
    assert out is None


@given(st.recursive(st.floats() | st.text(max_size=3) | st.none(), lambda c: st.lists(c)
                    | st.dictionaries(st.text(max_size=3), c), max_leaves=20))  # fmt: skip
def test_dumps_is_always_standard_json(value: Any) -> None:
    json.loads(dumps(value), parse_constant=_refuse)


@given(st.text(), st.sampled_from(["", "\x7f", "\x85", "\x7f\x85"]), st.booleans())
def test_dumps_escapes_del_and_c1_controls_and_reads_back(
    text: str, control: str, ascii_only: bool
) -> None:
    for options in ({"ensure_ascii": ascii_only}, {}):  # {}: the usual call
        out = dumps({"t": text + control}, **options)
        assert not re.search("[\x7f-\x9f]", out)
        assert json.loads(out) == {"t": text + control}


# -- not checked: no overall score (None) -------------------------------------------


def ok(text: str) -> CheckResult:
    return CheckResult(True)


def test_code_only_grading_has_no_overall_score() -> None:
    reg = Registry(autoload=False)
    reg.add("ok", ok)
    rubric = Rubric.from_dict(
        {"criteria": [{"key": "a", "description": "x", "checker": "ok"},
                      {"key": "b", "description": "judged"}]},
        registry=reg,
    )  # fmt: skip
    ev = grade("text", rubric, skip_judge=True, registry=reg)
    assert ev.overall_score is None
    assert ev.to_json()["overall_score"] is None and ev.accepted is False
    code_only = Rubric.from_dict(
        {"criteria": [{"key": "a", "description": "x", "checker": "ok"}]}, registry=reg
    )
    assert grade("text", code_only, skip_judge=True, registry=reg).overall_score == 10.0


def test_code_only_many_drafts_print_no_score(tmp_path: Path) -> None:
    rubric, drafts = files(
        tmp_path,
        '[[criteria]]\nkey = "a"\ndescription = "x"\nchecker = "length"\n'
        'options = { max_words = 5 }\n[[criteria]]\nkey = "b"\ndescription = "judged"\n',
        {"id": "d1", "draft": "hello"},
    )
    ran = cli("grade", "--drafts", drafts, "--rubric", rubric, "--code-only")
    assert ran.code == 1, ran.err
    assert re.search(r"^d1 +NOT ACCEPTED +- ", ran.out, re.M), ran.out
    ran = cli("grade", "--drafts", drafts, "--rubric", rubric, "--code-only", "--json")
    assert json.loads(ran.out)["overall_score"] is None
