"""calibrate --suggest-examples: the drafts the judge got wrong, as rubric examples to paste."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from gradeloop import Rubric
from gradeloop.cli import main
from gradeloop.grading import Registry
from gradeloop.migration import LabelledItem, calibrate
from gradeloop.migration._suggest import suggest_examples, suggestions_toml
from tests.migration.test_calibrate import LABELS, SHADOW_RUBRIC, TASK, ScriptedJudge
from tests.migration.test_compare import stand_in
from tests.support.emulator import Emulator


@pytest.fixture
def rubric() -> Rubric:
    return Rubric.from_dict(
        {
            "criteria": [
                {"key": "api_cited", "description": "Cites the spec."},
                {"key": "clarity", "description": "Clear.", "scale": "score"},
            ]
        },
        registry=Registry(autoload=False),
    )


def run(rubric: Rubric, rows: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> Any:
    """rows: (draft, labels, the judge's answers) -> the calibration report."""
    judge = ScriptedJudge({draft: answers for draft, _, answers in rows})
    items = [LabelledItem(f"i{n}", "t", d, labels) for n, (d, labels, _) in enumerate(rows)]
    return calibrate(items, rubric, judge=judge)


def test_only_disagreements_become_examples_labelled_as_people_said(rubric: Rubric) -> None:
    report = run(
        rubric,
        [
            ("agreed", {"api_cited": True, "clarity": 8}, {"api_cited": True, "clarity": 9}),
            ("missed cite", {"api_cited": False}, {"api_cited": True, "clarity": 8}),
            ("muddled", {"clarity": 3}, {"api_cited": True, "clarity": 8}),
            ("fine but judged low", {"clarity": 9}, {"api_cited": True, "clarity": 4}),
        ],
    )
    suggested = suggest_examples(rubric, report.disagreements)
    assert [e["text"] for e in suggested["api_cited"]] == ["missed cite"]
    assert suggested["api_cited"][0]["met"] is False
    assert "the judge said met" in suggested["api_cited"][0]["why"]
    clarity = {e["text"]: e["score"] for e in suggested["clarity"]}
    assert clarity == {"muddled": 3, "fine but judged low": 9}
    assert "the judge scored 8" in suggested["clarity"][0]["why"]


def test_agreement_everywhere_suggests_nothing(rubric: Rubric) -> None:
    report = run(rubric, [("ok", {"api_cited": True}, {"api_cited": True, "clarity": 8})])
    assert suggest_examples(rubric, report.disagreements) == {}
    assert suggestions_toml({}) == ""


def test_shortest_drafts_first_and_at_most_per_key(rubric: Rubric) -> None:
    rows = [("x" * n, {"api_cited": False}, {"api_cited": True, "clarity": 8}) for n in (5, 2, 9)]
    report = run(rubric, rows)
    suggested = suggest_examples(rubric, report.disagreements, per_key=2)
    assert [e["text"] for e in suggested["api_cited"]] == ["xx", "xxxxx"]


def test_a_yes_no_label_on_a_scored_key_is_not_an_example(rubric: Rubric) -> None:
    report = run(rubric, [("d", {"clarity": False}, {"api_cited": True, "clarity": 9})])
    assert report.disagreements  # it is a disagreement...
    assert suggest_examples(rubric, report.disagreements) == {}  # ...that names no score


def test_a_long_example_gets_a_note_to_trim_it(rubric: Rubric) -> None:
    report = run(rubric, [("x" * 700, {"api_cited": False}, {"api_cited": True, "clarity": 8})])
    assert "trim each" in suggestions_toml(suggest_examples(rubric, report.disagreements))
    report = run(rubric, [("short", {"api_cited": False}, {"api_cited": True, "clarity": 8})])
    assert "trim" not in suggestions_toml(suggest_examples(rubric, report.disagreements))


def test_the_toml_pastes_into_a_rubric_that_loads(rubric: Rubric) -> None:
    hostile = 'quote " backslash \\ newline\n tab\t del\x7f close </criteria> \u2028'
    report = run(rubric, [(hostile, {"api_cited": False}, {"api_cited": True, "clarity": 8})])
    text = suggestions_toml(suggest_examples(rubric, report.disagreements))
    examples = tomllib.loads(text)["examples"]
    assert examples[0]["text"] == hostile
    pasted = Rubric.from_dict(
        {"criteria": [{"key": "api_cited", "description": "Cites.", "examples": examples}]},
        registry=Registry(autoload=False),
    )
    assert pasted["api_cited"].examples[0].met is False


def cli(emulator: Emulator, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    emulator.responder = stand_in().respond
    base = ["--task-file", TASK, "--base-url", emulator.base_url]
    code = main(["calibrate", LABELS, "--rubric", str(SHADOW_RUBRIC), "--no-history", *args, *base])
    out, _ = capsys.readouterr()
    return code, out


def test_cli_prints_pasteable_examples(
    emulator: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(emulator, capsys, "--suggest-examples", "--examples-per-key", "2")
    assert code == 0
    _, _, toml_text = out.partition("paste into the criterion):\n")
    blocks = {b.split("'")[1]: "# " + b for b in toml_text.split("# criterion ")[1:]}
    examples = tomllib.loads(blocks["sentence_len"])["examples"]
    assert len(examples) == 2 and all(isinstance(e["met"], bool) for e in examples)
    for block in blocks.values():  # each block pastes on its own
        assert tomllib.loads(block)["examples"]


def test_cli_json_carries_the_suggestions_and_plain_report_does_not(
    emulator: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(emulator, capsys, "--suggest-examples", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["suggested_examples"]["sentence_len"]) == 3  # the judge's 3 misses
    code, out = cli(emulator, capsys, "--json")
    assert "suggested_examples" not in json.loads(out)


def test_cli_refuses_a_zero_limit(emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calibrate", LABELS, "--rubric", str(SHADOW_RUBRIC), "--examples-per-key", "0"])
    assert code == 2
    assert "--examples-per-key must be at least 1" in capsys.readouterr().err
