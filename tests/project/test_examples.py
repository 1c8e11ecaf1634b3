"""The shipped examples load and behave as the docs say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradeloop import Rubric, grade, run_loop
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    "path", sorted(EXAMPLES.glob("*/rubric*.toml")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_shipped_rubric_loads(path: Path) -> None:
    assert len(Rubric.load(path)) >= 1


def test_the_payments_draft_fails_both_code_keys_for_the_documented_reasons() -> None:
    rubric = Rubric.load(EXAMPLES / "payments-guide" / "rubric.toml")
    assert [c.key for c in rubric.code_criteria] == ["code_runs", "sentence_len"]
    draft = (EXAMPLES / "payments-guide" / "draft.md").read_text(encoding="utf-8")
    ev = grade(draft, rubric, skip_judge=True)
    assert ev.failed_keys == (
        "api_cited",
        "code_runs",
        "errors_named",
        "sentence_len",
        "no_invention",
    )
    issues = "\n".join(ev.verdict.issues)
    assert "imports 'requests'" in issues and "'str | None'" in issues
    assert "has 58 words (max 40)" in issues


def test_the_headphones_rubric_reproduces_seed_003() -> None:
    rubric = Rubric.load(EXAMPLES / "headphones" / "rubric.toml")
    words = " ".join(["word"] * 80)
    judge = FakeJudge(
        verdict(
            True,
            {},
            issues=["Add more emotional appeal"],
            scores={"clarity": 8, "persuasiveness": 6, "technical_accuracy": 9},
        ),
        verdict(True, {}, scores={"clarity": 8, "persuasiveness": 10, "technical_accuracy": 8}),
    )
    result = run_loop(
        "Write it.",
        rubric,
        generator=FakeGenerator([words + " one", words + " two " * 9]),
        judge=judge,
    )
    assert result.to_json()["improvement_trajectory"] == [7.5, 8.8]
    assert result.passed is True


def test_the_readme_says_what_the_offline_example_shows() -> None:
    from tests.support.cli_helpers import cli

    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    intro = readme.split("## Try it", 1)[1].split("```sh", 1)[0]
    ran = cli(
        "grade",
        "examples/payments-guide/draft.md",
        "--rubric",
        "examples/payments-guide/rubric.toml",
        "--code-only",
        "--json",
        "--no-history",
    )
    assert ran.code == 1  # as the README says
    criteria = json.loads(ran.out)["criteria"]
    failed = [c["name"] for c in criteria if c["status"] == "failed"]
    assert failed == ["code_runs", "sentence_len"]
    for key in failed:  # every key that fails is named, not only the unchecked ones
        assert f"`{key}`" in intro, key
    assert "not checked" in intro and "requests" in intro and "58 words" in intro
