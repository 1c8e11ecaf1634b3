"""What a checker must be: called as fn(text, **options) (refused at registration
otherwise), returning a CheckResult whose fields hold what they promise (a subclass
that skips the checks is an error naming the checker, never exit 3); and a checker of
a plugin left out of loading says so."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gradeloop import CheckResult, Rubric, grade
from gradeloop.errors import CheckerSignatureError, RubricError
from gradeloop.grading import Registry
from gradeloop.grading._registry import builtin_checker_names
from tests.support.cli_helpers import cli
from tests.support.plugin_dists import GOOD, make_dist


@dataclass(frozen=True)
class Lax(CheckResult):
    def __post_init__(self) -> None:  # skips CheckResult's own checks
        pass


def rubric_for(reg: Registry, checker: str = "c") -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "x", "checker": checker}]}, registry=reg
    )


@pytest.mark.parametrize(
    ("returned", "fragment"),
    [
        (Lax("yes"), "passed is str, expected a bool"),  # type: ignore[arg-type]
        (Lax(1), "passed is int"),  # type: ignore[arg-type]
        (Lax(True, "not a list"), "issues is not a list of strings"),  # type: ignore[arg-type]
        (Lax(True, [3]), "issues is not a list of strings"),  # type: ignore[list-item]
        (Lax(True, [], float("nan")), "score is nan"),
        (Lax(True, [], 11), "score is 11"),
        (Lax(True, [], True), "score is True"),
    ],
)
def test_a_result_whose_fields_are_wrong_is_an_error_naming_the_checker(
    returned: CheckResult, fragment: str
) -> None:
    reg = Registry(autoload=False)
    reg.add("c", lambda text: returned)
    ev = grade("draft", rubric_for(reg), registry=reg)
    [c] = ev.criteria
    assert c.status == "error" and c.passed is False and ev.accepted is False
    assert "checker 'c' returned a Lax whose" in c.issues[0] and fragment in c.issues[0]


@pytest.mark.parametrize(
    ("issues", "ok"), [([3], False), (None, False), ((), True), (["fine"], True)]
)
def test_a_plain_result_has_its_issues_checked_too(issues: Any, ok: bool) -> None:
    # CheckResult's own checks cover passed and score, not what is in issues
    reg = Registry(autoload=False)
    reg.add("c", lambda text: CheckResult(True, issues))
    [c] = grade("draft", rubric_for(reg), registry=reg).criteria
    assert (c.status == "met") is ok
    if not ok:
        assert "returned a CheckResult whose issues is not a list of strings" in c.issues[0]


def test_a_subclass_with_right_fields_is_used_as_it_is() -> None:
    reg = Registry(autoload=False)
    reg.add("c", lambda text: Lax(True, ["fine"], 9))
    ev = grade("draft", rubric_for(reg), registry=reg)
    assert ev.accepted is True and ev.criteria[0].issues == ("fine",)


def test_the_cli_reports_a_bad_result_and_exits_1_not_3(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from dataclasses import dataclass\n"
        "from gradeloop import CheckResult, checker\n"
        "@dataclass(frozen=True)\n"
        "class Mine(CheckResult):\n"
        "    def __post_init__(self):\n"
        "        pass\n"
        "@checker('weird')\n"
        "def weird(text):\n"
        "    return Mine('yes')\n"
    )
    (tmp_path / "r.toml").write_text(
        'plugins = ["mine.py"]\n[[criteria]]\nkey = "w"\ndescription = "x"\nchecker = "weird"\n'
    )
    (tmp_path / "d.md").write_text("text\n")
    ran = cli("grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml"))
    assert ran.code == 1, ran.err
    assert "checker 'weird' returned a Mine whose passed is str" in ran.out


# -- signatures ------------------------------------------------------------------------


def no_params() -> bool:
    return True


def keyword_text(*, text: str) -> bool:
    return True


def two_positional(text: str, other: str, /) -> bool:
    return True


@pytest.mark.parametrize("fn", [no_params, keyword_text, two_positional])
def test_a_checker_that_cannot_take_the_text_is_refused_at_registration(fn: Any) -> None:
    reg = Registry(autoload=False)
    with pytest.raises(CheckerSignatureError, match=r"checker 'bad' cannot be registered"):
        reg.add("bad", fn)
    assert "bad" not in reg


def plain(text: str) -> bool:
    return True


def with_options(text: str, *, n: int = 1) -> bool:
    return True


def positional_only(text: str, /, n: int = 1) -> bool:
    return True


def star_args(*args: Any, **kwargs: Any) -> bool:
    return True


@pytest.mark.parametrize("fn", [plain, with_options, positional_only, star_args, len])
def test_checkers_callable_as_text_and_options_are_accepted(fn: Any) -> None:
    reg = Registry(autoload=False)
    reg.add("good", fn)
    assert "good" in reg


def test_a_plugin_file_with_a_bad_signature_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "from gradeloop import checker\n@checker('nothing')\ndef nothing():\n    return True\n"
    )
    (tmp_path / "d.md").write_text("x\n")
    ran = cli("--plugin", str(tmp_path / "bad.py"), "checkers")
    assert ran.code == 2
    assert "cannot load plugin" in ran.err and "bad.py" in ran.err
    assert "checker 'nothing' cannot be registered" in ran.err


def test_an_entry_point_plugin_with_a_bad_signature_is_a_plugin_failure(tmp_path: Path) -> None:
    source = """
        from gradeloop import hookimpl

        def nothing():
            return True

        @hookimpl
        def register_checkers(register):
            register("nothing", nothing)
    """
    site = make_dist(tmp_path / "site", "gradeloop-badsig", {"badsig": source})
    sys.path.insert(0, str(site))
    try:
        reg = Registry()
        [failure] = [f for f in reg.failures if f.plugin == "badsig"]
        assert "CheckerSignatureError" in failure.error and "nothing" not in reg.names()
    finally:
        sys.path.remove(str(site))


# -- blocked plugins -------------------------------------------------------------------


def test_a_checker_of_the_blocked_builtin_plugin_says_so() -> None:
    with pytest.raises(RubricError, match="belongs to plugin 'builtin', which is blocked"):
        rubric_for(Registry(block={"builtin"}), "json_valid")
    with pytest.raises(RubricError, match="plugin autoload is disabled"):
        rubric_for(Registry(autoload=False), "json_valid")
    assert rubric_for(Registry(), "json_valid")["k"].checker == "json_valid"  # loads


def test_an_unknown_name_with_the_builtin_blocked_is_still_unknown() -> None:
    with pytest.raises(RubricError, match="unknown checker 'nope'"):
        rubric_for(Registry(block={"builtin"}), "nope")


def test_a_third_party_plugin_left_out_is_named_as_the_possible_owner(tmp_path: Path) -> None:
    site = make_dist(tmp_path / "site", "gradeloop-shouty", {"shouty": GOOD})
    (tmp_path / "r.toml").write_text(
        '[[criteria]]\nkey = "k"\ndescription = "x"\nchecker = "shouty"\n'
    )
    (tmp_path / "d.md").write_text("x\n")
    env = {"PYTHONPATH": str(site)}
    args = ["grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml")]
    ran = cli("--block-plugin", "shouty", *args, env=env)
    assert ran.code == 2
    assert "may belong to a plugin that was not loaded: 'shouty' (blocked)" in ran.err
    assert "--plugin ./my_checkers.py" not in ran.err
    assert cli(*args, env=env).code == 0


def test_the_builtin_names_are_what_the_builtin_plugin_registers() -> None:
    reg = Registry()
    assert builtin_checker_names() == {c.name for c in reg if c.plugin == "builtin"}
