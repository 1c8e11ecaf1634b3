"""Two labellers' agreement (calibrate with two files) and calibrate's fingerprint warnings."""

from __future__ import annotations

import json
from pathlib import Path

from gradeloop import Rubric
from gradeloop.migration import LabelledItem
from gradeloop.migration._labellers import labeller_agreement
from tests.support.cli_helpers import cli
from tests.support.description_judge import DescriptionJudge
from tests.support.emulator import Emulator

RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "cites", "description": "Cites a URL."},
            {"key": "tone", "description": "Polite.", "scale": "score", "threshold": 6},
        ]
    }
)


def items(labels: list[dict[str, bool | float]]) -> list[LabelledItem]:
    return [LabelledItem(f"i{n}", "t", f"d{n}", lab) for n, lab in enumerate(labels)]


def test_agreement_per_key_and_ambiguity() -> None:
    alice = items([{"cites": c, "tone": 8} for c in (True, True, False, False, True)])
    bob = items([{"cites": c, "tone": 7} for c in (True, False, True, False, True)])
    out = labeller_agreement(alice, list(reversed(bob)), RUBRIC)  # matched by text, not order
    assert out["cites"].stats.agreement == 0.6 and out["cites"].ambiguous
    # tone: 8 and 7 are both met at threshold 6: full agreement, not ambiguous
    assert out["tone"].stats.agreement == 1.0 and not out["tone"].ambiguous


def test_agreement_just_at_the_bar_is_not_ambiguous() -> None:
    alice = items([{"cites": c} for c in (True,) * 5 + (False,) * 5])
    bob = items([{"cites": c} for c in (True,) * 5 + (False,) * 4 + (True,)])
    (figures,) = labeller_agreement(alice, bob, RUBRIC).values()
    assert figures.stats.agreement == 0.9 and figures.stats.kappa == 0.8
    assert not figures.ambiguous
    # a lower kappa at the same agreement is ambiguous
    bob = items([{"cites": c} for c in (True,) * 4 + (False,) + (False,) * 5])
    assert labeller_agreement(alice, bob, RUBRIC)["cites"].stats.agreement == 0.9
    skewed_a = items([{"cites": c} for c in (True,) * 9 + (False,)])
    skewed_b = items([{"cites": c} for c in (True,) * 8 + (False, True)])
    skewed = labeller_agreement(skewed_a, skewed_b, RUBRIC)["cites"]
    assert skewed.stats.agreement == 0.8 and skewed.stats.kappa is not None
    assert skewed.stats.kappa < 0.6 and skewed.ambiguous


def test_no_shared_drafts_no_figures() -> None:
    alice = items([{"cites": True}])
    other = [LabelledItem("x", "t", "another draft", {"cites": True})]
    assert labeller_agreement(alice, other, RUBRIC) == {}


DRAFTS = [
    "See http://a.example",
    "source: the handbook",
    "nothing cited",
    "http://b.example and source: x",
    "plain words",
    "more http://c.example",
]


def _write(path: Path, labels: list[bool]) -> Path:
    lines = [
        json.dumps({"id": f"d{n}", "task": "t", "draft": d, "labels": {"cites": lab}})
        for n, (d, lab) in enumerate(zip(DRAFTS, labels, strict=True))
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_calibrate_with_two_labellers_and_fingerprint_warnings(
    tmp_path: Path, emulator: Emulator
) -> None:
    emulator.responder = DescriptionJudge()
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "cites"\ndescription = "Cites a URL."\n', encoding="utf-8"
    )
    alice = _write(tmp_path / "alice.jsonl", [True, True, False, True, False, True])
    bob = _write(tmp_path / "bob.jsonl", [True, False, False, True, True, False])
    common = ["--rubric", str(rubric), "--base-url", emulator.base_url, "--db", str(tmp_path / "h")]
    ran = cli("calibrate", str(alice), str(bob), *common, "--json")
    assert ran.code == 0, ran.err
    out = json.loads(ran.out)
    figures = out["inter_annotator"]["keys"]["cites"]
    assert figures["n"] == 6 and figures["agreement"] == 0.5 and figures["ambiguous"] is True
    assert out["fingerprint"]["model"] == "claude-opus-5-5" and out["fingerprint_warnings"] == []
    # the text report says the key is ambiguous
    ran = cli("calibrate", str(alice), str(bob), *common, "--no-history")
    assert "cites (ambiguous)" in ran.out and "the criterion is ambiguous" in ran.out
    # a later run with another, undated judge model is told what changed
    ran = cli("calibrate", str(alice), *common, "--judge-model", "claude-3-5-haiku-latest")
    assert ran.code == 0, ran.err
    assert "differ in judge model: claude-opus-5-5 vs claude-3-5-haiku-latest" in ran.err
    assert ran.err.count("alias without a date") == 1
    ran = cli("calibrate", str(alice), str(bob), str(alice), *common)
    assert ran.code == 2 and "not 3" in ran.err
