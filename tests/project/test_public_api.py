"""The public surface: a small front door (``gradeloop``) and public subpackages, each
with a docstring and a sorted ``__all__`` whose every name is importable and documented."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import gradeloop

# Every public package or module; the front door's names are a selection of theirs.
PACKAGES = (
    "gradeloop.bulk",
    "gradeloop.bulk.batches",
    "gradeloop.cli",
    "gradeloop.errors",
    "gradeloop.grading",
    "gradeloop.graph",
    "gradeloop.history",
    "gradeloop.history.report",
    "gradeloop.integrations.mcp_server",
    "gradeloop.integrations.ray",
    "gradeloop.integrations.telemetry",
    "gradeloop.judging",
    "gradeloop.loop",
    "gradeloop.migration",
    "gradeloop.models",
    "gradeloop.stats",
    "gradeloop.rewards",
    "gradeloop.testing",
    "gradeloop.tools",
)
# The front door's limit (the project's contract) and the import that must stay cheap.
MAX_TOP_LEVEL = 40
HEAVY = ("anthropic", "openai", "langgraph", "mcp", "opentelemetry")
# Message Batches is the Anthropic SDK's API: that package imports it by design.
SDK_BOUND = ("gradeloop.bulk.batches",)


def _isort_style(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then CamelCase, then everything else
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_all_is_sorted_and_importable() -> None:
    assert list(gradeloop.__all__) == sorted(gradeloop.__all__, key=_isort_style)
    for name in gradeloop.__all__:
        assert hasattr(gradeloop, name), name


def test_the_front_door_is_small() -> None:
    assert len(gradeloop.__all__) <= MAX_TOP_LEVEL
    assert len(set(gradeloop.__all__)) == len(gradeloop.__all__)


def test_the_contract_names_are_public() -> None:
    # the names the contract says to import from gradeloop itself
    contract = {
        "AnthropicGenerator",
        "AnthropicJudge",
        "CheckResult",
        "Criterion",
        "Evaluation",
        "HistoryStore",
        "LoopResult",
        "NotAnAnswer",
        "Rubric",
        "RubricError",
        "Verdict",
        "accepted",
        "as_feedback",
        "checker",
        "first_text",
        "get_checker",
        "get_optimization_history",
        "grade",
        "hookimpl",
        "optimize",
        "run_loop",
    }
    assert contract <= set(gradeloop.__all__)


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_is_documented_with_a_sorted_importable_all(package: str) -> None:
    module = importlib.import_module(package)
    assert (module.__doc__ or "").strip(), f"{package} has no docstring"
    names = list(module.__all__)
    assert names, f"{package} exports nothing"
    assert names == sorted(names, key=_isort_style), package
    assert len(set(names)) == len(names), package
    for name in names:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{package}.{name} has no docstring"
        assert name in dir(module), f"dir({package}) hides {name}"


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_exports_only_what_it_defines(package: str) -> None:
    # one home per name: a package re-exporting another package's name would make
    # "where does X live" ambiguous (the front door is the one selection across homes)
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith(package), (package, name, value.__module__)


def test_the_integrations_package_names_each_of_its_modules() -> None:
    import gradeloop.integrations as integrations

    assert integrations.__all__ == []  # its modules are the API, imported by name
    folder = Path(integrations.__file__).parent
    modules = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    modules += sorted(p.parent.name for p in folder.glob("*/__init__.py"))  # ray/
    assert modules, folder
    for module in modules:
        assert f"gradeloop.integrations.{module}" in (integrations.__doc__ or ""), module
        assert f"gradeloop.integrations.{module}" in PACKAGES, module


def test_every_front_door_name_has_a_home_package() -> None:
    modules = [importlib.import_module(package) for package in PACKAGES]
    homeless = [
        name
        for name in gradeloop.__all__
        if not any(
            name in module.__all__ and getattr(module, name) is getattr(gradeloop, name)
            for module in modules
        )
    ]
    assert homeless == []


@pytest.mark.parametrize("package", ["gradeloop", *PACKAGES])
def test_each_package_imports_first_in_a_fresh_interpreter(package: str) -> None:
    # a facade imports its private modules; importing it first (no other gradeloop
    # package loaded before) is where an import cycle between facades would show, and
    # none of them may import an SDK until one of its model classes is asked for
    code = (
        "import importlib, sys\n"
        f"module = importlib.import_module({package!r})\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        f"assert heavy == [] or {package in SDK_BOUND}, heavy\n"
        "for name in getattr(module, '__all__', ()):\n"
        "    getattr(module, name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_fresh_interpreter_check_sees_a_heavy_import() -> None:
    code = "import sys, gradeloop; gradeloop.OpenAICompatibleJudge; assert 'openai' in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_hookimpl_belongs_to_the_gradeloop_project() -> None:
    assert gradeloop.hookimpl.project_name == "gradeloop"


def test_error_tree_roots_at_gradeloop_error() -> None:
    from gradeloop import errors

    for name in errors.__all__:
        cls = getattr(errors, name)
        if issubclass(cls, Warning):  # warnings are their own root (UserWarning)
            assert name.endswith("Warning") and not issubclass(cls, errors.GradeloopError)
            continue
        assert issubclass(cls, errors.GradeloopError), name
