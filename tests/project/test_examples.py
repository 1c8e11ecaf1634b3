"""The shipped examples load and behave as the docs say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


# -- the stand-in judge and writer (docs/models.md: the loop offline) ---------------------


def test_the_stand_in_writes_and_judges_the_whole_loop_offline(emulator: Any) -> None:
    from tests.migration.test_compare import stand_in
    from tests.support.cli_helpers import cli

    emulator.responder = stand_in().respond
    ex = EXAMPLES / "payments-guide"
    ran = cli(
        "optimize", "--task-file", str(ex / "task.md"), "--rubric", str(ex / "rubric.toml"),
        "--base-url", emulator.base_url, "--model", "stand-in", "--judge-model", "stand-in",
        "--max-tokens", "1024", "--no-history",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    rounds = [ln for ln in ran.err.splitlines() if ln.startswith("round ")]
    assert rounds[0].startswith("round 1/3  score 6.00  fail  failed: code_runs, sentence_len")
    assert rounds[1].startswith("round 2/3  score 10.00  pass")
    assert "PASSED: passed after 2 rounds" in ran.err
    assert "urllib.request" in ran.out  # the fixed draft d01 is returned


def test_the_stand_in_script_serves_and_prints_its_base_url(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = EXAMPLES / "payments-guide" / "stand_in_judge.py"
    process = subprocess.Popen(
        [sys.executable, str(script), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert json.loads(line) == {"base_url": f"http://127.0.0.1:{port}"}, process.stderr
        body = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "go"}]}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/messages",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "x-api-key": "k"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            reply = json.load(answer)
        assert reply["content"][0]["text"].startswith("# Accepting payments with Ledgerline")
    finally:
        process.terminate()
        process.communicate(timeout=10)  # closes both pipes
