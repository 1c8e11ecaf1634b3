"""The offline first hour of docs/models.md on the real model (marker local_model).

The packaged Gemma 3 270M is a base model: asked for a draft it runs on until
``max_tokens``, so the loop stops in round 1 and says what the draft had written. The
documented offline loop therefore takes its drafts from the example's stand-in writer
and its verdicts from the model, over the CLI as a user types it. The model's verdicts
are noise: these tests check that the loop runs to its end and what the checkers decide.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.local_model.helpers import MODEL, LocalServer
from tests.migration.test_compare import stand_in
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.parametrize("local_server", ["llama-cpp-python"], indirect=True),
]


def test_the_documented_offline_loop_runs_to_its_end(
    local_server: LocalServer, emulator: Emulator, tmp_path: Path
) -> None:
    emulator.responder = stand_in().respond  # the stand-in writer (and judge, unused here)
    ran = cli(
        "optimize", "--task-file", str(EXAMPLE / "task.md"),
        "--rubric", str(EXAMPLE / "rubric.toml"), "--base-url", emulator.base_url,
        "--model", "stand-in", "--judge-model",
        f"openai-compatible:{MODEL}@{local_server.base_url}", "--max-tokens", "1024",
        "--db", str(tmp_path / "h.db"),
    )  # fmt: skip
    assert ran.code in (0, 1), ran.err  # passed or not: the model's verdicts decide
    rounds = [ln for ln in ran.err.splitlines() if ln.startswith("round ")]
    assert 2 <= len(rounds) <= 3, ran.err
    failed = [line.split("failed: ")[1].split("  ")[0].split(", ") for line in rounds]
    assert {"code_runs", "sentence_len"} <= set(failed[0])  # the checkers: draft.md fails
    assert not {"code_runs", "sentence_len"} & set(failed[1])  # the revision fixed both
    assert "judge failed" not in ran.err  # a grammar-constrained verdict every round
    assert ("PASSED: passed after 2" in ran.err) or ("NOT PASSED: max_rounds" in ran.err)
    assert "cost unknown" in ran.err


def test_the_packaged_model_cannot_draft_and_the_error_shows_what_it_wrote(
    local_server: LocalServer, tmp_path: Path
) -> None:
    db = tmp_path / "h.db"
    ran = cli(
        "optimize", "--task", "Reply to a refund request in two sentences.",
        "--rubric", str(EXAMPLE / "rubric.toml"), "--provider", "openai-compatible",
        "--base-url", local_server.base_url, "--model", MODEL, "--judge-model", MODEL,
        "--max-tokens", "32", "--db", str(db),
    )  # fmt: skip
    assert ran.code == 2, ran.err
    [error] = [ln for ln in ran.err.splitlines() if ln.startswith("gradeloop: error:")]
    assert "the draft was cut off at max_tokens=32" in error and "it began '" in error
    loop_id = ran.err.split("gradeloop history ")[1].split()[0]
    shown = cli("history", loop_id, "--db", str(db))
    assert "it had written" in shown.out and "failed: NotAnAnswer" in shown.out
