"""code_runs on huge blocks: past max_block_chars a block fails unread (never a pass),
in memory bounded by the draft, not by Python's parser."""

from __future__ import annotations

import tracemalloc

import pytest

from gradeloop import Rubric
from gradeloop.errors import RubricError
from gradeloop_checkers.code_runs import MAX_BLOCK_CHARS, code_runs


def block(chars: int, line: str = "x = 1\n") -> str:
    body = line * (chars // len(line))
    body += "#" * (chars - len(body) - 1) + "\n" if chars - len(body) else ""
    assert len(body) == chars
    return f"intro\n\n```python\n{body}```\n"


def test_a_block_past_the_limit_fails_unread_naming_the_block() -> None:
    result = code_runs(block(MAX_BLOCK_CHARS + 1))
    assert result.passed is False
    [issue] = result.issues
    assert issue.startswith("Python block 1 (line 3): is 100,001 characters long")
    assert "max_block_chars" in issue


def test_a_block_at_the_limit_is_checked_as_usual() -> None:
    assert code_runs(block(MAX_BLOCK_CHARS)).passed is True
    bad = code_runs(block(MAX_BLOCK_CHARS, "import requests\n"))
    assert bad.passed is False and "requests" in bad.issues[0]


def test_the_limit_is_an_option() -> None:
    assert code_runs(block(150_000), max_block_chars=200_000).passed is True
    assert code_runs(block(150), max_block_chars=100).passed is False
    rubric = {"criteria": [{"key": "c", "description": "d", "checker": "code_runs",
                            "options": {"max_block_chars": 0}}]}  # fmt: skip
    with pytest.raises(RubricError, match="max_block_chars"):
        Rubric.from_dict(rubric)


def test_a_huge_block_costs_memory_in_proportion_to_the_draft_only() -> None:
    draft = block(5_000_000)
    tracemalloc.start()
    try:
        result = code_runs(draft)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.passed is False and "5,000,000 characters" in result.issues[0]
    assert peak < 4 * len(draft)  # Python's parser would need about 2 GB


def test_many_blocks_under_the_limit_are_all_checked() -> None:
    body = "x = 1\n" * 1000
    draft = (
        "".join(f"```python\n{body}```\n\n" for _ in range(20)) + "```python\nimport yaml\n```\n"
    )
    result = code_runs(draft)
    assert result.passed is False and "Python block 21" in result.issues[0]
