"""MCP and the tools at their edges: arguments past the documented limits (nesting,
size, count) are invalid_arguments, unknown arguments are reported, and file options
are refused unless the server allows a folder (and then only inside it)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from gradeloop.errors import DraftSizeWarning
from gradeloop.integrations.mcp_server import build_runner, build_server
from gradeloop.tools import ToolRunner
from gradeloop.tools._args import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_VALUES
from tests.integrations.test_mcp import SHORT, payload


def call(tmp_path: Path, name: str, args: dict[str, Any], **options: Any) -> dict[str, Any]:
    runner = build_runner(db=str(tmp_path / "h.db"), **options)
    server = build_server(runner)
    try:
        return payload(asyncio.run(server.call_tool(name, args)))
    finally:
        runner.close()


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def error_of(result: dict[str, Any]) -> tuple[str, str]:
    return result["error"]["type"], result["error"]["message"]


def test_criteria_nested_100000_deep_as_json_text_are_invalid_arguments(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    kind, message = error_of(call(tmp_path, "evaluate_output", {"output": "x", "criteria": deep}))
    assert kind == "invalid_arguments" and "'criteria' is too large: nested" in message


def test_nesting_is_refused_past_the_limit_and_taken_up_to_it() -> None:
    with ToolRunner(store=":memory:") as runner:
        deep = runner.call(
            "optimize_output", {"output": "x", "feedback": nested(MAX_ARGUMENT_DEPTH)}
        )
        kind, message = error_of(deep)
        assert kind == "invalid_arguments" and f"more than {MAX_ARGUMENT_DEPTH} levels" in message
        shallow = runner.call("optimize_output", {"output": "x", "feedback": nested(1)})
        assert "levels" not in error_of(shallow)[1]  # refused for another reason (no model)


def test_text_past_the_size_limit_is_refused_naming_the_argument() -> None:
    criteria = [{**SHORT, "options": {"max_words": 10}}]
    with ToolRunner(store=":memory:") as runner:
        big = runner.call(
            "evaluate_output", {"output": "a" * (MAX_ARGUMENT_CHARS + 1), "criteria": criteria}
        )
        assert error_of(big) == (
            "invalid_arguments",
            f"'output' is too large: more than {MAX_ARGUMENT_CHARS:,} characters; send less "
            "(see the limits in the docs)",
        )
        with pytest.warns(DraftSizeWarning):  # graded all the same, with a warning
            fits = runner.call(
                "evaluate_output", {"output": "a" * MAX_ARGUMENT_CHARS, "criteria": criteria}
            )
        assert "error" not in fits and fits["passed"] is True


def test_too_many_values_are_refused() -> None:
    with ToolRunner(store=":memory:") as runner:
        many = runner.call(
            "optimize_output", {"output": "x", "feedback": ["a"] * (MAX_ARGUMENT_VALUES + 1)}
        )
        kind, message = error_of(many)
        assert kind == "invalid_arguments" and "values" in message
        ok = runner.call(
            "optimize_output", {"output": "x", "feedback": ["a"] * MAX_ARGUMENT_VALUES}
        )
        assert "too large" not in error_of(ok)[1]


def test_an_unknown_argument_over_mcp_is_reported_not_dropped(tmp_path: Path) -> None:
    args = {"output": "a b", "criteria": [SHORT], "critera": [SHORT]}
    kind, message = error_of(call(tmp_path, "evaluate_output", args))
    assert kind == "invalid_arguments" and "unknown argument 'critera'" in message
    del args["critera"]
    assert call(tmp_path, "evaluate_output", args)["passed"] is True


# -- file options ---------------------------------------------------------------------


SCHEMA = {"type": "object", "required": ["secret_field"]}


def schema_criterion(path: str) -> list[dict[str, Any]]:
    return [
        {
            "key": "shape",
            "description": "Valid.",
            "checker": "json_schema",
            "options": {"schema_file": path},
        }
    ]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "s.json").write_text(json.dumps(SCHEMA))
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(SCHEMA))
    link = allowed / "link.json"
    os.symlink(outside, link)
    return {"allowed": allowed, "inside": allowed / "s.json", "outside": outside, "link": link}


def test_file_options_are_refused_without_allow_dir_saying_nothing_of_the_file(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    messages = []
    for path in (str(files["inside"]), str(tmp_path / "missing.json"), "/etc/passwd"):
        result = call(
            tmp_path, "evaluate_output", {"output": "{}", "criteria": schema_criterion(path)}
        )
        kind, message = error_of(result)
        assert kind == "invalid_criteria" and "--allow-dir" in message
        assert "secret_field" not in message and "not found" not in message
        messages.append(message.replace(path, "PATH"))
    assert len(set(messages)) == 1  # the same answer whether the file exists or not


def test_with_allow_dir_files_inside_are_read_and_outside_refused(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    allow = {"allow_dirs": [str(files["allowed"])]}
    inside = call(
        tmp_path,
        "evaluate_output",
        {"output": "{}", "criteria": schema_criterion(str(files["inside"]))},
        **allow,
    )
    assert inside["passed"] is False and "secret_field" in json.dumps(inside)
    relative = call(
        tmp_path,
        "evaluate_output",
        {"output": '{"secret_field": 1}', "criteria": schema_criterion("s.json")},
        **allow,
    )
    assert relative["passed"] is True  # read from the allowed folder
    for path in (
        str(files["outside"]),
        str(files["link"]),
        str(files["allowed"] / ".." / "outside.json"),
    ):
        kind, message = error_of(
            call(
                tmp_path,
                "evaluate_output",
                {"output": "{}", "criteria": schema_criterion(path)},
                **allow,
            )
        )
        assert kind == "invalid_criteria" and "must be inside" in message


def test_a_tool_runner_without_file_dirs_reads_files_as_a_rubric_may(
    files: dict[str, Path],
) -> None:
    with ToolRunner(store=":memory:") as runner:
        result = runner.call(
            "evaluate_output", {"output": "{}", "criteria": schema_criterion(str(files["outside"]))}
        )
        assert result["passed"] is False and "secret_field" in json.dumps(result)


def test_the_cli_refuses_an_allow_dir_that_is_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gradeloop.cli import main

    assert main(["mcp", "--allow-dir", str(tmp_path / "nope")]) == 2
    assert "--allow-dir folder not found" in capsys.readouterr().err


def test_a_line_nested_too_deeply_to_read_says_so() -> None:
    from gradeloop.integrations.mcp_server import check_line

    deep = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + "[" * 100_000
    [answer] = check_line(deep + "]" * 100_000 + "}") or []
    assert answer["id"] is None and "nested too deeply" in answer["error"]["message"]
    [plain] = check_line("hello") or []
    assert "not JSON" in plain["error"]["message"]
