"""What the commands say: calibrate says when its verdicts came from the verdict cache
(0 tokens is reuse, not a free judge), and counts take the singular for one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_grade_many import files
from tests.migration.test_calibrate import LABELS, SHADOW_RUBRIC, run_calibrate
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator


def test_calibrate_after_the_same_questions_says_the_verdicts_came_from_the_cache(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    first = run_calibrate(emulator, LABELS, "--rubric", str(SHADOW_RUBRIC))
    head = first.out.splitlines()[0]
    assert "from the verdict cache" not in head and " tokens, $" in head
    again = run_calibrate(emulator, LABELS, "--rubric", str(SHADOW_RUBRIC))
    head = again.out.splitlines()[0]
    assert head.endswith(
        "(0 tokens, $0.0000, $0.0000 a draft: all 10 verdicts from the verdict cache)"
    )
    data = json.loads(run_calibrate(emulator, LABELS, "--rubric", str(SHADOW_RUBRIC), "--json").out)
    assert data["judge_calls"] == {"total": 10, "cached": 10}
    assert len(emulator.bodies) == 10  # the first run's requests only


def test_a_partly_cached_calibration_says_how_many(emulator: Emulator, tmp_path: Path) -> None:
    lines = Path(LABELS).read_text().splitlines()
    some = tmp_path / "some.jsonl"
    some.write_text("\n".join(lines[:4]) + "\n")
    assert run_calibrate(emulator, str(some), "--rubric", str(SHADOW_RUBRIC)).code == 0
    head = run_calibrate(emulator, LABELS, "--rubric", str(SHADOW_RUBRIC)).out.splitlines()[0]
    assert "; 4 of 10 verdicts from the verdict cache)" in head


def test_one_draft_is_one_draft(tmp_path: Path) -> None:
    rubric, drafts = files(
        tmp_path,
        '[[criteria]]\nkey = "a"\ndescription = "x"\nchecker = "length"\n'
        'options = { max_words = 5 }\nshadow = "length"\nshadow_options = { max_words = 1 }\n',
        {"id": "d1", "draft": "hello"},
    )
    ran = cli("grade", "--drafts", drafts, "--rubric", rubric)
    assert "\n1 draft: 1 accepted, 0 not" in ran.out and "1 drafts" not in ran.out
    ran = cli("compare", drafts, "--rubric", rubric, "--task", "t")
    assert ran.out.startswith("compared 1 draft with rubric"), ran.out
    many = tmp_path / "m.jsonl"
    many.write_text("".join(json.dumps({"id": f"d{i}", "draft": "hi"}) + "\n" for i in range(2)))
    assert cli("compare", str(many), "--rubric", rubric, "--task", "t").out.startswith(
        "compared 2 drafts"
    )
