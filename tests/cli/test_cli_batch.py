"""gradeloop grade --drafts F --batch [--no-wait], gradeloop batch status|collect|list
(in-process, against the emulator's Message Batches endpoints)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bulk.test_batches import by_text
from tests.cli.test_cli_grade_many import JUDGE_RUBRIC, files, run
from tests.support.emulator import Emulator


@pytest.fixture
def setup(tmp_path: Path, emulator: Emulator) -> tuple[str, str, tuple[str, ...]]:
    emulator.batches.outcome = by_text
    rubric, drafts = files(
        tmp_path,
        JUDGE_RUBRIC,
        {"id": "one", "task": "t", "draft": "kind words"},
        {"id": "two", "task": "t", "draft": "rude words"},
        {"id": "three", "task": "t", "draft": "expired request"},
    )
    return rubric, drafts, ("--base-url", emulator.base_url)


def test_grade_batch_waits_collects_and_exits_like_grade(
    setup: tuple[str, str, tuple[str, ...]],
    capsys: pytest.CaptureFixture[str],
    emulator: Emulator,
) -> None:
    rubric, drafts, base = setup
    code, out, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch", *base)
    assert code == 1
    assert "submitted batch job gb" in err and "msgbatch_emulated_0001" in err
    polled = [line for line in err.splitlines() if line.startswith("gradeloop: batch job gb")]
    assert polled and "ended" in polled[-1] and "succeeded" in polled[-1]  # a line per poll
    assert "3 drafts: 1 accepted, 2 not (1 with a failed judge)" in out
    assert emulator.bodies == []  # every judge request went through the batch


def test_no_wait_then_status_collect_and_list(
    setup: tuple[str, str, tuple[str, ...]],
    capsys: pytest.CaptureFixture[str],
    emulator: Emulator,
) -> None:
    rubric, drafts, base = setup
    emulator.batches.polls_to_end = 2
    code, out, _ = run(
        capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch", "--no-wait", *base
    )
    assert code == 0 and "collect it later: gradeloop batch collect gb" in out
    job = out.split("collect ")[-1].split()[-1]
    code, out, _ = run(capsys, "batch", "collect", job, *base)
    assert code == 2  # not ended yet: nothing is made up
    code, out, _ = run(capsys, "batch", "status", job, "--json", *base)
    assert code == 0 and json.loads(out)["ended"] is True
    code, out, _ = run(capsys, "batch", "collect", job, "--json", *base)
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and [x["id"] for x in lines] == ["one", "two", "three"]
    assert [x["passed"] for x in lines] == [True, False, False]
    assert lines[2]["judge_error"].startswith("batch_expired")
    code, out, _ = run(capsys, "batch", "list")
    assert code == 0 and job in out and "collected" in out


def test_a_batch_needs_judge_keys_and_a_known_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    from tests.cli.test_cli_grade_many import CODE_RUBRIC

    rubric, drafts = files(tmp_path, CODE_RUBRIC, {"draft": "a"})
    code, _, err = run(
        capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch",
        "--base-url", emulator.base_url,
    )  # fmt: skip
    assert code == 2 and "grade without --batch" in err
    code, _, err = run(capsys, "batch", "status", "gb-nope", "--base-url", emulator.base_url)
    assert code == 2 and "no batch job or batch 'gb-nope'" in err
    code, _, err = run(capsys, "grade", "x.md", "--rubric", rubric, "--batch")
    assert code == 2 and "--batch and --no-wait go with --drafts" in err


def test_collect_reports_duplicated_unknown_and_unreadable_results(
    setup: tuple[str, str, tuple[str, ...]],
    capsys: pytest.CaptureFixture[str],
    emulator: Emulator,
) -> None:
    rubric, drafts, base = setup

    def hostile(lines: list[str]) -> list[str]:
        stranger = json.dumps({"custom_id": "not-ours-1", "result": {"type": "expired"}})
        return ["{not json", *lines, stranger]

    emulator.batches.tamper = hostile
    code, out, err = run(
        capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch", "--json", *base
    )
    assert code == 1
    [line] = [x for x in err.splitlines() if "ignored" in x]
    assert "1 result for ids not in this job ignored" in line
    assert "1 result line that could not be read skipped" in line
    assert [json.loads(x)["id"] for x in out.splitlines()] == ["one", "two", "three"]


def test_a_clean_results_stream_reports_no_problem(
    setup: tuple[str, str, tuple[str, ...]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    rubric, drafts, base = setup
    code, _, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch", *base)
    assert code == 1 and "ignored" not in err and "set aside" not in err
