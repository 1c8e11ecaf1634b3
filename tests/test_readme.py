"""The README's Python examples run as written (the model calls go to the emulator)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gradeloop.testing import text_reply, verdict_reply
from tests.emulator import Emulator

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(
    r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL
)


def _judge_keys(schema: dict[str, Any]) -> list[str]:
    met = schema["properties"]["criteria_met"]
    if "$ref" in met:  # pydantic puts nested models in $defs
        met = schema["$defs"][met["$ref"].rsplit("/", 1)[-1]]
    return list(met["properties"])


def model(body: dict[str, Any]) -> Any:
    if "output_config" in body:
        keys = _judge_keys(body["output_config"]["format"]["schema"])
        return verdict_reply(
            {
                "reasoning": "ok",
                "criteria_met": dict.fromkeys(keys, True),
                "passed": True,
                "issues": [],
            }
        )
    return text_reply("# Guide\n\nShort and correct. See 4.2.\n")


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_readme_example_runs(
    index: int,
    emulator: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    emulator.responder = model
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    monkeypatch.chdir(ROOT)
    exec(compile(BLOCKS[index], f"README.md block {index + 1}", "exec"), {})
