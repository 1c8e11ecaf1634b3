from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from gradeloop import CheckResult, Rubric, RubricError, checker, get_checker, grade, hookimpl
from gradeloop.errors import CheckerConflictError, UnknownCheckerError
from gradeloop.grading import Registry
from gradeloop.grading._checks import options_model_for, run_checker
from gradeloop.grading._registry import default_registry, unregister_checker
from tests.support.plugin_dists import CLASHES, GOOD, IMPORT_FAILS, REGISTER_FAILS, make_dist


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def test_third_party_plugin_is_found_through_its_entry_point(site: Path) -> None:
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    reg = Registry()
    info = reg.info("shouty")
    assert info.plugin == "shouty" and info.distribution == "gradeloop-shouty"
    assert info.description == "Fails drafts that are mostly capital letters."
    assert info.fn("HELLO THERE you").passed is False
    assert info.fn("hello there").passed is True


def test_builtin_checkers_come_through_the_same_entry_point_group() -> None:
    reg = Registry()
    assert reg.plugins["builtin"] == "gradeloop"
    assert reg.failures == []


def test_a_plugin_that_fails_to_import_is_reported_and_others_still_load(site: Path) -> None:
    make_dist(site, "gradeloop-broken", {"broken": IMPORT_FAILS})
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    reg = Registry()
    assert "shouty" in reg
    [failure] = [f for f in reg.failures if f.plugin == "broken"]
    assert failure.distribution == "gradeloop-broken"
    assert "ImportError: this plugin is broken on purpose" in failure.error


def test_a_plugin_whose_hook_raises_is_reported(site: Path) -> None:
    make_dist(site, "gradeloop-moody", {"moody": REGISTER_FAILS})
    reg = Registry()
    assert [f.plugin for f in reg.failures] == ["moody"]
    assert "cannot register today" in reg.failures[0].error


def test_two_plugins_with_one_checker_name_is_an_error_naming_both(site: Path) -> None:
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    make_dist(site, "gradeloop-clash", {"clash": CLASHES})
    reg = Registry()
    with pytest.raises(CheckerConflictError) as info:
        reg.info("shouty")
    assert "'shouty'" in str(info.value) and "'clash'" in str(info.value)
    assert "shouty" not in reg
    with pytest.raises(RubricError, match="registered by both"):
        Rubric.from_dict(
            {"criteria": [{"key": "k", "description": "d", "checker": "shouty"}]}, registry=reg
        )


def test_blocking_a_plugin_by_name(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    make_dist(site, "gradeloop-clash", {"clash": CLASHES})
    monkeypatch.setenv("GRADELOOP_BLOCK_PLUGINS", "clash")
    reg = Registry()
    assert reg.info("shouty").plugin == "shouty"
    assert "clash" not in reg.plugins


def test_disabling_autoload_loads_only_named_plugins(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    monkeypatch.setenv("GRADELOOP_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert "shouty" not in Registry() and "builtin" not in Registry().plugins
    monkeypatch.setenv("GRADELOOP_PLUGINS", "shouty")
    reg = Registry()
    assert "shouty" in reg and "builtin" not in reg.plugins


def test_loading_is_lazy_and_idempotent(site: Path) -> None:
    before = {m for m in sys.modules if m.startswith("gradeloop_shouty_")}
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    reg = Registry()
    # nothing is imported until something needs a checker
    assert {m for m in sys.modules if m.startswith("gradeloop_shouty_")} == before
    reg.load()
    assert {m for m in sys.modules if m.startswith("gradeloop_shouty_")} != before
    first = reg.info("shouty")
    reg.load()
    assert reg.info("shouty") is first


def test_unknown_checker_lists_the_registered_ones() -> None:
    reg = Registry(autoload=False)
    reg.add("a_check", lambda text: True)
    with pytest.raises(UnknownCheckerError) as info:
        reg.get("nope")
    assert str(info.value).startswith("unknown checker 'nope'; registered checkers: a_check")


def test_checker_decorator_registers_in_process() -> None:
    @checker("ends_with_period")
    def ends_with_period(text: str) -> bool:
        return text.rstrip().endswith(".")

    try:
        fn = get_checker("ends_with_period")
        assert fn is ends_with_period
        r = Rubric.from_dict(
            {"criteria": [{"key": "k", "description": "d", "checker": "ends_with_period"}]}
        )
        assert r["k"].source == "code"
    finally:
        unregister_checker("ends_with_period")
    with pytest.raises(UnknownCheckerError):
        get_checker("ends_with_period")


def test_decorator_refuses_to_steal_a_plugins_name() -> None:
    reg = Registry(autoload=False)

    class Plugin:
        @hookimpl
        def register_checkers(self, register):  # type: ignore[no-untyped-def]
            register("taken", lambda text: True)

    reg.register_plugin(Plugin(), name="someone")
    with pytest.raises(CheckerConflictError, match="'someone' and '<in-process>'"):
        reg.add("taken", lambda text: False)


def test_a_bare_bool_is_read_as_it_is_and_exceptions_become_failed_criteria() -> None:
    reg = Registry(autoload=False)
    reg.add("yes", lambda text: True)

    def explodes(text: str) -> CheckResult:
        raise ZeroDivisionError("boom")

    reg.add("explodes", explodes)
    reg.add("weird", lambda text: "yes")
    reg.add("no", lambda text: False)
    # a bool is an answer already: nothing is built for it, and grading reads it
    assert run_checker(reg.info("yes"), "x", {}) is True
    assert run_checker(reg.info("no"), "x", {}) is False
    broken = run_checker(reg.info("explodes"), "x", {})
    assert broken.passed is False
    assert broken.issues == ["checker 'explodes' raised ZeroDivisionError: boom"]
    weird = run_checker(reg.info("weird"), "x", {})
    assert weird.passed is False and "returned str" in weird.issues[0]


def test_checker_result_validates_itself() -> None:
    with pytest.raises(TypeError):
        CheckResult("yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CheckResult(True, score=11)
    with pytest.raises(ValueError):
        CheckResult(True, score=True)  # a bool is not a score
    assert CheckResult(True, score=10).score == 10


def test_an_option_named_like_a_pydantic_attribute_still_works() -> None:
    # `schema` would shadow BaseModel.schema; under filterwarnings=error the warning
    # alone would stop the checker registering
    def shaped(text: str, *, schema: dict[str, int], json: bool = False) -> bool:
        return bool(schema)

    reg = Registry(autoload=False)
    reg.add("shaped", shaped)
    info = reg.info("shaped")
    assert info.option_names() == ["schema", "json"]
    assert info.validate_options({"schema": {"a": "1"}}) == {"schema": {"a": 1}}
    expected = "unknown option 'shema' for checker 'shaped'; its options are: schema, json"
    with pytest.raises(ValueError, match=expected):
        info.validate_options({"shema": {}})


def test_a_typo_is_reported_before_the_checks_it_broke() -> None:
    def needs(text: str, *, pattern: str) -> bool:
        return True

    reg = Registry(autoload=False)
    reg.add("needs", needs)
    with pytest.raises(ValueError, match="unknown option 'patern'"):
        reg.info("needs").validate_options({"patern": "x"})
    with pytest.raises(ValueError, match="needs option 'pattern'"):
        reg.info("needs").validate_options({})


def test_an_options_model_is_built_once_per_function_and_name() -> None:
    def words(text: str, max_words: int = 3) -> bool:
        return len(text.split()) <= max_words

    first = options_model_for("words", words)
    assert first is not None and options_model_for("words", words) is first
    assert options_model_for("brief", words) is not first  # a model named for its checker
    # a registry made again (every CLI command) reuses it and still checks the options
    infos = []
    for _ in range(2):
        reg = Registry(autoload=False)
        reg.add("words", words)
        infos.append(reg.info("words"))
    assert infos[0].options_model is infos[1].options_model is first
    assert infos[1].validate_options({"max_words": "4"}) == {"max_words": 4}
    with pytest.raises(ValueError, match="unknown option 'max_word'"):
        infos[1].validate_options({"max_word": 4})


def test_a_checker_that_cannot_be_weakly_referenced_gets_a_model_each_time() -> None:
    class Slotted:
        __slots__ = ()

        def __call__(self, text: str, limit: int = 1) -> bool:
            return len(text) <= limit

    fn = Slotted()
    model = options_model_for("slotted", fn)
    assert model is not None and options_model_for("slotted", fn) is not model
    reg = Registry(autoload=False)
    reg.add("slotted", fn)
    assert reg.info("slotted").validate_options({"limit": 2}) == {"limit": 2}
    with pytest.raises(ValueError, match="unknown option 'limt'"):
        reg.info("slotted").validate_options({"limt": 2})


# -- grading looks each rubric's checkers up once, and again after a change -------------


def _run_again(fn: Any) -> Any:
    """``fn``'s definition run again (as a re-executed module does), now failing."""
    scope: dict[str, Any] = {"__name__": fn.__module__}
    exec(f"def {fn.__name__}(text):\n    return False\n", scope)
    again = scope[fn.__name__]
    again.__qualname__ = fn.__qualname__
    return again


def _one_key(reg: Registry, name: str) -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "d", "checker": name}]}, registry=reg
    )


def test_every_change_to_the_checkers_moves_the_version() -> None:
    reg = Registry(autoload=False)
    seen = [reg.version]

    def first(text: str) -> bool:
        return True

    reg.add("first", first)
    seen.append(reg.version)
    reg.add("first", first)  # the same function again: no change
    assert reg.version == seen[-1]
    reg.add("first", _run_again(first))  # a module run again: replaced
    seen.append(reg.version)
    reg._add("first", first, "another-plugin", None, None)  # a second owner: a conflict
    seen.append(reg.version)
    assert seen == sorted(set(seen)), seen  # each change moved it on


def _passed_once() -> tuple[Registry, Any, Rubric]:
    """A registry with one passing checker ``mine``, and a rubric graded with it once
    (so that grading has looked the checker up and kept it)."""
    reg = Registry(autoload=False)

    def mine(text: str) -> bool:
        return True

    reg.add("mine", mine)
    rubric = _one_key(reg, "mine")
    assert grade("x", rubric, registry=reg).accepted is True
    return reg, mine, rubric


def test_a_checker_replaced_after_grading_is_the_one_used_next() -> None:
    reg, mine, rubric = _passed_once()
    reg.add("mine", _run_again(mine))
    assert grade("x", rubric, registry=reg).accepted is False


def test_a_conflict_arising_after_grading_fails_the_key() -> None:
    reg, _, rubric = _passed_once()
    reg._add("mine", lambda text: True, "late-plugin", None, None)
    ev = grade("x", rubric, registry=reg)
    assert ev.accepted is False and ev["k"].status == "error"
    assert "late-plugin" in (ev["k"].error or "")


def test_an_unregistered_checker_fails_the_key_after_grading() -> None:
    @checker("goes_away")
    def goes_away(text: str) -> bool:
        return True

    try:
        rubric = _one_key(default_registry(), "goes_away")
        assert grade("x", rubric).accepted is True
    finally:
        unregister_checker("goes_away")
    ev = grade("x", rubric)
    assert ev.accepted is False and ev["k"].status == "error"


def test_a_rubric_graded_with_two_registries_uses_each_ones_checker() -> None:
    yes, no = Registry(autoload=False), Registry(autoload=False)
    yes.add("same", lambda text: True)
    no.add("same", lambda text: False)
    rubric = _one_key(yes, "same")
    assert [grade("x", rubric, registry=r).accepted for r in (yes, no, yes)] == [
        True,
        False,
        True,
    ]
