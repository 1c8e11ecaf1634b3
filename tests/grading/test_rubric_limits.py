"""Rubric loading raises only gradeloop's documented errors, whatever the file holds.

Issue 11: deep nesting used to raise RecursionError (the CLI said "internal error",
exit 3), ``Rubric.from_dict({1: 2})`` a TypeError, ``Rubric.load("\\x00bad")`` a bare
ValueError, and ``schema_file = "/dev/zero"`` read forever. Each is a RubricError now,
and exit 2 on the command line; each has a passing twin.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from gradeloop import Rubric
from gradeloop.errors import InputError, RubricError, UnusableFileError
from gradeloop.grading import Registry, read_user_file
from gradeloop.grading._files import RUBRIC_LIMIT, describe_size, read_utf8
from tests.support.cli_helpers import cli

CRITERION = '[[criteria]]\nkey = "a"\ndescription = "A is done."\n'


def nested_toml(depth: int) -> str:
    return f"deep = {'[' * depth}{']' * depth}\n{CRITERION}"


def nested_json(depth: int) -> str:
    crit = '[{"key": "a", "description": "A is done."}]'
    return f'{{"criteria": {crit}, "deep": {"[" * depth}{"]" * depth}}}'


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.toml", nested_toml(600)),
        ("deep.json", nested_json(100_000)),
        ("deeper.toml", nested_toml(70)),  # parses, but past the rubric's own limit
        ("deeper.json", nested_json(70)),
    ],
)
def test_deep_nesting_is_a_rubric_error_not_a_recursion_error(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(RubricError, match=r"nested too deeply.*at most 64 levels"):
        Rubric.load(path, registry=Registry(autoload=False))
    assert time.perf_counter() - started < 10  # generous: no quadratic walk either


def test_shallow_nesting_loads(tmp_path: Path) -> None:  # the twin
    path = tmp_path / "ok.json"
    data = json.loads(nested_json(3))
    del data["deep"]
    data["criteria"][0]["description"] = "A is done."
    path.write_text(json.dumps(data), encoding="utf-8")
    assert Rubric.load(path, registry=Registry(autoload=False)).keys == ("a",)


def test_from_dict_with_deep_python_data_is_a_rubric_error() -> None:
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(RubricError, match="nested too deeply"):
        Rubric.from_dict({"criteria": [{"key": "a", "description": "d", "options": {"x": deep}}]})


@pytest.mark.parametrize(
    "data",
    [{1: 2}, {"criteria": [{1: 2}]}, {"criteria": [{"key": "a", "description": "d", None: 1}]}],
)
def test_non_string_field_names_are_a_rubric_error(data: Any) -> None:
    with pytest.raises(RubricError, match="field names are strings"):
        Rubric.from_dict(data)


@pytest.mark.parametrize("path", ["\x00bad", "a\x00b.toml"])
def test_a_nul_in_the_path_is_a_rubric_error(path: str) -> None:
    with pytest.raises(RubricError, match=r"NUL byte") as info:
        Rubric.load(path)
    assert "\x00" not in str(info.value)  # shown escaped, never raw


def test_a_path_of_the_wrong_type_is_a_rubric_error() -> None:
    with pytest.raises(RubricError, match="string or a path, not int"):
        Rubric.load(5)  # type: ignore[arg-type]


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_device_is_refused_before_it_is_read(device: str) -> None:
    with pytest.raises(RubricError, match="character device, not a regular file"):
        Rubric.load(device)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "rubric.toml"
    os.mkfifo(fifo)  # nobody writes: opening it to read would block forever
    with pytest.raises(RubricError, match="pipe"):
        Rubric.load(fifo)


def test_a_rubric_over_the_size_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_text(CRITERION + "# " + "x" * RUBRIC_LIMIT + "\n", encoding="utf-8")
    with pytest.raises(RubricError, match=r"is 4 MiB; a rubric file may be at most 4 MiB"):
        Rubric.load(big)
    small = tmp_path / "small.toml"
    small.write_text(CRITERION + "# " + "x" * 1000 + "\n", encoding="utf-8")
    assert Rubric.load(small, registry=Registry(autoload=False)).keys == ("a",)  # the twin


def test_schema_file_on_a_device_is_a_rubric_error_at_once(tmp_path: Path) -> None:
    pytest.importorskip("jsonschema")
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "j"\ndescription = "valid JSON"\nchecker = "json_schema"\n'
        'options = { schema_file = "/dev/zero" }\n',
        encoding="utf-8",
    )
    started = time.perf_counter()
    with pytest.raises(RubricError, match="schema file '/dev/zero' is a character device"):
        Rubric.load(rubric)
    assert time.perf_counter() - started < 10
    (tmp_path / "schema.json").write_text('{"type": "object"}', encoding="utf-8")
    rubric.write_text(rubric.read_text().replace("/dev/zero", "schema.json"), encoding="utf-8")
    assert Rubric.load(rubric).keys == ("j",)  # the twin


def test_a_deeply_nested_schema_file_is_a_rubric_error(tmp_path: Path) -> None:
    pytest.importorskip("jsonschema")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "j"\ndescription = "valid JSON"\nchecker = "json_schema"\n'
        'options = { schema_file = "deep.json" }\n',
        encoding="utf-8",
    )
    with pytest.raises(RubricError, match="nested too deeply"):
        Rubric.load(rubric)


# -- the shared reader -------------------------------------------------------------------------


def test_the_reader_reads_a_regular_file_and_a_pipe(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(b"hello")
    assert read_user_file(f) == b"hello"
    r, w = os.pipe()
    os.write(w, b"piped")
    os.close(w)
    assert read_utf8(f"/dev/fd/{r}", "draft") == "piped"  # `--draft <(cmd)`
    os.close(r)


def test_the_reader_never_reads_a_pipe_past_the_limit() -> None:
    r, w = os.pipe()
    os.write(w, b"x" * 2000)
    os.close(w)
    with pytest.raises(UnusableFileError, match="more than 1000 bytes; a draft file may be"):
        read_utf8(f"/dev/fd/{r}", "draft", limit=1000)
    os.close(r)


def test_reader_errors_are_input_errors_with_the_path() -> None:
    with pytest.raises(InputError, match="draft file '/dev/zero' is a character device"):
        read_utf8("/dev/zero", "draft")
    with pytest.raises(UnusableFileError, match="schema file '/dev/zero'"):
        read_user_file("/dev/zero", what="schema")


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (4 * 1024**2, "4 MiB"),
        (1700 * 1024**2, "1.7 GiB"),
        (3 * 1024**5, "3072 TiB"),
    ],
)
def test_sizes_read_as_a_person_reads_them(n: int, text: str) -> None:
    assert describe_size(n) == text


# -- the command line --------------------------------------------------------------------------


def test_the_cli_exits_2_with_one_line_for_each_bad_rubric(tmp_path: Path) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("hello\n", encoding="utf-8")
    (tmp_path / "deep.toml").write_text(nested_toml(600), encoding="utf-8")
    (tmp_path / "deep.json").write_text(nested_json(100_000), encoding="utf-8")
    (tmp_path / "zero.toml").write_text(
        '[[criteria]]\nkey = "j"\ndescription = "j"\nchecker = "json_schema"\n'
        'options = { schema_file = "/dev/zero" }\n',
        encoding="utf-8",
    )
    for rubric in ("deep.toml", "deep.json", "zero.toml", "/dev/zero"):
        ran = cli("grade", "--rubric", rubric, str(draft), cwd=tmp_path)
        assert ran.code == 2, (rubric, ran.err)
        assert ran.err.count("\n") == 1 and ran.err.startswith("gradeloop: error: "), ran.err
        assert "internal error" not in ran.err
