"""`gradeloop compare` on a rubric the judge answers nothing of never loads the SDK.

Run in a fresh interpreter: the test process itself has long imported it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CODE_ONLY = """
[[criteria]]
key = "short"
description = "At most 50 words."
checker = "length"
options = { max_words = 50 }
shadow = "sentence_len"
shadow_options = { max_words = 40 }
"""

RUN = """
import sys
from gradeloop.cli import main
code = main(sys.argv[1:])
print("exit", code, "anthropic" in sys.modules)
"""

SIZE_OF_A_JUDGE_REQUEST = """
import sys
from gradeloop import Rubric
from gradeloop.grading._shadow import judge_request
from gradeloop.migration._key_cost import request_size
from gradeloop.models._client import make_client
rubric = Rubric.from_dict({"criteria": [{"key": "tone", "description": "Warm."}]})
request_size(judge_request(rubric))
sized = "anthropic" in sys.modules
make_client(base_url="http://127.0.0.1:9")
print("exit", 0, sized, "anthropic" in sys.modules)
"""


def fresh(script: str, *args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("as_json", [False, True])
def test_compare_on_a_code_only_rubric_does_not_import_the_sdk(
    tmp_path: Path, as_json: bool
) -> None:
    (tmp_path / "rubric.toml").write_text(CODE_ONLY, encoding="utf-8")
    (tmp_path / "drafts.jsonl").write_text(
        '{"id": "a", "task": "greet", "draft": "hello there"}\n', encoding="utf-8"
    )
    args = ["compare", "drafts.jsonl", "--rubric", "rubric.toml", "--no-history"]
    assert fresh(RUN, *args, *(["--json"] if as_json else []), cwd=tmp_path) == "exit 0 False"


def test_sizing_a_judge_request_does_not_import_it_but_building_a_client_does(
    tmp_path: Path,
) -> None:
    # the wire schema is gradeloop's own, so even a judge request is sized without the
    # SDK; the twin: the check above would see the SDK once anything loaded it
    assert fresh(SIZE_OF_A_JUDGE_REQUEST, cwd=tmp_path) == "exit 0 False True"
