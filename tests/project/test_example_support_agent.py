"""examples/support-agent: a support agent's transcripts, graded offline as docs/agents.md says."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from gradeloop import Transcript
from gradeloop.migration import read_drafts
from tests.support.cli_helpers import cli

HERE = Path(__file__).resolve().parents[2] / "examples" / "support-agent"

FAILED = {
    "t1-good": (),
    "t2-no-lookup": ("right_tools",),
    "t3-wrong-order": ("right_tools",),
    "t4-deletes-account": ("right_tools", "no_account_changes"),
    "t5-double-refund": ("right_tools", "one_refund"),
    "t6-good-anthropic": (),
    "t7-loops": ("right_tools", "concise"),
    "t8-forgets-to-say": ("tells_the_customer",),
}


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    return runpy.run_path(str(HERE / "grade_offline.py"))


def test_each_transcript_fails_for_its_reason(example: dict[str, Any]) -> None:
    graded = example["grade_all"]()
    assert {ident: ev.failed_keys for ident, ev in graded} == FAILED
    by_id = dict(graded)
    assert (
        by_id["t3-wrong-order"]["right_tools"]
        .issues[0]
        .startswith('call 2 is issue_refund({"order_id":"A1030"')
    )
    assert by_id["t4-deletes-account"]["no_account_changes"].issues == (
        """forbidden tool 'delete_account' was called: delete_account({"user_id":"u_5521"}) """
        "(message 3)",
    )


def test_both_message_shapes_are_in_the_example() -> None:
    shapes = set()
    for item in read_drafts(HERE / "transcripts.jsonl"):
        assert isinstance(item.draft, Transcript) and isinstance(item.reference, Transcript)
        first = item.draft.messages[-1]["content"]
        shapes.add("anthropic" if isinstance(first, list) else "openai")
    assert shapes == {"anthropic", "openai"}


def test_the_migration_figures_are_the_documented_ones(example: dict[str, Any]) -> None:
    report, calibration = example["migrate"]()
    [key] = report.keys
    assert key.stats.agreement == 0.5
    assert {k.rated_by: k.stats.agreement for k in calibration.keys} == {
        "judge": 0.5,
        "tool_sequence": 1.0,
    }


def test_the_script_prints_the_results(example: dict[str, Any], capsys: Any) -> None:
    example["main"]()
    out = capsys.readouterr().out
    assert "t1-good              accepted" in out
    assert "t7-loops             failed: right_tools, concise" in out
    assert "tool_sequence  agrees with people on 100%" in out


def test_the_cli_grades_the_example_offline() -> None:
    ran = cli(
        "grade",
        "--drafts",
        str(HERE / "transcripts.jsonl"),
        "--rubric",
        str(HERE / "rubric.toml"),
        "--json",
        "--no-history",
        "--quiet",
    )
    assert ran.code == 1
    lines = [json.loads(line) for line in ran.out.splitlines()]
    assert [line["id"] for line in lines if line["passed"]] == ["t1-good", "t6-good-anthropic"]
