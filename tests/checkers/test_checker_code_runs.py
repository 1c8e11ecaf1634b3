"""The built-in ``code_runs`` checker: rules (each with a passing twin), fences, options,
the standard-library tables, messages, the statements-only fast path, and robustness."""

from __future__ import annotations

import ast
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradeloop_checkers.code_runs._scan as scan_module
from gradeloop import CheckResult, Rubric, RubricError, get_checker, grade
from gradeloop_checkers.code_runs import CHECKERS, code_runs
from gradeloop_checkers.code_runs._source import (
    BlockText,
    fstring_problem,
    may_need_pep701,
    parenthesized_with,
)
from gradeloop_checkers.code_runs._stdlib import SUPPORTED, is_private, module_table, modules_of

RUNNING = sys.version_info.minor


def draft(code: str, fence: str = "```python") -> str:
    return f"Some prose first.\n\n{fence}\n{code}\n```\n\nAnd a closing line.\n"


def run(code: str, python: str = "3.9", **options: Any) -> CheckResult:
    return code_runs(draft(code), python=python, **options)  # type: ignore[arg-type]


def failing(code: str, python: str, fragment: str, **options: Any) -> str:
    result = run(code, python, **options)
    assert not result.passed, f"expected a failure for {code!r} on {python}"
    hits = [i for i in result.issues if fragment in i]
    assert hits, f"no issue mentions {fragment!r}: {result.issues}"
    return hits[0]


def passing(code: str, python: str, **options: Any) -> None:
    result = run(code, python, **options)
    assert result.passed, result.issues
    assert result.issues == []


# -- rules: (id, failing code, its target, passing twin, its target, fragment) -----------

RULES = [
    ("third_party", "import requests", "3.9", "import urllib.request", "3.9", "'requests'"),
    (
        "third_party_from",
        "from yaml import safe_load",
        "3.9",
        "from json import loads",
        "3.9",
        "'yaml'",
    ),
    (
        "submodule_top_level",
        "import google.protobuf",
        "3.9",
        "import xml.etree.ElementTree",
        "3.9",
        "'google.protobuf'",
    ),
    (
        "import_in_function",
        "def f():\n    import numpy",
        "3.9",
        "def f():\n    import math",
        "3.9",
        "'numpy'",
    ),
    ("relative", "from . import sibling", "3.9", "from os import sep", "3.9", "relative import"),
    (
        "relative_module",
        "from ..pkg import x",
        "3.9",
        "from pkgutil import walk_packages",
        "3.9",
        "'from ..pkg import ...'",
    ),
    ("module_too_new", "import tomllib", "3.10", "import tomllib", "3.11", "new in Python 3.11"),
    ("zoneinfo", "import zoneinfo", "3.8", "import zoneinfo", "3.9", "new in Python 3.9"),
    (
        "annotationlib",
        "import annotationlib",
        "3.13",
        "import annotationlib",
        "3.14",
        "new in Python 3.14",
    ),
    (
        "module_removed",
        "import distutils.core",
        "3.12",
        "import distutils.core",
        "3.11",
        "Python 3.12 removed",
    ),
    (
        "dead_batteries",
        "import telnetlib",
        "3.13",
        "import telnetlib",
        "3.12",
        "Python 3.13 removed",
    ),
    ("private", "import _collections_abc", "3.9", "import _thread", "3.9", "private CPython"),
    (
        "future_unknown",
        "from __future__ import braces",
        "3.9",
        "from __future__ import annotations",
        "3.9",
        "unknown __future__ feature",
    ),
    (
        "future_misplaced",
        "import os\nfrom __future__ import annotations",
        "3.9",
        '"""Doc."""\nfrom __future__ import annotations\nimport os',
        "3.9",
        "below other code",
    ),
    (
        "name_added",
        "from typing import Self",
        "3.10",
        "from typing import Self",
        "3.11",
        "'typing.Self', new in Python 3.11",
    ),
    (
        "attribute_added",
        "import itertools\nitertools.pairwise([1, 2])",
        "3.9",
        "import itertools\nitertools.pairwise([1, 2])",
        "3.10",
        "'itertools.pairwise'",
    ),
    (
        "aliased_module",
        "import itertools as it\nit.pairwise([])",
        "3.9",
        "import itertools as it\nit.chain([])",
        "3.9",
        "'itertools.pairwise'",
    ),
    (
        "submodule_attribute",
        "import collections.abc\ncollections.abc.Buffer",
        "3.11",
        "import collections.abc\ncollections.abc.Buffer",
        "3.12",
        "'collections.abc.Buffer'",
    ),
    (
        "name_removed",
        "from collections import Mapping",
        "3.10",
        "from collections.abc import Mapping",
        "3.10",
        "import it from collections.abc",
    ),
    (
        "builtin_added",
        "raise ExceptionGroup('x', [])",
        "3.10",
        "raise ExceptionGroup('x', [])",
        "3.11",
        "'ExceptionGroup', new in Python 3.11",
    ),
    (
        "builtin_shadowed",
        "async def f(it):\n    return await anext(it)",
        "3.9",
        "async def anext(it):\n    return 1\nasync def f(it):\n    return await anext(it)",
        "3.9",
        "'anext'",
    ),
    (
        "keyword_added",
        "zip([1], [2], strict=True)",
        "3.9",
        "zip([1], [2], strict=True)",
        "3.10",
        "passes strict= to zip()",
    ),
    (
        "dataclass_keyword",
        "from dataclasses import dataclass\n@dataclass(slots=True)\nclass C:\n    x: int",
        "3.9",
        "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass C:\n    x: int",
        "3.9",
        "passes slots= to dataclass()",
    ),
    (
        "union_parameter",
        "def f(x: int | None) -> None: ...",
        "3.9",
        "from __future__ import annotations\ndef f(x: int | None) -> None: ...",
        "3.9",
        "X | Y union",
    ),
    (
        "union_return",
        "def f() -> 'int' | None: ...",
        "3.9",
        "def f() -> 'int | None': ...",
        "3.9",
        "X | Y union",
    ),
    (
        "union_module_variable",
        "x: int | None = None",
        "3.9",
        "x: int | None = None",
        "3.10",
        "X | Y union",
    ),
    (
        "union_class_variable",
        "class C:\n    x: int | None = None",
        "3.9",
        "def f():\n    x: int | None = None\n    return x",
        "3.9",
        "X | Y union",
    ),
    (
        "union_at_runtime",
        "ok = isinstance(1, int | str)",
        "3.9",
        "flags = 1 | 2",
        "3.9",
        "type union 'int | str' at run time",
    ),
    (
        "builtin_generic",
        "def f(x: list[int]) -> None: ...",
        "3.8",
        "from __future__ import annotations\ndef f(x: list[int]) -> None: ...",
        "3.8",
        "subscripts the built-in 'list'",
    ),
    (
        "builtin_generic_runtime",
        "from __future__ import annotations\nAlias = dict[str, int]",
        "3.8",
        "Alias = dict[str, int]",
        "3.9",
        "subscripts the built-in 'dict'",
    ),
    (
        "abc_generic",
        "from collections.abc import Iterable\nAlias = Iterable[int]",
        "3.8",
        "from collections.abc import Iterable\nAlias = Iterable[int]",
        "3.9",
        "'collections.abc.Iterable'",
    ),
    (
        "match",
        "match 1:\n    case 1:\n        pass",
        "3.9",
        "match 1:\n    case 1:\n        pass",
        "3.10",
        "does not parse as Python 3.9",
    ),
    (
        "except_star",
        "try:\n    pass\nexcept* ValueError:\n    pass",
        "3.10",
        "try:\n    pass\nexcept* ValueError:\n    pass",
        "3.11",
        "does not parse as Python 3.10",
    ),
    (
        "paren_with",
        "with (open('a') as f, open('b') as g):\n    pass",
        "3.8",
        "with (open('a')) as f:\n    pass",
        "3.8",
        "arenthesized context managers",
    ),
    (
        "relaxed_decorator",
        "@buttons[0].clicked\ndef f(): pass",
        "3.8",
        "@app.route('/')\ndef f(): pass",
        "3.8",
        "an expression as a decorator",
    ),
    (
        "walrus_in_set",
        "s = {y := 1}",
        "3.8",
        "s = {(y := 1)}",
        "3.8",
        "unparenthesized assignment expression in a set",
    ),
    (
        "walrus_in_index",
        "a = [0]\na[x := 0]",
        "3.9",
        "a = [0]\na[(x := 0)]",
        "3.9",
        "unparenthesized assignment expression inside []",
    ),
    (
        "star_target",
        "for x in *[1], *[2]:\n    pass",
        "3.8",
        "for x in (*[1], *[2]):\n    pass",
        "3.8",
        "unparenthesized starred items",
    ),
    (
        "star_subscript",
        "a = {}\na[*b]",
        "3.10",
        "a = {}\na[(*b,)]",
        "3.10",
        "a starred item inside []",
    ),
    (
        "star_annotation",
        "def f(*args: *Ts): pass",
        "3.10",
        "def f(*args: *Ts): pass",
        "3.11",
        "a starred annotation",
    ),
    (
        "fstring_quote",
        'x = 1\nprint(f"{"a"}")',
        "3.11",
        "x = 1\nprint(f\"{'a'}\")",
        "3.11",
        "Python 3.1",
    ),
    (
        "return_outside",
        "return 1",
        "3.9",
        "def f():\n    return 1",
        "3.9",
        "'return' outside a function",
    ),
    (
        "return_in_class",
        "class C:\n    return 1",
        "3.9",
        "class C:\n    def f(self):\n        return 1",
        "3.9",
        "'return' outside a function",
    ),
    (
        "yield_outside",
        "yield 1",
        "3.9",
        "def g():\n    yield 1",
        "3.9",
        "'yield' outside a function",
    ),
    (
        "await_outside",
        "await asyncio.sleep(1)",
        "3.9",
        "import asyncio\nasync def main():\n    await asyncio.sleep(1)",
        "3.9",
        "'await' outside an async function",
    ),
    (
        "await_in_lambda",
        "async def f():\n    g = lambda: await h()",
        "3.9",
        "async def f():\n    g = await h()",
        "3.9",
        "'await' outside an async function",
    ),
    (
        "try_guard",
        "try:\n    import ujson as json\nexcept ValueError:\n    import json",
        "3.9",
        "try:\n    import ujson as json\nexcept ImportError:\n    import json",
        "3.9",
        "'ujson'",
    ),
    (
        "try_star_guard",
        "try:\n    import ujson\nexcept* ValueError:\n    pass",
        "3.11",
        "try:\n    import ujson\nexcept* ImportError:\n    pass",
        "3.11",
        "'ujson'",
    ),
    (
        "type_checking",
        "DEBUG = False\nif DEBUG:\n    import numpy",
        "3.9",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import numpy",
        "3.9",
        "'numpy'",
    ),
    (
        "version_guard",
        "import sys\nif sys.version_info >= (3, 11):\n    import tomllib\n"
        "else:\n    import tomli as tomllib",
        "3.9",
        "import sys\nif sys.version_info >= "
        "(3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib",
        "3.11",
        "'tomli'",
    ),
    (
        "dynamic_import",
        "import importlib\nimportlib.import_module('requests')",
        "3.9",
        "import importlib\nimportlib.import_module('json')",
        "3.9",
        "'requests'",
    ),
    (
        "dunder_import",
        "yaml = __import__('yaml')",
        "3.9",
        "json = __import__('json')",
        "3.9",
        "'yaml'",
    ),
    (
        "submodule_added",
        "import importlib.resources.abc",
        "3.10",
        "import importlib.resources.abc",
        "3.11",
        "'importlib.resources.abc', new in Python 3.11",
    ),
    (
        "submodule_by_name",
        "from concurrent import interpreters",
        "3.13",
        "from concurrent import futures",
        "3.13",
        "'concurrent.interpreters', new in Python 3.14",
    ),
    (
        "submodule_removed",
        "import tkinter.tix",
        "3.13",
        "import tkinter.tix",
        "3.12",
        "'tkinter.tix', which Python 3.13 removed",
    ),
    (
        "unknown_submodule_is_not_judged",
        "import json.nonexistent_xyz\nimport requests",
        "3.9",
        "import os.path",
        "3.9",
        "'requests'",
    ),
    (
        "member_removed",
        "import asyncio\n@asyncio.coroutine\ndef f():\n    pass",
        "3.11",
        "import asyncio\n@asyncio.coroutine\ndef f():\n    pass",
        "3.10",
        "'asyncio.coroutine', which Python 3.11 removed",
    ),
    (
        "class_attribute",
        "import unittest\nunittest.TestCase.assertStartsWith",
        "3.13",
        "import unittest\nunittest.TestCase.assertStartsWith",
        "3.14",
        "'unittest.TestCase.assertStartsWith', new in Python 3.14",
    ),
    (
        "method_of_a_literal",
        "name = 'v1.2'.removeprefix('v')",
        "3.8",
        "name = 'v1.2'.removeprefix('v')",
        "3.9",
        "'str.removeprefix', new in Python 3.9",
    ),
    (
        "method_of_a_named_value",
        "s = 'v1.2'\nname = s.removeprefix('v')",
        "3.8",
        "def f(s):\n    return s.removeprefix('v')",
        "3.8",
        "'str.removeprefix'",
    ),
    (
        "keyword_of_an_instance_method",
        "from concurrent.futures import ThreadPoolExecutor as Pool\n"
        "Pool().shutdown(cancel_futures=True)",
        "3.8",
        "from concurrent.futures import ThreadPoolExecutor as Pool\nPool().shutdown(wait=True)",
        "3.8",
        "passes cancel_futures= to shutdown()",
    ),
    (
        "keyword_forwarded_to_popen",
        "import subprocess\nsubprocess.run(['ls'], user='nobody')",
        "3.8",
        "import subprocess\nsubprocess.run(['ls'], user='nobody')",
        "3.9",
        "passes user= to run()",
    ),
    (
        "keyword_of_a_literal_method",
        "'a-b'.replace('-', '', count=1)",
        "3.12",
        "'a-b'.replace('-', '', 1)",
        "3.12",
        "passes count= to replace()",
    ),
    (
        "dict_union",
        "a = {'x': 1}\nb = a | {'y': 2}",
        "3.8",
        "def f(a, b):\n    return a | b",
        "3.8",
        "applies '|' to mappings",
    ),
    (
        "dict_merge",
        "import os\nenv = dict(os.environ)\nenv |= {'A': '1'}",
        "3.8",
        "import os\nenv = dict(os.environ)\nenv.update({'A': '1'})",
        "3.8",
        "applies '|=' to mappings",
    ),
    (
        "dict_merge_in_loop",
        "a = {}\nfor b in ({}, {'x': 1}):\n    a |= b",
        "3.8",
        "a = {}\nfor b in ({}, {'x': 1}):\n    a |= b",
        "3.9",
        "applies '|=' to mappings",
    ),
    (
        "array_typecode_w",
        "from array import array\narray('w')",
        "3.12",
        "from array import array\narray('u')",
        "3.12",
        "type code 'w', new in Python 3.13",
    ),
    (
        "abc_generic_from_the_tables",
        "from collections.abc import Mapping\nM = Mapping[str, int]",
        "3.8",
        "from collections.abc import Mapping\nM = Mapping[str, int]",
        "3.9",
        "'collections.abc.Mapping'",
    ),
    (
        "shadowed_builtin_is_not_a_generic",
        "x = list[int]",
        "3.8",
        "def f(list):\n    return list[0]",
        "3.8",
        "subscripts the built-in 'list'",
    ),
    (
        "await_in_a_generator_expression",
        "def f(y):\n    return [await x for x in y]",
        "3.9",
        "def f(y):\n    return (await x for x in y)",
        "3.9",
        "does not compile: asynchronous comprehension outside of an asynchronous function",
    ),
    (
        "compile_break_outside",
        "break",
        "3.9",
        "for x in []:\n    break",
        "3.9",
        "does not compile: 'break' outside loop",
    ),
    (
        "compile_continue_outside",
        "if True:\n    continue",
        "3.9",
        "while False:\n    continue",
        "3.9",
        "does not compile: 'continue' not properly in loop",
    ),
    (
        "compile_duplicate_argument",
        "def f(a, a):\n    pass",
        "3.9",
        "def f(a, b):\n    pass",
        "3.9",
        "does not compile: duplicate argument 'a'",
    ),
    (
        "compile_nonlocal_module",
        "nonlocal x",
        "3.9",
        "def f():\n    x = 1\n    def g():\n        nonlocal x",
        "3.9",
        "does not compile: nonlocal declaration not allowed at module level",
    ),
    (
        "compile_global_after_use",
        "def f():\n    x = 1\n    global x",
        "3.9",
        "def f():\n    global x\n    x = 1",
        "3.9",
        "assigned to before global declaration",
    ),
    (
        "compile_star_import_in_function",
        "def f():\n    from os import *",
        "3.9",
        "from os import *",
        "3.9",
        "does not compile: import * only allowed at module level",
    ),
    (
        "compile_yield_in_comprehension",
        "def f(y):\n    return [(yield x) for x in y]",
        "3.9",
        "def f(y):\n    yield [x for x in y]",
        "3.9",
        "does not compile: 'yield' inside list comprehension",
    ),
    (
        "compile_starred_target",
        "*a = [1]",
        "3.9",
        "*a, = [1]",
        "3.9",
        "does not compile: starred assignment target must be in a list or tuple",
    ),
    (
        "compile_two_starred_targets",
        "*a, *b = [1, 2]",
        "3.9",
        "a, *b = [1, 2]",
        "3.9",
        "multiple starred expressions",
    ),
    (
        "compile_starred_statement",
        "a = [1]\n*a",
        "3.9",
        "a = [1]\nprint(*a)",
        "3.9",
        "does not compile: can't use starred expression here",
    ),
    (
        "compile_bare_except_first",
        "try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass",
        "3.9",
        "try:\n    pass\nexcept ValueError:\n    pass\nexcept:\n    pass",
        "3.9",
        "does not compile: default 'except:' must be last",
    ),
    (
        "compile_debug_assignment",
        "__debug__ = 1",
        "3.9",
        "debug = __debug__",
        "3.9",
        "does not compile: cannot assign to __debug__",
    ),
    (
        "compile_return_in_async_generator",
        "async def f():\n    yield 1\n    return 2",
        "3.9",
        "async def f():\n    yield 1\n    return",
        "3.9",
        "does not compile: 'return' with value in async generator",
    ),
    (
        "compile_yield_from_in_async",
        "async def f():\n    yield from g()",
        "3.9",
        "def f():\n    yield from g()",
        "3.9",
        "does not compile: 'yield from' inside async function",
    ),
    (
        "compile_async_with_outside",
        "async with a:\n    pass",
        "3.9",
        "async def f():\n    async with a:\n        pass",
        "3.9",
        "does not compile: 'async with' outside async function",
    ),
    (
        "compile_async_for_outside",
        "async for a in b:\n    pass",
        "3.9",
        "async def f():\n    async for a in b:\n        pass",
        "3.9",
        "does not compile: 'async for' outside async function",
    ),
    (
        "compile_async_comprehension_outside",
        "xs = [x async for x in y]",
        "3.9",
        "async def f():\n    return [x async for x in y]",
        "3.9",
        "does not compile: asynchronous comprehension outside",
    ),
    (
        "compile_walrus_rebinds_loop_variable",
        "[i := 0 for i in range(3)]",
        "3.9",
        "[j := i for i in range(3)]",
        "3.9",
        "cannot rebind comprehension iteration variable",
    ),
    (
        "compile_walrus_in_class_comprehension",
        "class C:\n    [(y := i) for i in range(3)]",
        "3.9",
        "def f():\n    [(y := i) for i in range(3)]",
        "3.9",
        "cannot be used in a class body",
    ),
    (
        "compile_unreachable_case",
        "match x:\n    case y:\n        pass\n    case 1:\n        pass",
        "3.10",
        "match x:\n    case 1:\n        pass\n    case y:\n        pass",
        "3.10",
        "makes remaining patterns unreachable",
    ),
]


@pytest.mark.parametrize(
    ("fail_code", "fail_on", "pass_code", "pass_on", "fragment"),
    [r[1:] for r in RULES],
    ids=[r[0] for r in RULES],
)
def test_rule_fails_and_its_twin_passes(
    fail_code: str, fail_on: str, pass_code: str, pass_on: str, fragment: str
) -> None:
    failing(fail_code, fail_on, fragment)
    passing(pass_code, pass_on)


@pytest.mark.parametrize(
    ("fail_code", "fail_on", "pass_code", "pass_on", "fragment"),
    [r[1:] for r in RULES],
    ids=[r[0] for r in RULES],
)
def test_statements_only_walk_finds_what_the_full_walk_finds(
    fail_code: str, fail_on: str, pass_code: str, pass_on: str, fragment: str
) -> None:
    cases = [(code, on) for code in (fail_code, pass_code) for on in (fail_on, pass_on)]
    fast = [run(code, on) for code, on in cases]
    with full_walk_forced():
        assert [run(code, on) for code, on in cases] == fast


def test_the_fast_path_skips_expressions_only_when_no_rule_could_fire() -> None:
    needs = scan_module.needs_expressions

    def resolving(source: str, bindings: dict[str, str], target: int = 8) -> bool:
        return scan_module.needs_resolving(source, bindings, target)

    assert not needs("import json\nx = json.loads(s)\n", 9)
    assert not resolving("import json\nx = json.loads(s)\n", {"json": "json"})
    # A tracked member or keyword needs its module imported (or its class named).
    assert resolving("import asyncio\nasyncio.timeout(1)\n", {"asyncio": "asyncio"})
    assert not resolving("import socket\nsocket.timeout\n", {"socket": "socket"})
    assert resolving("x = Pool()\nx.shutdown(cancel_futures=1)", {"Pool": "m.ThreadPoolExecutor"})
    assert not resolving("x = Pool()\nx.shutdown(wait=1)", {"Pool": "m.ThreadPoolExecutor"})
    assert resolving("zip(a, strict=True)", {}) and not resolving("zip(a, b)", {})
    assert resolving("'v1'.removeprefix('v')", {})  # a builtin's value needs no import
    # Only what the target lacks can fail: 3.9 has all three of these.
    pool = {"Pool": "m.ThreadPoolExecutor"}
    assert not resolving("x = Pool()\nx.shutdown(cancel_futures=1)", pool, 9)
    assert not resolving("'v1'.removeprefix('v')", {}, 9)
    assert resolving("zip(a, strict=True)", {}, 9) and not resolving("zip(a, strict=1)", {}, 10)
    for code in ("x = a | b", "a[x := 1]", "a[1, *b]", "await x", "anext(it)"):
        assert needs(code, 9), code
    assert not needs("x = a | b", 10) and not needs("a[1, *b]", 11)
    assert not needs("y = 2 ** n\nf(*args)", 9)


def test_imports_inside_a_guard_still_count_in_its_except_branch() -> None:
    code = "try:\n    import tomllib\nexcept ImportError:\n    import tomli as tomllib"
    issue = failing(code, "3.9", "'tomli'")
    assert "tomllib" not in issue.split("'tomli'")[0]
    assert len(run(code, "3.9").issues) == 1


def test_a_version_test_that_depends_on_the_micro_version_walks_both_branches() -> None:
    code = (
        "import sys\nif sys.version_info < (3, 9, 2):\n    import requests\nelse:\n    import json"
    )
    failing(code, "3.9", "'requests'")
    passing(code, "3.10")


def test_union_chain_is_one_issue() -> None:
    assert len(run("def f(x: int | str | None) -> None: ...", "3.9").issues) == 1


def test_lazy_annotations_do_not_hide_syntax_or_imports() -> None:
    failing(
        "from __future__ import annotations\nimport requests\ndef f(x: int | None): ...",
        "3.9",
        "'requests'",
    )


def test_newer_syntax_on_its_own_version() -> None:
    # On an interpreter older than the target the block cannot be parsed at all:
    # that is a failure that says so, never a pass.
    for code in ("type X = int", "def f[T](x: T) -> T:\n    return x"):
        failing(code, "3.11", "does not parse")
        result = run(code, "3.12")
        if RUNNING >= 12:
            assert result.passed, result.issues
        else:
            assert not result.passed
            assert "could not be checked" in result.issues[0]
            assert f"Python 3.{RUNNING}, which runs this check" in result.issues[0]


def test_target_newer_than_the_interpreter_checks_what_it_can_parse() -> None:
    passing("import annotationlib", "3.14")
    failing("import asynchat", "3.14", "Python 3.12 removed")


# -- source-text helpers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("with (open(a) as f, open(b) as g):\n    pass\n", True),
        ("with (\n    open(a) as f,  # comment (\n):\n    pass\n", True),
        ("with (open(a) as f):\n    pass\n", True),
        ("with (open(a)) as f:\n    pass\n", False),
        ("with (open(a)) as (f):\n    pass\n", False),
        ("with open(a) as f, open(b) as g:\n    pass\n", False),
        ("with (a), b:\n    pass\n", False),
        ("async def f():\n    async with (a as b, c as d):\n        pass\n", True),
    ],
)
def test_parenthesized_with_is_read_from_the_source(code: str, expected: bool) -> None:
    tree = ast.parse(code)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.With | ast.AsyncWith))
    assert parenthesized_with(node, BlockText(code)) is expected


@pytest.mark.parametrize(
    ("segment", "problem"),
    [
        ('f"{"a"}"', "own quote"),
        ("f\"{'\\n'.join(x)}\"", "backslash"),
        ("f'''{\n x # c\n}'''", "comment"),
        ("f'{\n x\n}'", "line break"),
        ("f\"{a['k']}\"", None),
        ("f'''{\n x\n}'''", None),
        ("f'{x}' f\"{y}\"", None),
        ("f'{x!r:>{w}}'", None),
    ],
)
def test_fstring_problems_are_seen_where_the_tokenizer_shows_them(
    segment: str, problem: str | None
) -> None:
    found = fstring_problem(segment)
    if problem is None or RUNNING < 12:  # before 3.12 such f-strings do not even parse
        assert found is None
    else:
        assert found is not None and problem in found


PEP701_CASES = [
    ('f"{"a"}"', True),
    ("f\"{'\\n'.join(x)}\"", True),
    ("f" + "'" * 3 + "{x}" + "'" * 3, True),
    ("f'{\n x\n}'", True),
    ("f'{x # c}'", True),
    ("f'{'#'}'", True),
    ("Rf'{'a'}'", True),
    ("f\"{a['k']}\"", False),
    ("f'{x}' f\"{y}\"", False),
    ("f'{x!r:>{w}}'", False),
    ('f"{x}"  # a comment', False),
    ("f'{{x}}'", False),
    ("elf'{x}'", False),
    ("rf'{x}\\d'", False),
    ('f"a\\"b{x}"', False),
    ('x = "if"', False),
]


@pytest.mark.parametrize(("source", "expected"), PEP701_CASES)
def test_fast_path_spots_fstrings_that_may_need_312(source: str, expected: bool) -> None:
    assert may_need_pep701(source) is expected
    assert scan_module.needs_expressions(source, 11) is (expected and RUNNING >= 12)


# -- fences ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fence",
    [
        "```python",
        "```py",
        "```python3",
        "```py3",
        "```Python",
        "~~~python",
        '```python title="example.py"',
        "```{.python .numberLines}",
        "````python",
    ],
)
def test_every_python_fence_is_checked(fence: str) -> None:
    close = "~~~" if fence.startswith("~") else "````" if fence.startswith("````") else "```"
    text = f"{fence}\nimport requests\n{close}\n"
    assert not code_runs(text).passed
    assert code_runs(text.replace("requests", "json")).passed


@pytest.mark.parametrize(
    "text",
    [
        "```bash\npip install requests\nimport requests\n```\n",
        "```\nimport requests\n```\n",
        "```console\n>>> import requests\n```\n",
        "Inline ```python import requests``` is not a fence.\n",
        "```python import requests``` at the start of a line is inline code too.\n\nimport x\n",
        "    import requests\n",
    ],
)
def test_other_blocks_are_not_python(text: str) -> None:
    assert code_runs(text).passed


def test_unlabeled_fences_when_asked() -> None:
    text = "```\nimport requests\n```\n"
    assert code_runs(text).passed
    assert not code_runs(text, unlabeled=True).passed
    assert code_runs(text.replace("requests", "json"), unlabeled=True).passed


def test_fences_in_list_items_quotes_and_long_fences() -> None:
    listed = (
        "1. Install:\n\n   ```python\n   import os\n   if os:\n       import requests\n   ```\n"
    )
    assert "line 6 imports 'requests'" in code_runs(listed).issues[0]
    on_marker = "- ```python\n  import requests\n  ```\n"
    assert not code_runs(on_marker).passed
    quoted = "> ```python\n> import requests\n> ```\n\nimport requests is prose here.\n"
    assert "line 2 imports" in code_runs(quoted).issues[0]
    unclosed_quote = "> ```python\n> import json\n\nimport requests\n"
    assert code_runs(unclosed_quote).passed  # the quote ended, and the block with it
    long = "````python\nx = '''\n```\n'''\nimport requests\n````\n"
    assert "line 5 imports" in code_runs(long).issues[0]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert "line 2 imports 'requests'" in code_runs("```python\nimport requests\n").issues[0]
    issue = code_runs("```python\ndef f(:\n").issues[0]
    assert "never closed, so the block runs on to line 2" in issue
    in_item = code_runs("- item\n\n  ```python\n  def f(:\n\nprose after the list\n")
    assert "runs on to line 5 " in in_item.issues[0]  # the list item ends the block


def test_issue_names_block_fence_line_and_draft_line() -> None:
    text = "\n".join(
        [
            "# Guide",
            "",
            "```python",
            "import json",
            "```",
            "",
            "Now the client:",
            "",
            "1. a",
            "2. b",
            "3. c",
            "4. d",
            "",
            "```python",
            "import os",
            "",
            "import requests",
            "```",
            "",
        ]
    )
    assert code_runs(text).issues == [
        "Python block 2 (line 14): line 17 imports 'requests', which is not in the "
        "Python 3.9 standard library; use urllib.request instead or add 'requests' to allow"
    ]


# -- options --------------------------------------------------------------------------------


def test_zero_blocks_pass_unless_code_is_required() -> None:
    assert code_runs("Just prose.") == CheckResult(True)
    result = code_runs("Just prose.", require_code=True)
    assert not result.passed and "no Python code block" in result.issues[0]
    assert code_runs(draft("import json"), require_code=True).passed


def test_allow_matches_a_module_and_everything_under_it() -> None:
    passing("import requests.adapters\nfrom requests import get", "3.9", allow=("requests",))
    passing("import google.protobuf.message", "3.9", allow=("google.protobuf",))
    failing("import google.cloud", "3.9", "'google.cloud'", allow=("google.protobuf",))
    failing("import requestsx", "3.9", "'requestsx'", allow=("requests",))
    # a caller who bypasses validation with a bare string still gets one entry
    assert code_runs(draft("import requests"), allow="requests").passed  # type: ignore[arg-type]


def test_unsupported_version_in_a_direct_call_fails_clearly() -> None:
    result = code_runs(draft("import os"), python="2.7")  # type: ignore[arg-type]
    assert not result.passed and "3.8, 3.9" in result.issues[0]


def rubric(options: dict[str, Any], key: str = "code_sample") -> Rubric:
    return Rubric.from_dict(
        {
            "criteria": [
                {"key": key, "description": "d", "checker": "code_runs", "options": options},
            ]
        }
    )


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"python": "2.7"}, "'3.8', '3.9'"),
        ({"python": 3.1}, "python"),
        ({"pyton": "3.9"}, "unknown option 'pyton'"),
        ({"allow": "requests"}, "allow"),
        ({"allow": ["scikit-learn"]}, "not a module name"),
        ({"require_code": [1]}, "require_code"),
    ],
)
def test_bad_options_fail_at_load_naming_the_criterion(
    options: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(RubricError) as info:
        rubric(options, key="crit_code")
    assert "crit_code" in str(info.value) and fragment in str(info.value)


def test_good_options_load_and_grade_without_a_judge() -> None:
    loaded = rubric({"python": "3.12", "allow": ["requests"], "require_code": True})
    assert grade(draft("import requests\nimport tomllib"), loaded).accepted
    evaluation = grade(draft("import yaml"), loaded)
    assert not evaluation.accepted
    assert "'yaml'" in evaluation.criteria[0].issues[0]


def test_registered_through_the_plugin() -> None:
    assert get_checker("code_runs") is code_runs is CHECKERS["code_runs"]


# -- interactive sessions, typing_extensions, compiler messages ------------------------


def test_a_session_transcript_checks_the_typed_lines_on_their_draft_lines() -> None:
    session = ">>> import json\n>>> x = {'a': 1} | {'b': 2}\n>>> x\n{'a': 1, 'b': 2} 😃"
    issue = failing(session, "3.8", "applies '|' to mappings")
    assert "line 5 " in issue  # the draft line where '>>> x = ...' was typed
    passing(session, "3.9")


def test_a_session_continuation_lines_are_code_and_output_is_ignored() -> None:
    session = ">>> for i in range(2):\n...     print(i)\n...\n0\n1\nTraceback ✗ not code"
    passing(session, "3.9")
    failing(">>> import requests\n>>> requests.get('u')\n<Response [200]>", "3.9", "'requests'")


def test_a_malformed_session_prompt_says_how_to_fix_it() -> None:
    issue = failing(">>>x = 1\n>>> y = 2", "3.9", "interactive session")
    assert "put a space after each >>>" in issue


def test_typing_extensions_names_its_standard_library_home() -> None:
    issue = failing("from typing_extensions import Self, Annotated", "3.11", "typing_extensions")
    assert "'from typing import Self'" in issue and "'from typing import Annotated'" in issue
    later = failing("from typing_extensions import Self", "3.10", "typing_extensions")
    assert "typing.Self (Python 3.11)" in later and "allow" in later
    passing("from typing_extensions import Self", "3.10", allow=["typing_extensions"])
    none = failing("from typing_extensions import Doc", "3.13", "no standard-library counterpart")
    assert "add 'typing_extensions' to allow" in none


def test_duplicate_parameters_of_every_kind_are_found() -> None:
    for code in ("def f(a, *a): pass", "def f(*, a, **a): pass", "def f(a, /, a): pass"):
        failing(code, "3.9", "duplicate argument 'a'")
    passing("def f(a, *b, c, **d): pass", "3.9")


def test_a_compiler_message_names_the_draft_line() -> None:
    issue = failing("x = 1\nfor i in range(3):\n    pass\nbreak", "3.9", "'break' outside loop")
    assert issue.startswith("Python block 1 (line 3): line 7 does not compile")


def test_the_compiler_runs_only_for_blocks_that_need_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = compile

    def counting(*args: Any, **kwargs: Any) -> Any:
        if not (len(args) > 3 and args[3] & ast.PyCF_ONLY_AST):
            calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr("builtins.compile", counting)
    passing("import json\nfor x in []:\n    print(json.dumps(x))", "3.9")
    assert calls == []
    failing("continue", "3.9", "not properly in loop")
    assert len(calls) == 1


# -- standard-library tables ----------------------------------------------------------------


def test_table_for_the_running_interpreter_is_its_own_stdlib() -> None:
    own = {name for name in sys.stdlib_module_names if not is_private(name)}
    assert modules_of(RUNNING) == own


def test_tables_follow_the_documented_changes() -> None:
    assert {"graphlib", "zoneinfo"} <= modules_of(9) - modules_of(8)
    assert modules_of(11) - modules_of(10) == {"tomllib"}
    assert {"distutils", "imp", "asynchat", "asyncore", "smtpd"} <= modules_of(11) - modules_of(12)
    assert {"lib2to3", "telnetlib", "cgi"} <= modules_of(12) - modules_of(13)
    assert modules_of(14) - modules_of(13) == {"annotationlib", "compression"}
    assert all(not is_private(name) for name in module_table())
    assert SUPPORTED[0] == "3.8" and SUPPORTED[-1] == "3.14"


# -- robustness -----------------------------------------------------------------------------

NASTY = [
    draft("x = " + "-" * 100_000 + "1"),
    draft("(" * 1000 + ")" * 1000),
    draft("import typing\nx = typing" + ".a" * 50_000),
    draft("def f(x: " + " | ".join(["int"] * 20_000) + "): pass"),
    draft("import os\x00"),
    draft("x = '\ud800'"),
    draft("".join("    " * i + "if x:\n" for i in range(120)) + "    " * 120 + "pass"),
    "```python\n" + "import requests\n" * 2000,
    "```",
    "```python",
    "~~~~~~",
    "\u2028```python\n\x0cimport os\u2028import requests\n```\r\n",
    ("```python\nimport requests\n```\n" * 200),
    draft("f'{" * 200 + "}'" * 200),
    draft("x = 1 if 2 else 3\n" * 5000),
    draft(">>> x = 1\n" * 20_000),
    draft(">>> " + "a" * 200_000),
    draft(">>> x\n" + "output line\n" * 50_000),
    draft(
        "".join(f"v{i} = v{i + 1}\nv{i} = v{i + 2}\nv{i} = {{}}\n" for i in range(2000)) + "v0 | v1"
    ),
    draft("x = {}\nx" + ".keys()" * 20_000),
    draft("import os\n" + "f(" * 5000 + ")" * 5000),
    draft("from os import (" + "a, " * 50_000),
]


@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
@pytest.mark.parametrize("python", ["3.8", "3.9", "3.12", "3.14"])
def test_nasty_inputs_give_a_result_never_an_exception(text: str, python: str) -> None:
    # every block is parsed (none refused for its size), so the parser's paths run
    result = code_runs(text, python=python, max_block_chars=10**9)  # type: ignore[arg-type]
    assert isinstance(result, CheckResult)
    assert not any("bug in the checker" in issue for issue in result.issues)
    assert len(result.issues) <= 20


CODEY = st.sampled_from(
    [
        "```python",
        "```py",
        "~~~python",
        "```",
        "~~~",
        "   ```python",
        "> ```python",
        "import requests",
        "import os, sys",
        "from . import x",
        "from typing import Self",
        "def f(x: int | None) -> list[int]:",
        "    return x",
        "    await y",
        "async def g():",
        "class C:",
        "    x: int | None = None",
        "match x:",
        "    case 1:",
        "        pass",
        "with (a as b, c as d):",
        "a[*b]",
        "{y := 1}",
        "try:",
        "except ImportError:",
        "if sys.version_info >= (3, 10):",
        "else:",
        'f"{"a"}"',
        "@x[0]",
        "yield 1",
        "(((",
        "zip(a, b, strict=True)",
        ">>> import os",
        "... x = 1",
        ">>>x",
        "break",
        "nonlocal q",
        "[x async for x in y]",
        "a = {} | {}",
        "from typing_extensions import Self",
        "'s'.removeprefix('x')",
        "itertools.pairwise(x)",
        "\x00",
        "\t",
        "é",
        "\\",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(CODEY | st.text(max_size=20), max_size=30).map("\n".join), st.sampled_from(SUPPORTED)
)
def test_any_markdown_gives_a_check_result(text: str, python: str) -> None:
    result = code_runs(text, python=python)  # type: ignore[arg-type]
    assert isinstance(result, CheckResult)
    assert result.passed is (not result.issues)
    assert not any("bug in the checker" in issue for issue in result.issues)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_gives_a_check_result(text: str) -> None:
    for wrapped in (text, draft(text)):
        result = code_runs(wrapped)
        assert isinstance(result, CheckResult)
        assert not any("bug in the checker" in issue for issue in result.issues)


@contextlib.contextmanager
def full_walk_forced() -> Iterator[None]:
    """Make every block take the full walk, as if its text could trigger any rule."""
    saved = scan_module.needs_expressions
    scan_module.needs_expressions = lambda source, target: True
    try:
        yield
    finally:
        scan_module.needs_expressions = saved


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CODEY, max_size=25).map("\n".join), st.sampled_from(SUPPORTED))
def test_fast_path_agrees_with_the_full_walk_on_random_code(code: str, python: str) -> None:
    text = draft(code)
    fast = code_runs(text, python=python)  # type: ignore[arg-type]
    with full_walk_forced():
        slow = code_runs(text, python=python)  # type: ignore[arg-type]
    assert fast == slow


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("import os\x00", "NUL character"),
        ("x = '\ud800'", "lone surrogate"),
        ("x = " + "-" * 50_000 + "1", "nested too deeply"),
        ("def f(:\n    pass", "line 4 does not parse as Python 3.9"),
    ],
)
def test_unparsable_blocks_say_why(code: str, fragment: str) -> None:
    failing(code, "3.9", fragment)


def test_text_no_python_accepts_is_not_blamed_on_a_newer_target() -> None:
    issue = failing("import os\x00", "3.14", "NUL character")
    assert "could not be checked" not in issue


def test_parser_warnings_do_not_fail_a_block_that_runs() -> None:
    # pytest turns warnings into errors here, as `python -W error` would: an
    # invalid escape still runs, so it must not read as a syntax error.
    passing('pattern = "\\d+"', "3.9")


def test_issues_are_capped_with_a_count_of_the_rest() -> None:
    issues = code_runs("```python\nimport requests\n```\n" * 200).issues
    assert len(issues) == 20
    assert issues[-1] == "... and 181 more problems like these"


def test_the_safety_net_turns_an_internal_error_into_a_failed_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("gradeloop_checkers.code_runs.fences", broken)
    result = code_runs(draft("import os"))
    assert not result.passed and "RuntimeError: boom" in result.issues[0]


def test_never_imports_or_runs_the_draft(tmp_path: Any) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\nimport os\nos.system('exit 1')"
    assert code_runs(draft(code)).passed
    assert not marker.exists()
    assert "json_module_never_imported_xyz" not in sys.modules
    code_runs(draft("import json_module_never_imported_xyz"))
    assert "json_module_never_imported_xyz" not in sys.modules
