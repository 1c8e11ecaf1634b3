from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import CheckResult, Criterion, Rubric, RubricError
from gradeloop.grading import Registry, RubricPath


def max_len(text: str, *, limit: int = 10, strict: bool = False) -> CheckResult:
    return CheckResult(passed=len(text) <= limit)


@pytest.fixture
def registry() -> Registry:
    reg = Registry(autoload=False)
    reg.add("max_len", max_len)
    return reg


def c(**kw: Any) -> dict[str, Any]:
    return {"key": "k", "description": "d"} | kw


def load(data: dict[str, Any], registry: Registry) -> Rubric:
    return Rubric.from_dict(data, registry=registry)


def test_a_valid_rubric_loads_with_defaults(registry: Registry) -> None:
    r = load({"criteria": [c(), c(key="m", checker="max_len", options={"limit": 3})]}, registry)
    assert r.keys == ("k", "m")
    assert r["k"].source == "judge" and r["k"].weight == 1.0 and r["k"].scale == "pass_fail"
    assert r["m"].source == "code" and r["m"].filled_by == "max_len"
    assert r.judge_keys == ("k",)
    assert r.pass_score is None


def test_checker_judge_means_the_judge(registry: Registry) -> None:
    r = load({"criteria": [c(checker="judge")]}, registry)
    assert r["k"].checker is None and r["k"].source == "judge"


def test_scored_criterion_threshold_defaults_to_7(registry: Registry) -> None:
    r = load({"criteria": [c(scale="score")]}, registry)
    assert r["k"].pass_threshold == 7


@pytest.mark.parametrize(
    ("criterion", "fragment"),
    [
        (c(wieght=2), "unknown criterion field 'wieght'; did you mean 'weight'?"),
        ({"description": "d"}, "missing required field 'key'"),
        (c(description="  "), "description is empty"),
        (c(weight=-1), "weight must be a number >= 0"),
        (c(scale="score", threshold=11), "threshold must be between 1 and 10"),
        (c(scale="score", threshold=0), "threshold must be between 1 and 10"),
        (c(threshold=5), "'threshold' applies only to scale"),
        (c(scale="stars"), "scale must be 'pass_fail' or 'score'"),
        (c(key="has space"), "a key is 1-64 letters"),
        (c(checker="nope"), "unknown checker 'nope'; registered checkers: max_len"),
        (c(checker="max_len", options={"limt": 3}), "unknown option 'limt'"),
        (c(checker="max_len", options={"limit": "three"}), "option 'limit'"),
        (c(options={"limit": 3}), "'options' is only for criteria filled by a checker"),
    ],
)
def test_bad_criteria_name_the_criterion_and_the_fix(
    registry: Registry, criterion: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(RubricError) as info:
        load({"criteria": [criterion]}, registry)
    assert fragment in str(info.value)
    assert "criterion" in str(info.value)


def test_duplicate_keys_are_refused(registry: Registry) -> None:
    with pytest.raises(RubricError, match="duplicate key 'k'"):
        load({"criteria": [c(), c()]}, registry)


def test_top_level_typo_is_refused(registry: Registry) -> None:
    with pytest.raises(RubricError, match="did you mean 'pass_score'"):
        load({"criteria": [c()], "pass_scor": 8}, registry)


@pytest.mark.parametrize("bad", [11, -1, "high", True])
def test_pass_score_must_be_0_to_10(registry: Registry, bad: object) -> None:
    with pytest.raises(RubricError, match="pass_score"):
        load({"criteria": [c()], "pass_score": bad}, registry)


def test_empty_and_zero_weight_rubrics_are_refused(registry: Registry) -> None:
    with pytest.raises(RubricError, match="no criteria"):
        load({"criteria": []}, registry)
    with pytest.raises(RubricError, match="every weight is 0"):
        load({"criteria": [c(weight=0)]}, registry)


def test_options_are_validated_and_coerced_at_load(registry: Registry) -> None:
    r = load({"criteria": [c(checker="max_len", options={"limit": "4"})]}, registry)
    assert r["k"].options == {"limit": 4}


def test_toml_file_loads_and_errors_name_the_file_and_line(
    tmp_path: Path, registry: Registry
) -> None:
    good = tmp_path / "r.toml"
    good.write_text(
        'pass_score = 8.0\n\n[[criteria]]\nkey = "a"\ndescription = "x"\n\n'
        '[[criteria]]\nkey = "b"\ndescription = "y"\nchecker = "max_len"\n'
        "options = { limit = 5 }\n",
        encoding="utf-8",
    )
    r = Rubric.load(good, registry=registry)
    assert r.keys == ("a", "b") and r.pass_score == 8.0 and r.path == good

    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[[criteria]]\nkey = "a"\ndescription = "x"\n\n[[criteria]]\nkey = "b"\n'
        'description = "y"\nwieght = 2\n',
        encoding="utf-8",
    )
    with pytest.raises(RubricError) as info:
        Rubric.load(bad, registry=registry)
    assert str(info.value).startswith(f"{bad}:5, criterion 'b': unknown criterion field")


def test_broken_toml_reports_the_line(tmp_path: Path, registry: Registry) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text('[[criteria]]\nkey = "a\n', encoding="utf-8")
    with pytest.raises(RubricError) as info:
        Rubric.load(bad, registry=registry)
    assert f"{bad}:2" in str(info.value) and "invalid TOML" in str(info.value)


def test_json_rubric_loads(tmp_path: Path, registry: Registry) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"criteria": [c()]}), encoding="utf-8")
    assert Rubric.load(p, registry=registry).keys == ("k",)
    p.write_text("{", encoding="utf-8")
    with pytest.raises(RubricError, match="invalid JSON"):
        Rubric.load(p, registry=registry)


@pytest.mark.parametrize("content", [None, b"\xff\xfe\x00bad"])
def test_missing_and_non_utf8_files(
    tmp_path: Path, registry: Registry, content: bytes | None
) -> None:
    p = tmp_path / "r.toml"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(RubricError, match=str(p)):
        Rubric.load(p, registry=registry)


def test_round_trip_through_to_dict(registry: Registry) -> None:
    data = {
        "criteria": [
            c(scale="score", weight=0.4, threshold=8),
            c(key="m", checker="max_len", options={"limit": 3}),
        ],
        "pass_score": 7.5,
    }
    r = load(data, registry)
    assert load(r.to_dict(), registry) == r


def test_criteria_block_names_every_criterion(registry: Registry) -> None:
    r = load({"criteria": [c(scale="score"), c(key="m", checker="max_len")]}, registry)
    block = r.criteria_block()
    assert block.startswith("<criteria>") and "k (scored 1-10, needs 7): d" in block
    assert "m: d" in block


def test_criterion_is_immutable() -> None:
    crit = Criterion(key="k", description="d")
    with pytest.raises(Exception, match="frozen"):
        crit.key = "other"  # type: ignore[misc]


# -- paths in a rubric are relative to the rubric file -------------------------------------


def reads_file(text: str, *, path: RubricPath = None) -> CheckResult:
    return CheckResult(passed=path is not None and Path(path).read_text() in text)


def test_a_rubric_path_option_is_read_from_the_rubric_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reg = Registry(autoload=False)
    reg.add("reads_file", reads_file)
    folder = tmp_path / "rubrics"
    folder.mkdir()
    (folder / "needle.txt").write_text("needle")
    rubric_file = folder / "r.toml"
    rubric_file.write_text(
        '[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "reads_file"\n'
        'options = { path = "needle.txt" }\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not the rubric's folder
    rubric = Rubric.load(rubric_file, registry=reg)
    assert rubric["k"].options["path"] == str(folder.resolve() / "needle.txt")
    # without a file, the working directory is the base (and absolute paths stay put)
    from_dict = Rubric.from_dict(
        {"criteria": [c(checker="reads_file", options={"path": "x.txt"})]}, registry=reg
    )
    assert from_dict["k"].options["path"] == str(elsewhere.resolve() / "x.txt")


def test_json_schema_file_beside_the_rubric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradeloop import grade

    (tmp_path / "order.schema.json").write_text(json.dumps({"type": "object"}))
    rubric_file = tmp_path / "rubric.toml"
    rubric_file.write_text(
        '[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "json_schema"\n'
        'options = { schema_file = "order.schema.json" }\n'
    )
    monkeypatch.chdir(tmp_path.parent)
    rubric = Rubric.load(rubric_file)
    assert grade("{}", rubric).accepted and not grade("[]", rubric).accepted
    rubric_file.write_text(rubric_file.read_text().replace("order.schema", "gone.schema"))
    with pytest.raises(RubricError, match="read from the rubric file's folder"):
        Rubric.load(rubric_file)
