"""Checkers from the user's own module or file: --plugin, a rubric's plugins, GRADELOOP_PLUGINS."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from gradeloop import Rubric, RubricError, grade
from gradeloop.errors import PluginError
from gradeloop.grading import Registry
from gradeloop.grading._plugins import load_plugin
from gradeloop.grading._registry import default_registry
from tests.support.cli_helpers import cli
from tests.support.plugin_dists import GOOD, make_dist

DECORATED = """
    from gradeloop import CheckResult, checker


    @checker("no_exclamations")
    def no_exclamations(text: str, *, max_count: int = 0) -> CheckResult:
        '''At most max_count exclamation marks.'''
        n = text.count("!")
        return CheckResult(n <= max_count, [] if n <= max_count else [f"{n} exclamation marks"])
"""

HOOKED = """
    from gradeloop import hookimpl


    def no_tabs(text: str) -> bool:
        return "\\t" not in text


    @hookimpl
    def register_checkers(register):
        register("no_tabs", no_tabs)
"""

RUBRIC = """
[[criteria]]
key = "calm"
description = "No exclamation marks."
checker = "no_exclamations"
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


# -- the library ---------------------------------------------------------------------------


def test_a_file_of_decorated_checkers_loads_into_the_registry_that_asked(tmp_path: Path) -> None:
    plugin = write(tmp_path / "my_checkers.py", DECORATED)
    reg = Registry(autoload=False)
    name = load_plugin(str(plugin), reg)
    assert reg.info("no_exclamations").plugin == name == str(plugin.resolve())
    assert "no_exclamations" not in default_registry()  # not leaked into the global one
    again = Registry(autoload=False)  # imported once, given to every registry that asks
    load_plugin(str(plugin), again)
    assert again.get("no_exclamations") is reg.get("no_exclamations")
    load_plugin(str(plugin), reg)  # loading twice is harmless
    assert reg.names() == ["no_exclamations"]


def test_a_module_with_a_register_checkers_hook_loads_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "tab_rules_hooked.py", HOOKED)
    monkeypatch.chdir(tmp_path)  # a module name is looked for in the working directory
    reg = Registry(autoload=False)
    assert load_plugin("tab_rules_hooked", reg) == "tab_rules_hooked"
    assert reg.info("no_tabs").plugin == "tab_rules_hooked"
    assert str(tmp_path) not in sys.path  # searched there, not left on the path


def test_an_installed_plugin_can_be_named_even_with_autoload_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = make_dist(tmp_path / "site", "gradeloop-shouty", {"shouty": GOOD})
    monkeypatch.syspath_prepend(str(site))
    reg = Registry(autoload=False)
    assert "shouty" not in reg
    load_plugin("shouty", reg)
    assert reg.info("shouty").distribution == "gradeloop-shouty"


@pytest.mark.parametrize(
    ("spec", "source", "message"),
    [
        ("./missing.py", None, "file not found: "),
        ("no_such_module_xyz", None, "no module named 'no_such_module_xyz'"),
        ("./raises.py", "raise RuntimeError('broken on purpose')\n", "raised RuntimeError"),
        ("./empty.py", "X = 1\n", "it registers no checkers"),
        ("./deps.py", "import not_installed_dep_xyz\n", "No module named 'not_installed_dep_xyz'"),
        ("   ", None, "the name is empty"),
    ],
)
def test_a_plugin_that_cannot_be_loaded_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, source: str | None, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if source is not None:
        write(tmp_path / spec, source)
    before = set(sys.modules)
    with pytest.raises(PluginError, match=message) as info:
        load_plugin(spec, Registry(autoload=False), origin="--plugin")
    assert "(from --plugin)" in str(info.value)
    assert not {m for m in set(sys.modules) - before if m.startswith("gradeloop_user_plugin")}


def test_a_directory_is_not_a_plugin(tmp_path: Path) -> None:
    (tmp_path / "pkg.py").mkdir()
    with pytest.raises(PluginError, match=r"is not a file; give the \.py file"):
        load_plugin(str(tmp_path / "pkg.py"), Registry(autoload=False))


def test_the_checker_decorator_outside_a_plugin_still_registers_in_process() -> None:
    from gradeloop import checker
    from gradeloop.grading._registry import unregister_checker

    @checker("plain_in_process")
    def plain(text: str) -> bool:
        return True

    try:
        assert default_registry().info("plain_in_process").plugin == "<in-process>"
    finally:
        unregister_checker("plain_in_process")


# -- a rubric's plugins ----------------------------------------------------------------


def test_a_rubrics_plugins_are_read_from_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    write(folder / "checks" / "calm.py", DECORATED)
    rubric_file = folder / "rubric.toml"
    rubric_file.write_text('plugins = ["checks/calm.py"]\n' + RUBRIC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the rubric's folder
    rubric = Rubric.load(rubric_file)
    assert grade("Calm.", rubric).accepted and not grade("Wow!", rubric).accepted
    kept = rubric.to_dict()["plugins"]
    assert kept == [str((folder / "checks" / "calm.py").resolve())]
    monkeypatch.chdir(folder / "checks")
    assert Rubric.from_dict(rubric.to_dict()).keys == ("calm",)  # loads from anywhere


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        ('plugins = ["./gone.py"]', "cannot load plugin './gone.py' (from the rubric's plugins)"),
        ('plugins = "./calm.py"', "plugins must be a list"),
        ('plugins = [""]', "plugins must be a list"),
        ('plugin = ["./calm.py"]', "unknown rubric field 'plugin'; did you mean 'plugins'?"),
    ],
)
def test_a_rubrics_bad_plugins_are_a_rubric_error(
    tmp_path: Path, plugins: str, message: str
) -> None:
    rubric_file = tmp_path / "rubric.toml"
    rubric_file.write_text(plugins + "\n" + RUBRIC, encoding="utf-8")
    with pytest.raises(RubricError) as info:
        Rubric.load(rubric_file)
    assert message in str(info.value) and str(rubric_file) in str(info.value)


def test_the_unknown_checker_error_says_how_to_load_your_own(tmp_path: Path) -> None:
    rubric_file = tmp_path / "rubric.toml"
    rubric_file.write_text(RUBRIC, encoding="utf-8")
    with pytest.raises(RubricError) as info:
        Rubric.load(rubric_file)
    message = str(info.value)
    assert "unknown checker 'no_exclamations'" in message
    assert 'plugins = ["./my_checkers.py"]' in message and "GRADELOOP_PLUGINS" in message
    assert "--" not in message  # a library message names no command-line flag


# -- GRADELOOP_PLUGINS -----------------------------------------------------------------


def test_gradeloop_plugins_loads_files_and_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "calm_env.py", DECORATED)
    write(tmp_path / "tabs_env.py", HOOKED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRADELOOP_PLUGINS", "./calm_env.py, tabs_env")
    reg = Registry()
    assert {"no_exclamations", "no_tabs", "code_runs"} <= set(reg.names())


def test_gradeloop_plugins_naming_nothing_is_an_error_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADELOOP_PLUGINS", "builtin,not_a_module_xyz")
    reg = Registry()
    for _ in range(2):  # not a silent half-loaded registry on the second use
        with pytest.raises(PluginError, match=r"'not_a_module_xyz' \(from GRADELOOP_PLUGINS\)"):
            reg.names()


# -- the command line ------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "my_checkers.py", DECORATED)
    (tmp_path / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    (tmp_path / "calm.md").write_text("All calm here.\n", encoding="utf-8")
    (tmp_path / "loud.md").write_text("Wow! Really!\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["grade", "calm.md", "--rubric", "rubric.toml", "--plugin", "./my_checkers.py"],
        ["--plugin", "my_checkers.py", "grade", "calm.md", "--rubric", "rubric.toml"],
        ["--plugin", "my_checkers", "grade", "calm.md", "--rubric", "rubric.toml"],
    ],
)
def test_grade_with_a_plugin_option(project: Path, args: list[str]) -> None:
    ran = cli(*args, cwd=project)
    assert ran.code == 0, ran.err
    loud = cli(*[a.replace("calm.md", "loud.md") for a in args], cwd=project)
    assert loud.code == 1 and "2 exclamation marks" in loud.out


def test_grade_with_the_plugin_named_in_the_rubric_or_the_environment(project: Path) -> None:
    (project / "with_plugins.toml").write_text(
        'plugins = ["./my_checkers.py"]\n' + RUBRIC, encoding="utf-8"
    )
    assert cli("grade", "loud.md", "--rubric", "with_plugins.toml", cwd=project).code == 1
    env = {"GRADELOOP_PLUGINS": "./my_checkers.py"}
    assert cli("grade", "calm.md", "--rubric", "rubric.toml", env=env, cwd=project).code == 0


def test_without_the_plugin_the_error_names_every_way_to_load_it(project: Path) -> None:
    ran = cli("grade", "calm.md", "--rubric", "rubric.toml", cwd=project)
    assert ran.code == 2 and len(ran.err.strip().splitlines()) == 1
    assert "unknown checker 'no_exclamations'" in ran.err
    assert "plugins = [" in ran.err and "--plugin ./my_checkers.py" in ran.err


def test_a_plugin_option_that_names_nothing_is_exit_2(project: Path) -> None:
    ran = cli("--plugin", "./nope.py", "checkers", cwd=project)
    assert ran.code == 2 and "cannot load plugin './nope.py' (from --plugin)" in ran.err
    env = {"GRADELOOP_PLUGINS": "nope_nope"}
    ran = cli("grade", "calm.md", "--rubric", "rubric.toml", env=env, cwd=project)
    assert ran.code == 2 and "(from GRADELOOP_PLUGINS)" in ran.err


def test_checkers_lists_a_plugins_checkers_under_its_name(project: Path) -> None:
    data = json.loads(cli("checkers", "--json", "--plugin", "./my_checkers.py", cwd=project).out)
    mine = {c["name"]: c for c in data["checkers"]}["no_exclamations"]
    assert mine["plugin"] == "./my_checkers.py" and mine["options"] == ["max_count"]


def test_plugin_options_leave_no_trace_in_the_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import os

    from gradeloop.cli import main

    before = dict(os.environ)
    assert main(["--disable-plugin-autoload", "--block-plugin", "x", "checkers", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checkers"] == []
    assert dict(os.environ) == before  # main() itself, not a test helper, left it as it was
