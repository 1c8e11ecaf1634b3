"""code_runs on what real code does: feature tests, back-ports, sessions, encodings.

Each case's verdict was checked against the real interpreters (pyenv's CPython
3.8.18 and 3.9.18: ``compile()`` of the block, and running it where it matters);
the README excerpt is from tabulate 0.9.0 (astanin/python-tabulate, tag v0.9.0,
README.md lines 671-678, MIT licence).
"""

from __future__ import annotations

import pytest

from gradeloop_checkers.code_runs import code_runs


def check(code: str, language: str = "python", **options: object) -> tuple[bool, list[str]]:
    result = code_runs(f"```{language}\n{code}\n```", **options)  # type: ignore[arg-type]
    return result.passed, result.issues


# -- hasattr feature tests and back-ports ----------------------------------------------

GUARDED = [
    'import itertools\nif hasattr(itertools, "pairwise"):\n    p = itertools.pairwise([1, 2])',
    'import itertools\np = itertools.pairwise([1]) if hasattr(itertools, "pairwise") else []',
    'import itertools\nif hasattr(itertools, "pairwise") and itertools.pairwise:\n    pass',
    'import itertools\nif not hasattr(itertools, "pairwise"):\n    p = []\nelse:\n'
    "    p = itertools.pairwise([1, 2])",
    # a back-port: the store is no use, and the name is defined from then on
    'import itertools\nif not hasattr(itertools, "pairwise"):\n'
    "    itertools.pairwise = lambda xs: zip(xs, xs[1:])\n"
    "print(list(itertools.pairwise([1, 2, 3])))",
]


@pytest.mark.parametrize("code", GUARDED)
def test_a_member_a_feature_test_guards_passes(code: str) -> None:
    assert check(code, python="3.8") == (True, [])


UNGUARDED = [
    "import itertools\np = itertools.pairwise([1, 2])",
    # the test guards its own branch only
    'import itertools\nif hasattr(itertools, "pairwise"):\n    pass\n'
    "p = itertools.pairwise([1, 2])",
    # another name is not guarded by a test of pairwise
    'import itertools\nif hasattr(itertools, "pairwise"):\n    b = itertools.batched([1], 1)',
    # the negated test guards the else branch, not the body
    'import itertools\nif not hasattr(itertools, "pairwise"):\n    p = itertools.pairwise([1])',
]


@pytest.mark.parametrize("code", UNGUARDED)
def test_a_member_no_feature_test_guards_fails(code: str) -> None:
    passed, issues = check(code, python="3.8")
    assert not passed and "new in Python 3.1" in issues[0]


# -- 'with (cm):' as Python 3.8 reads it ------------------------------------------------

# compile() on CPython 3.8.18: ok / SyntaxError
WITH_38 = {
    "with (cm):\n    pass": True,
    "with ((cm)):\n    pass": True,
    "with (\n    cm\n):\n    pass": True,
    "with (cm) as f:\n    pass": True,
    "with (a), (b):\n    pass": True,
    "async def f():\n    async with (cm):\n        pass": True,
    "with (cm as f):\n    pass": False,
    "with (a as x, b as y):\n    pass": False,
    "with (cm):\n    match x:\n        case 1:\n            pass": False,
}


@pytest.mark.parametrize(("code", "runs"), WITH_38.items())
def test_with_in_parentheses_is_judged_as_python_3_8_parses_it(code: str, runs: bool) -> None:
    assert check(code, python="3.8")[0] is runs
    assert check(code, python="3.9")[0] is (runs or "match" not in code)


def test_two_managers_in_parentheses_fail_on_3_8_which_reads_a_tuple() -> None:
    """3.8 compiles 'with (a, b):' as one tuple, which is no context manager: it
    cannot run there as written, so it fails, naming the form."""
    passed, issues = check("with (a, b):\n    pass", python="3.8")
    assert not passed and "Parenthesized context managers" in issues[0]


# -- top-level await ---------------------------------------------------------------------

AWAITING = "import asyncio\nawait asyncio.sleep(0)\nasync with lock:\n    pass"


def test_top_level_await_fails_a_script_and_names_the_option() -> None:
    passed, issues = check(AWAITING)
    assert not passed and "set top_level_await = true" in issues[0]


def test_top_level_await_passes_with_the_option() -> None:
    assert check(AWAITING, top_level_await=True) == (True, [])
    # still a script's rules elsewhere: 'return' outside a function fails
    assert not check("await x\nreturn 1", top_level_await=True)[0]


# -- interactive sessions ----------------------------------------------------------------

TABULATE_090 = """>>> print(tabulate([["one", "two"], ["three", "four"]], colalign=("right",))
-----  ----
  one  two
three  four
-----  ----"""


def test_a_pycon_block_is_checked_and_tabulates_typo_is_found() -> None:
    passed, issues = check(TABULATE_090, "pycon", python="3.11")
    assert not passed and "'(' was never closed" in issues[0]
    fixed = TABULATE_090.replace('("right",))', '("right",)))')
    assert check(fixed, "pycon", python="3.11") == (True, [])


def test_a_session_after_a_first_line_that_is_no_prompt_is_read_as_a_session() -> None:
    session = "# the example\n>>> import json\n>>> json.dumps({})\n'{}'"
    assert check(session) == (True, [])
    assert not check(session.replace("json.dumps({})", "json.dumps({)"))[0]
    # a script whose docstring shows a session is still a script
    script = 'def f():\n    """\n    >>> f()\n    1\n    """\n    return 1'
    assert check(script) == (True, [])


def test_a_python_console_block_is_a_session_too() -> None:
    assert not check(">>> import requests", "python-console")[0]
    assert check(">>> import json", "python-console") == (True, [])


# -- encoding declarations ---------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    ["# coding: uft-8\nx = 1", "#!/usr/bin/env python\n# -*- coding: utf-88 -*-\nx = 1"],
)
def test_an_encoding_python_does_not_know_fails(code: str) -> None:
    passed, issues = check(code)
    assert not passed and "does not know" in issues[0]


@pytest.mark.parametrize(
    "code",
    [
        "# coding: utf-8\nx = 1",
        "#!/usr/bin/env python\n# -*- coding: latin-1 -*-\nx = 1",
        "x = 1\n# coding: uft-8",  # line 2 after code on line 1 is a plain comment
        "x = 1\n\n\n# coding: uft-8",
    ],
)
def test_an_encoding_python_knows_or_does_not_read_passes(code: str) -> None:
    assert check(code) == (True, [])


# orjson's README (orjson 3.13.0's METADATA, Apache-2.0 OR MIT): a long call shown
# with its continuation lines written without '...' prompts
ORJSON = """>>> import orjson
>>> orjson.dumps({"a": "b", "c": {"d": True}, "e": [1, 2]})
b'{"a":"b","c":{"d":true},"e":[1,2]}'
>>> orjson.dumps(
    {"a": "b", "c": {"d": True}, "e": [1, 2]},
    option=orjson.OPT_INDENT_2
)
b'{\\n  "a": "b",\\n  "c": {\\n    "d": true\\n  },\\n  "e": [\\n    1,\\n    2\\n  ]\\n}'"""


def test_a_sessions_open_bracket_continues_on_lines_without_prompts() -> None:
    assert check(ORJSON, allow=("orjson",)) == (True, [])
    # the same lines with the call's closing bracket lost still fail
    broken = ORJSON.replace("    option=orjson.OPT_INDENT_2\n)", "    option=orjson.OPT_INDENT_2")
    assert not check(broken, allow=("orjson",))[0]
