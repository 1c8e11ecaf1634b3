"""docs/langgraph.md: its Python examples run as written (the model is the emulator)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.project.test_docs_blocks import model
from tests.support.cli_helpers import EXAMPLE, ROOT
from tests.support.emulator import Emulator

DOC = ROOT / "docs" / "langgraph.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def test_the_doc_has_its_four_examples() -> None:
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_example_runs(
    index: int,
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    emulator.responder = model
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    shutil.copytree(EXAMPLE, tmp_path / "examples" / EXAMPLE.name)
    monkeypatch.chdir(tmp_path)  # the checkpoint example writes checkpoints.db here
    exec(compile(BLOCKS[index], f"docs/langgraph.md block {index + 1}", "exec"), {})
    out = capsys.readouterr().out
    assert out.strip()
    assert "False" not in out  # the emulator's drafts pass: every example must say so
    assert len(emulator.bodies) >= 2
