"""tool_sequence against agentevals' own trajectory-match cases (tests/data/README.md).

Every case whose options gradeloop can state declaratively must get agentevals'
answer. A case with a per-tool override is translated where the override is
``"ignore"`` (the reference's calls of that tool become expected calls without
``args``, which match any arguments); an override that is a function or a list of
key paths is code, not an option, and is listed in :data:`NOT_DECLARATIVE`. The
``differences`` are trajectories on which gradeloop answers otherwise by design
(docs/agents.md explains each): each must still get gradeloop's documented answer,
and agentevals' recorded answer must be the other one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import Transcript, grade
from gradeloop_checkers.trajectory import MODES, Want

DATA = json.loads(
    (Path(__file__).parents[1] / "data" / "agentevals_trajectory_cases.json").read_text("utf-8")
)
CASES = DATA["cases"]
DIFFERENCES = DATA["differences"]

#: Cases whose override is a function or a key-path list: no declarative option says it.
NOT_DECLARATIVE = {
    c["id"] for c in CASES if any(not isinstance(v, str) for v in c["overrides"].values())
}


def test_the_data_records_its_source_commit_and_licence() -> None:
    assert DATA["source"].startswith("https://github.com/langchain-ai/agentevals")
    assert DATA["commit"] == "946ad15b9f2ce9bc9843edd2bb773bd07d78ca7e"
    assert DATA["licence"].startswith("MIT")
    assert len(CASES) == 64 and len(DIFFERENCES) == 6
    assert len(NOT_DECLARATIVE) == 12  # 4 lambdas, 4 functions, 4 key-path lists


def _expected(case: dict[str, Any]) -> list[Want]:
    overrides = case["overrides"]
    reference = Transcript.from_messages(case["reference_outputs"])
    return [
        Want(c.name, None if overrides.get(c.name) == "ignore" else c.args, n)
        for n, c in enumerate(reference.tool_calls)
    ]


@pytest.mark.parametrize(
    "case", [c for c in CASES if c["id"] not in NOT_DECLARATIVE], ids=lambda c: c["id"]
)
def test_gradeloop_gives_agentevals_answer(case: dict[str, Any]) -> None:
    made = Transcript.from_messages(case["outputs"]).tool_calls
    outcome = MODES[case["mode"]](made, _expected(case), case["tool_args_match_mode"])
    assert outcome.passed is case["expected"], outcome.issues


@pytest.mark.parametrize("case", [c for c in CASES if not c["overrides"]], ids=lambda c: c["id"])
def test_through_a_rubric_and_a_reference_transcript_too(case: dict[str, Any]) -> None:
    rubric = {
        "criteria": [
            {
                "key": "trajectory",
                "description": "The agent's calls match the reference's.",
                "checker": "tool_sequence",
                "options": {"mode": case["mode"], "args": case["tool_args_match_mode"]},
            }
        ]
    }
    ev = grade(case["outputs"], rubric, reference=case["reference_outputs"])
    assert ev.accepted is case["expected"], ev.verdict.issues


@pytest.mark.parametrize("diff", DIFFERENCES, ids=lambda d: d["id"])
def test_each_documented_difference_holds(diff: dict[str, Any]) -> None:
    made = Transcript.from_messages(diff["outputs"]).tool_calls
    wants = [
        Want(c.name, c.args, n)
        for n, c in enumerate(Transcript.from_messages(diff["reference_outputs"]).tool_calls)
    ]
    outcome = MODES[diff["mode"]](made, wants, diff["tool_args_match_mode"])
    assert outcome.passed is diff["gradeloop"], outcome.issues
    assert diff["agentevals"] is not diff["gradeloop"]
    assert diff["why"]


def test_every_difference_is_explained_in_the_docs() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "agents.md").read_text("utf-8")
    for diff in DIFFERENCES:
        assert diff["id"] in docs, diff["id"]
