"""Words a user can read: the docs, the examples and the public docstrings never point
at "seed 002/003" or "the seed" (the project's internal source documents, which a user
never sees)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import gradeloop
import gradeloop.graph
import gradeloop.tools
from tests.project.test_public_api import PACKAGES
from tests.support.cli_helpers import ROOT

INTERNAL = re.compile(r"\bseed\s+0\d\d\b|\bthe seeds?\b(?!\s+\d)|\bseed's\b", re.IGNORECASE)
TEXT = (".md", ".toml", ".py", ".txt", ".jsonl", ".json")
FILES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in TEXT and p.is_file()),
]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_and_examples_speak_without_the_internal_seeds(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    found = [m.group(0) for m in INTERNAL.finditer(text)]
    assert not found, f"{path.relative_to(ROOT)}: {found}"


def test_public_docstrings_speak_without_them() -> None:
    objects = [gradeloop.tools, gradeloop.graph, gradeloop.graph.final_result]
    objects += [getattr(gradeloop, name) for name in gradeloop.__all__]
    for package in map(importlib.import_module, PACKAGES):
        objects += [package, *(getattr(package, name) for name in package.__all__)]
    for obj in objects:
        docs = [inspect.getdoc(obj) or ""]
        if inspect.isclass(obj):
            docs += [inspect.getdoc(m) or "" for _, m in inspect.getmembers(obj)]
        for doc in docs:
            assert not INTERNAL.search(doc), (obj, INTERNAL.search(doc))


def test_the_pattern_finds_what_it_should() -> None:
    assert INTERNAL.search("as in seed 003's example") and INTERNAL.search("the seed loop")
    assert not INTERNAL.search("measured with seed 7") and not INTERNAL.search("--seed N")


def test_the_readme_says_to_activate_the_venv_before_bare_gradeloop_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    bare = re.search(r"```sh\n(?:[^`]*\n)?gradeloop ", text)
    assert bare is not None  # the README shows bare `gradeloop ...` commands
    activate = text.find(". .venv/bin/activate")
    assert 0 <= activate < bare.start(), "say to activate the venv before the first bare command"
