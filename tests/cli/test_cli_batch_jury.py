"""gradeloop grade --drafts F --batch with several --judge-model (a jury through Message
Batches), gradeloop batch status|collect|list on jobs of several batches, and a job
recorded before juries (history schema 10) still collected. In-process, against the
emulator's batch desk."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, HistoryStore
from gradeloop.bulk import batches
from gradeloop.grading._shadow import judge_request
from gradeloop.history import _sql
from gradeloop.models._batch import batch_request
from gradeloop.testing import verdict_reply
from tests.bulk.test_batches import RUBRIC, by_text
from tests.cli.test_cli_grade_many import JUDGE_RUBRIC, files, run
from tests.support.emulator import Emulator

JURY = ("--judge-model", "claude-a", "--judge-model", "claude-b", "--judge-model", "claude-c")


def by_model(custom_id: str, params: dict[str, Any]) -> Any:
    """claude-c's requests all error; the others find a draft polite unless it is rude,
    except that claude-b finds 'blunt' drafts polite and claude-a does not."""
    text, model = params["messages"][0]["content"], params["model"]
    if model == "claude-c":
        return "errored"
    polite = "rude" not in text and not ("blunt" in text and model == "claude-a")
    return verdict_reply(
        {"reasoning": "r", "criteria_met": {"tone": polite}, "passed": polite,
         "issues": [] if polite else ["tone: curt"]}
    )  # fmt: skip


@pytest.fixture
def setup(tmp_path: Path, emulator: Emulator) -> tuple[str, str]:
    emulator.batches.outcome = by_model
    return files(
        tmp_path,
        JUDGE_RUBRIC,
        {"id": "one", "task": "t", "draft": "kind words"},
        {"id": "two", "task": "t", "draft": "rude words"},
        {"id": "three", "task": "t", "draft": "blunt words"},
    )


def test_grade_batch_with_a_jury_of_three(
    setup: tuple[str, str], capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    rubric, drafts = setup
    code, out, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch",
                         "--json", "--base-url", emulator.base_url, *JURY)  # fmt: skip
    assert code == 1
    assert "(9 requests for 3 drafts; batch msgbatch_emulated_0001)" in err  # one API: one batch
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["id"] for x in lines] == ["one", "two", "three"]
    assert [x["passed"] for x in lines] == [True, False, False]
    tone = [x["criteria"][0]["judging"]["jury"] for x in lines]
    assert tone[0]["votes"] == {"claude-a": True, "claude-b": True}
    assert tone[2]["note"] == "the jury tied: 1 of 2 judges say met, and a tie is not met"
    assert all(t["abstained"]["claude-c"].startswith("batch_errored") for t in tone)
    assert "gradeloop: jury member claude-c: 0 of 3 answered, 3 abstained" in err
    assert "gradeloop: jury member claude-a: 3 of 3 answered, 0 abstained" in err
    assert emulator.bodies == []  # nothing went through /v1/messages


def test_two_apis_two_batches_then_status_collect_and_list(
    setup: tuple[str, str], capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    rubric, drafts = setup
    emulator.batches.polls_to_end = 2  # collect sees them running, status ended
    url = emulator.base_url
    two = ("--judge-model", f"anthropic:claude-a@{url}", "--judge-model",
           f"anthropic:claude-b@{url}/", "--judge-model", f"anthropic:claude-c@{url}/")  # fmt: skip
    code, out, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch",
                         "--no-wait", "--json", *two)  # fmt: skip
    job = json.loads(out)
    assert code == 0 and len(job["batch_ids"]) == 2 and job["requests"] == 9
    assert job["drafts"] == 3 and "batches msgbatch_emulated_0001, msgbatch_emulated_0002" in err
    code, out, _ = run(capsys, "batch", "collect", job["job_id"])
    assert code == 2  # not ended yet
    code, out, _ = run(capsys, "batch", "status", job["job_id"])
    assert code == 0 and "part 1: msgbatch_emulated_0001 ended (judges claude-a)" in out
    assert "part 2: msgbatch_emulated_0002 ended (judges claude-b, claude-c)" in out
    code, out, _ = run(capsys, "batch", "status", job["batch_ids"][1], "--json")
    status = json.loads(out)
    assert status["ended"] and [p["client"] for p in status["parts"]] == [0, 1]
    assert status["counts"] == {"processing": 0, "succeeded": 6, "errored": 3, "canceled": 0,
                                "expired": 0}  # fmt: skip
    code, _, err = run(capsys, "batch", "collect", job["job_id"], "--base-url", url)
    assert code == 2 and "this job's batches went to 2 APIs" in err
    code, out, err = run(capsys, "batch", "collect", job["job_id"], "--json")
    assert code == 1 and [json.loads(x)["passed"] for x in out.splitlines()] == [True, False, False]
    assert "claude-c: 0 of 3 answered" in err
    code, out, _ = run(capsys, "batch", "list")
    assert code == 0 and "3 drafts x 3 judges" in out and "collected" in out


def test_a_jury_set_to_doubtful_is_told_it_ran_as_all(
    setup: tuple[str, str], capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    rubric, drafts = setup
    code, out, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch",
                         "--json", "--base-url", emulator.base_url, *JURY,
                         "--jury-on", "doubtful")  # fmt: skip
    assert code == 1 and "every judge was asked every key" in err
    tone = json.loads(out.splitlines()[0])["criteria"][0]["judging"]["jury"]
    assert tone["on"] == "all" and tone["requested_on"] == "doubtful"


def _old_history(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A history file as gradeloop left it before juries (schema 10)."""
    with monkeypatch.context() as m:
        m.setattr(_sql, "MIGRATIONS", _sql.MIGRATIONS[:10])
        m.setattr(_sql, "SCHEMA_VERSION", 10)
        with HistoryStore(path):
            pass


def _old_job(path: Path, judge: AnthropicJudge, drafts: list[str]) -> str:
    """A one-judge job submitted and recorded as gradeloop did before juries (the rows
    written by the schema-4 statements, no client column, no member requests)."""
    job_id = "gb0123456789ab"
    made = [batch_request(judge, "t", d, judge_request(RUBRIC)) for d in drafts]
    batch = judge.client.messages.batches.create(
        requests=[{"custom_id": f"{job_id}-{i}", "params": p} for i, (p, _) in enumerate(made)]
    )
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO batch_jobs (job_id, created_at, status, rubric_json, judge_json,"
            " requests) VALUES (?, ?, 'submitted', ?, ?, ?)",
            (job_id, time.time(), json.dumps(RUBRIC.to_dict()),
             json.dumps(batches.judge_settings(judge)), len(drafts)),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO batch_parts (job_id, part, batch_id, requests) VALUES (?, 0, ?, ?)",
            (job_id, batch.id, len(drafts)),
        )
        conn.executemany(
            "INSERT INTO batch_requests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(job_id, f"{job_id}-{i}", 0, i, f"d{i}", "t", d, key)
             for i, (d, (_, key)) in enumerate(zip(drafts, made, strict=True))],
        )  # fmt: skip
    conn.close()
    return job_id


@pytest.fixture
def old_job(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, AnthropicJudge, str]:
    """A history file of schema 10 holding a one-judge job over two drafts."""
    emulator.batches.outcome = by_text
    path = tmp_path / "old.db"
    _old_history(path, monkeypatch)
    judge = AnthropicJudge(client=emulator.client(max_retries=0), model="claude-opus-5-5")
    return path, judge, _old_job(path, judge, ["kind words", "errored one"])


def test_a_job_recorded_before_juries_is_still_collected(
    old_job: tuple[Path, AnthropicJudge, str],
) -> None:
    path, judge, job_id = old_job
    with HistoryStore(path) as store:  # opening it migrates it
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == _sql.SCHEMA_VERSION
        conn.close()
        record = store.batch_job(job_id)
        assert [p.client for p in record.parts] == [0] and record.requests == 2
        assert store.batch_member_requests(job_id) == []
        result = batches.collect(job_id, judge=judge, store=store)
        assert [e.accepted for e in result.evaluations] == [True, False]
        assert result.members == {} and result.notes == []


def test_the_cli_collects_a_job_recorded_before_juries(
    old_job: tuple[Path, AnthropicJudge, str],
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, _, job_id = old_job
    base = ("--db", str(path), "--base-url", emulator.base_url)
    code, out, _ = run(capsys, "batch", "status", job_id, "--json", *base)
    assert code == 0 and json.loads(out)["parts"][0]["client"] == 0
    code, out, _ = run(capsys, "batch", "collect", job_id, "--json", *base)
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and [x["id"] for x in lines] == ["d0", "d1"]
    assert lines[0]["passed"] and lines[1]["judge_error"].startswith("batch_errored")
    code, out, _ = run(capsys, "batch", "list", "--db", str(path))
    assert code == 0 and "2 drafts" in out and "judges" not in out


def test_one_judge_model_keeps_a_one_judge_job(
    setup: tuple[str, str], capsys: pytest.CaptureFixture[str], emulator: Emulator
) -> None:
    emulator.batches.outcome = by_text
    rubric, drafts = setup
    code, _, err = run(capsys, "grade", "--drafts", drafts, "--rubric", rubric, "--batch",
                       "--base-url", emulator.base_url, "--judge-model", "claude-a")  # fmt: skip
    assert code == 1 and "jury member" not in err
    assert "(3 requests; batch msgbatch_emulated_0001)" in err
    [job] = HistoryStore().list_batch_jobs()
    assert "jury" not in job.judge and job.judge["model"] == "claude-a"
