"""Docstrings and docs name a moved name by its new home, not the deprecated top level.

``gradeloop.Jury`` still imports (with a ``DeprecationWarning``), but a reader who
follows ``:class:`~gradeloop.Jury``` to its page, or copies the path, should land on
``gradeloop.judging.Jury``. The scan finds ``gradeloop.NAME`` (not followed by a
further ``.``) for every NAME that left the front door.
"""

from __future__ import annotations

import ast
import re

import pytest

import gradeloop
from tests.support.cli_helpers import ROOT

OLD_PATH = re.compile(r"(?<![\w.])~?gradeloop\.([A-Za-z_]\w*)\b(?![.\w])")


def old_paths(text: str) -> list[str]:
    moved, front = gradeloop._MOVED, set(gradeloop.__all__)
    return [m.group(1) for m in OLD_PATH.finditer(text) if m.group(1) in moved.keys() - front]


def test_the_scan_finds_an_old_path_and_passes_a_new_one() -> None:
    assert old_paths("see :class:`~gradeloop.Jury` and gradeloop.CheckContext") == [
        "Jury",
        "CheckContext",
    ]
    assert old_paths("see :class:`~gradeloop.judging.Jury` and gradeloop.grade") == []


@pytest.mark.parametrize("folder", ["src", "checkers", "docs"])
def test_no_docstring_or_doc_names_a_moved_name_by_its_old_path(folder: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}: gradeloop.{name} (now {gradeloop._MOVED[name]}.{name})"
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".md")
        for name in old_paths(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def old_imports(source: str) -> list[str]:
    """Names a ``from gradeloop import ...`` takes from the old top level."""
    moved = gradeloop._MOVED.keys() | gradeloop._MOVED_MODULES.keys()
    return [
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module == "gradeloop"
        for alias in node.names
        if alias.name in moved - set(gradeloop.__all__)
    ]


def test_the_import_scan_finds_an_old_import_and_passes_a_new_one() -> None:
    assert old_imports("from gradeloop import grade, batches, Jury") == ["batches", "Jury"]
    assert old_imports("from gradeloop import grade\nfrom gradeloop.bulk import batches") == []


@pytest.mark.parametrize("folder", ["benchmarks", "examples", "scripts", "docs"])
def test_benchmarks_examples_and_scripts_import_from_the_new_homes(folder: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in old_imports(path.read_text(encoding="utf-8"))
    ]
    assert found == []
