"""gradeloop summarize, gate, compare-runs and power: the figures with intervals, the
exit codes a CI job reads, and bad input as one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop.history import HistoryStore
from tests.support.cli_helpers import cli

RUBRIC = (
    '[[criteria]]\nkey = "short"\ndescription = "At most 5 words."\n'
    'checker = "length"\noptions = { max_words = 5 }\n'
    '[[criteria]]\nkey = "hi"\ndescription = "Says hi."\n'
    'checker = "contains"\noptions = { values = ["hi"] }\n'
)


def line(ident: str, met: dict[str, bool], **extra: Any) -> dict[str, Any]:
    """One line of `grade --drafts --json` output."""
    criteria = [
        {"name": k, "weight": 1.0, "score": 10.0 if v else 0.0, "passed": v,
         "status": "met" if v else "failed", "issues": []}
        for k, v in met.items()
    ]  # fmt: skip
    score = 10.0 * sum(met.values()) / len(met)
    return {
        "id": ident,
        "criteria": criteria,
        "overall_score": score,
        "passed": all(met.values()),
        **extra,
    }


def run_file(tmp_path: Path, name: str, flags: list[bool], **extra: Any) -> str:
    path = tmp_path / name
    lines = [line(f"d{i}", {"short": ok, "hi": True}, **extra) for i, ok in enumerate(flags)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


def one_line_error(ran: Any, fragment: str) -> None:
    assert ran.code == 2, ran.err
    assert fragment in ran.err and len(ran.err.strip().splitlines()) == 1, ran.err
    assert "Traceback" not in ran.err


# -- summarize --------------------------------------------------------------------------


def test_summarize_prints_rates_with_wilson_intervals(tmp_path: Path) -> None:
    path = run_file(tmp_path, "a.jsonl", [True] * 15 + [False] * 5)
    ran = cli("summarize", path, "--json")
    assert ran.code == 0, ran.err
    out = json.loads(ran.out)
    assert out["n"] == 20 and out["level"] == 0.95
    assert out["accepted"] == {"rate": 0.75, "ci": [0.5313, 0.8881], "n": 20}
    assert out["keys"]["short"]["ci"] == [0.5313, 0.8881] and out["keys"]["hi"]["rate"] == 1.0
    text = cli("summarize", path)
    assert text.code == 0 and "accepted: 75.0 % [53.1, 88.8]" in text.out


def test_summarize_clusters_by_a_metadata_field(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    lines = [
        line(f"d{i}", {"short": i % 3 == 0}, metadata={"task": f"t{i % 4}"}) for i in range(24)
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = json.loads(cli("summarize", str(path), "--cluster", "task", "--json").out)
    assert out["cluster"] == "task" and out["accepted"]["clusters"] == 4
    one_line_error(cli("summarize", str(path), "--cluster", "team"), "no metadata field 'team'")


def test_summarize_reads_a_stored_run_and_grade_drafts_output(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    drafts = tmp_path / "drafts.jsonl"
    texts = ["hi there", "hi", "a long draft of many words, hi", "no"]
    drafts.write_text(
        "".join(json.dumps({"id": f"x{i}", "draft": t}) + "\n" for i, t in enumerate(texts))
    )
    graded = cli("grade", "--drafts", str(drafts), "--rubric", str(rubric), "--json", "--summary")
    assert graded.code == 1
    *evaluations, last = [json.loads(x) for x in graded.out.splitlines()]
    assert len(evaluations) == 4 and last["summary"]["accepted"]["rate"] == 0.5
    saved = tmp_path / "graded.jsonl"
    saved.write_text(graded.out, encoding="utf-8")
    assert json.loads(cli("summarize", str(saved), "--json").out)["n"] == 4  # summary line skipped
    table = cli("grade", "--drafts", str(drafts), "--rubric", str(rubric), "--no-history")
    assert "accepted: 50.0 % [15.0, 85.0] (95 % Wilson interval)" in table.out
    assert "met: hi 75.0 % [" in table.out and "short 75.0 % [" in table.out
    stored = json.loads(cli("summarize", "grade_", "--json").out)  # the one run recorded
    assert stored["n"] == 4 and stored["accepted"]["rate"] == 0.5
    assert cli("grade", "--drafts", str(drafts), "--rubric", str(rubric)).code == 1
    one_line_error(cli("summarize", "grade_"), "ambiguous")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["summarize", "nowhere.jsonl"], "'nowhere.jsonl' is neither a file nor a grading run"),
        (["summarize", "{file}", "--level", "95"], "--level is between 0 and 1"),
        (["summarize", "{bad}"], "bad.jsonl:2: not a JSON object"),
        (
            ["grade", "{file}", "--rubric", "{file}", "--summary"],
            "--summary and --cluster go with --drafts",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], fragment: str) -> None:
    good = run_file(tmp_path, "a.jsonl", [True])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line("a", {"k": True})) + "\n{oops\n", encoding="utf-8")
    one_line_error(cli(*(a.format(file=good, bad=bad) for a in args)), fragment)


# -- gate -------------------------------------------------------------------------------


def test_gate_exits_1_on_a_significant_regression_with_a_markdown_summary(tmp_path: Path) -> None:
    base = run_file(tmp_path, "base.jsonl", [True] * 300)
    cand = run_file(tmp_path, "cand.jsonl", [True] * 250 + [False] * 50)
    summary = tmp_path / "summary.md"
    ran = cli("gate", "--baseline", base, "--candidate", cand, "--markdown", str(summary))
    assert ran.code == 1, ran.err
    assert ran.out.startswith("regression: 300 paired drafts")
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("### ❌ gradeloop gate: regression") and "`short`" in md
    out = json.loads(cli("gate", "--baseline", base, "--candidate", cand, "--json").out)
    short = out["keys"]["short"]
    assert set(short) >= {"baseline", "candidate", "diff", "ci", "p", "p_adjusted", "verdict"}
    assert short["verdict"] == "regression" and short["diff"] == round(-50 / 300, 4)
    assert out["keys"]["hi"]["verdict"] == "no regression"


def test_gate_exits_0_when_enough_drafts_show_no_regression(tmp_path: Path) -> None:
    flags = [i % 5 != 0 for i in range(400)]
    base, cand = run_file(tmp_path, "a.jsonl", flags), run_file(tmp_path, "b.jsonl", flags)
    ran = cli("gate", "--baseline", base, "--candidate", cand)
    assert ran.code == 0, ran.out + ran.err
    assert ran.out.startswith("no regression")


def test_gate_exits_4_on_insufficient_evidence(tmp_path: Path) -> None:
    flags = [True, False] * 10
    base, cand = run_file(tmp_path, "a.jsonl", flags), run_file(tmp_path, "b.jsonl", flags)
    ran = cli("gate", "--baseline", base, "--candidate", cand)
    assert ran.code == 4 and ran.out.startswith("insufficient evidence")
    loose = cli("gate", "--baseline", base, "--candidate", cand, "--detect", "0.9")
    assert loose.code == 0  # a drop that large these 20 drafts would have shown


def test_gate_max_drop_tolerates_a_small_significant_drop(tmp_path: Path) -> None:
    base = run_file(tmp_path, "a.jsonl", [True] * 400)
    cand = run_file(tmp_path, "b.jsonl", [True] * 380 + [False] * 20)
    assert cli("gate", "--baseline", base, "--candidate", cand).code == 1
    tolerant = cli("gate", "--baseline", base, "--candidate", cand, "--max-drop", "0.08")
    assert tolerant.code == 0, tolerant.out
    assert "regression within max-drop" in tolerant.out
    one_line_error(
        cli("gate", "--baseline", base, "--candidate", cand, "--max-drop", "tone=0.1"),
        "--max-drop names keys neither run has: tone",
    )
    one_line_error(
        cli("gate", "--baseline", base, "--candidate", cand, "--max-drop", "short=2"),
        "--max-drop short=2: give a rate drop between 0 and 1",
    )


def test_gate_with_nothing_in_common_is_bad_input(tmp_path: Path) -> None:
    base = run_file(tmp_path, "a.jsonl", [True] * 3)
    other = tmp_path / "b.jsonl"
    other.write_text(json.dumps(line("zz", {"short": True})) + "\n", encoding="utf-8")
    one_line_error(cli("gate", "--baseline", base, "--candidate", str(other)), "share no draft id")


def test_gate_warns_when_stored_runs_differ_in_rubric(tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text(json.dumps({"id": "a", "draft": "hi"}) + "\n", encoding="utf-8")
    for n, words in enumerate((5, 6)):
        rubric = tmp_path / f"r{n}.toml"
        rubric.write_text(RUBRIC.replace("max_words = 5", f"max_words = {words}"), encoding="utf-8")
        assert cli("grade", "--drafts", str(drafts), "--rubric", str(rubric)).code == 0
    with HistoryStore() as store:
        newest, oldest = (r.run_id for r in store.list_grading_runs())
    ran = cli("gate", "--baseline", oldest, "--candidate", newest)
    assert ran.code == 4  # one draft: too few to tell
    assert f"{oldest} and {newest} differ in rubric" in ran.err


# -- compare-runs, power ---------------------------------------------------------------


def test_compare_runs_reports_and_exits_0_even_on_a_regression(tmp_path: Path) -> None:
    base = run_file(tmp_path, "a.jsonl", [True] * 300)
    cand = run_file(tmp_path, "b.jsonl", [True] * 250 + [False] * 50)
    ran = cli("compare-runs", base, cand, "--json")
    assert ran.code == 0
    out = json.loads(ran.out)
    assert out["verdict"] == "regression" and out["scores"]["overall"]["bootstrap_ci"]


def test_the_shadow_compare_keeps_its_shape() -> None:
    ran = cli("compare", "--help")
    assert ran.code == 0 and "DRAFTS" in ran.out and "--rubric" in ran.out


def test_power_says_how_many_drafts(tmp_path: Path) -> None:
    ran = cli("power", "--baseline-rate", "0.8", "--detect", "0.03", "--json")
    assert ran.code == 0
    assert json.loads(ran.out)["drafts"]["rate"]["needed"] == 2946
    path = run_file(tmp_path, "a.jsonl", [True] * 8 + [False] * 2)
    from_run = json.loads(cli("power", "--from", path, "--detect", "0.05", "--json").out)
    assert set(from_run["drafts"]) == {"accepted", "short", "hi"}
    one_line_error(cli("power", "--baseline-rate", "1.5", "--detect", "0.03"), "between 0 and 1")
    one_line_error(
        cli("power", "--baseline-rate", "0.99", "--detect", "0.03", "--alpha", "2"), "--alpha"
    )
