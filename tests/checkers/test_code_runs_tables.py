"""code_runs' standard-library tables against what the real interpreters do.

``tests/data/stdlib_presence.json`` holds the answers of CPython 3.8.18, 3.9.18,
3.10.13, 3.11.7, 3.12.1 and 3.13.0 (pyenv builds on Linux, run isolated) for every
module and attribute the tables say some version lacks, the old tables' entries
included: whether the module imports, whether ``getattr`` finds the name (warnings
silenced: a deprecated name a module's ``__getattr__`` still serves is there, as it
is for the code a reader runs). ``scripts/stdlib_tables/check_presence.py`` records
it (its docstring says how); the tables are built by ``generate.py`` beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradeloop_checkers.code_runs import code_runs
from gradeloop_checkers.code_runs._stdlib import module_table, name_table

PRESENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "stdlib_presence.json").read_text(encoding="utf-8")
)
MINORS = range(8, 14)
# Public names an interpreter here lacks where typeshed says a build has them: the
# tables keep them present (a gap can only miss a problem, never fail a draft).
PLATFORM = {"socket:CAN_RAW_ERR_FILTER": "a Linux build with newer kernel headers has it"}


def said(section: str, key: str, minor: int) -> bool:
    """Whether the shipped tables say 3.<minor> has the module or name (no entry: yes)."""
    if section == "modules":
        span = module_table().get(key)
    else:
        module, name = key.split(":", 1)
        span = name_table().spans.get((module, name))
    return True if span is None else span.has(minor)


def test_nothing_an_interpreter_has_is_called_missing() -> None:
    wrong = [
        f"3.{m} {key}"
        for section in ("modules", "names")
        for key, answers in PRESENCE[section].items()
        for m, has in zip(MINORS, answers, strict=True)
        if has and not said(section, key, m)
    ]
    assert wrong == []


def test_what_an_interpreter_dropped_is_missing_there() -> None:
    """A public module or module attribute one interpreter had and a later one lacks
    is absent from the tables there (class attributes typeshed declares are often
    set on instances, which a look-up on the class cannot see)."""
    wrong = []
    for section in ("modules", "names"):
        for key, answers in PRESENCE[section].items():
            name = key.partition(":")[2] or key
            if "." in key.partition(":")[2] or name.startswith("_") or key in PLATFORM:
                continue
            for i, (m, has) in enumerate(zip(MINORS, answers, strict=True)):
                if not has and any(answers[:i]) and said(section, key, m):
                    wrong.append(f"3.{m} {key}")
    assert wrong == []


def block(code: str, python: str) -> tuple[bool, list[str]]:
    result = code_runs(f"```python\n{code}\n```", python=python)  # type: ignore[arg-type]
    return result.passed, result.issues


@pytest.mark.parametrize(
    ("code", "python"),
    [
        ('import urllib.parse\nq = urllib.parse.Quoter("/")', "3.13"),  # module __getattr__
        ("import calendar\nprint(calendar.January)", "3.12"),
        ("import io\nf = io.OpenWrapper", "3.11"),
        ("from http.server import HTTPStatus\nHTTPStatus.REQUEST_ENTITY_TOO_LARGE", "3.13"),
        ("from typing.io import TextIO", "3.12"),
    ],
)
def test_deprecated_names_still_served_pass(code: str, python: str) -> None:
    assert block(code, python) == (True, [])


@pytest.mark.parametrize(
    ("code", "python", "said_"),
    [
        ("import io\nf = io.OpenWrapper", "3.12", "'io.OpenWrapper', which Python 3.12 removed"),
        ("from typing.io import TextIO", "3.13", "'typing.io', which Python 3.13 removed"),
        ("import typing.re", "3.13", "'typing.re', which Python 3.13 removed"),
    ],
)
def test_names_the_interpreter_dropped_fail(code: str, python: str, said_: str) -> None:
    passed, issues = block(code, python)
    assert not passed and said_ in issues[0]
