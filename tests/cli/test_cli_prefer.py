"""`gradeloop prefer`, a jury from repeated --judge-model, `optimize --select pairwise` and
the one-line same-family warning, against the emulators, in this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import HistoryStore
from gradeloop.testing import text_reply, verdict_reply
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator
from tests.support.oai_emulator import OAIEmulator, chat

RUBRIC_TOML = """
[[criteria]]
key = "cited"
description = "Cites the spec."

[[criteria]]
key = "short"
description = "At most 4 words."
checker = "length"
options = { max_words = 4 }
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "r.toml").write_text(RUBRIC_TOML)
    (tmp_path / "a.md").write_text("alpha cites 4.2\n")
    (tmp_path / "b.md").write_text("beta is a much longer draft that cites nothing\n")
    return {name: str(tmp_path / name) for name in ("r.toml", "a.md", "b.md")}


def preferred(choice: str) -> Any:
    return verdict_reply({"reasoning": "r", "preferred": {"cited": choice}})


def prefer(emulator: Emulator, files: dict[str, str], *extra: str) -> Any:
    return cli(
        "prefer", files["a.md"], files["b.md"], "--rubric", files["r.toml"], "--task", "t",
        "--base-url", emulator.base_url, *extra,
    )  # fmt: skip


def test_a_consistent_answer_decides_the_key(
    emulator: Emulator, files: dict[str, str], gradeloop_home: Path
) -> None:
    emulator.enqueue(preferred("first"), preferred("second"))
    ran = prefer(emulator, files)
    assert ran.code == 0, ran.err
    assert "winner: A (" in ran.out
    row = next(line for line in ran.out.splitlines() if line.startswith("cited"))
    assert row.split()[-3:] == ["A", "A", "A"]
    assert "judge: 2 calls" in ran.out
    with HistoryStore(gradeloop_home / "history.db") as store:
        (record,) = store.preferences()
    assert record["origin"] == "prefer" and record["winner"] == "a"
    assert record["chosen_output_id"] == files["a.md"]


def test_a_position_biased_answer_is_reported_as_such(
    emulator: Emulator, files: dict[str, str]
) -> None:
    emulator.enqueue(preferred("first"), preferred("first"))
    ran = prefer(emulator, files, "--json", "--no-history")
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    cited = next(k for k in data["keys"] if k["key"] == "cited")
    assert cited == {
        "key": "cited", "choice": "tie", "source": "judge", "consistent": False,
        "a_first": "a", "b_first": "b",
    }  # fmt: skip
    assert data["inconsistent"] == ["cited"] and data["winner"] == "a"  # "short" decided it


def test_many_pairs_print_the_position_bias(
    emulator: Emulator, files: dict[str, str], tmp_path: Path
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "\n".join(json.dumps({"id": f"p{i}", "a": f"x{i}", "b": f"y{i}"}) for i in range(3))
    )
    emulator.responder = lambda body: preferred("first")
    ran = cli("prefer", "--pairs", str(pairs), "--rubric", files["r.toml"], "--base-url",
              emulator.base_url, "--jobs", "2")  # fmt: skip
    assert ran.code == 0, ran.err
    assert "position bias: 3 of 3 comparisons (100%) chose the same position" in ran.out
    assert "leaning first" in ran.out
    ran = cli("prefer", "--pairs", str(pairs), "--rubric", files["r.toml"], "--base-url",
              emulator.base_url, "--json", "--no-history")  # fmt: skip
    data = json.loads(ran.out)
    assert data["position_bias"]["rate"] == 1.0 and [p["id"] for p in data["pairs"]] == [
        "p0", "p1", "p2"]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["A_ONLY"], "give two draft files A B"),
        (["A", "B", "--pairs", "PAIRS"], "not both"),
        (["A", "B", "--judge-model", "openai:gpt-4o"], "unknown provider 'openai'"),
        (["A", "B", "--judge-model", "x", "--judge-model", "y", "--quorum", "3"], "quorum"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(
    emulator: Emulator, files: dict[str, str], tmp_path: Path, args: list[str], why: str
) -> None:
    (tmp_path / "pairs.jsonl").write_text('{"a": "x", "b": 3}\n')
    names = {"A": files["a.md"], "B": files["b.md"], "A_ONLY": files["a.md"]}
    names["PAIRS"] = str(tmp_path / "pairs.jsonl")
    argv = [names.get(a, a) for a in args]
    ran = cli("prefer", *argv, "--rubric", files["r.toml"], "--base-url", emulator.base_url)
    assert ran.code == 2 and why in ran.err and len(ran.err.strip().splitlines()) == 1


def test_a_bad_pairs_line_names_the_file_and_line(
    emulator: Emulator, files: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "pairs.jsonl").write_text('{"a": "x", "b": "y"}\n{"a": "x", "b": 3}\n')
    ran = cli("prefer", "--pairs", str(tmp_path / "pairs.jsonl"), "--rubric", files["r.toml"],
              "--base-url", emulator.base_url)  # fmt: skip
    assert ran.code == 2 and "pairs.jsonl:2: 'b' must be a string" in ran.err


# -- a jury from --judge-model given several times, across providers ------------------------


def test_judge_model_given_twice_makes_a_jury_across_providers(
    emulator: Emulator, oai_emulator: OAIEmulator, files: dict[str, str]
) -> None:
    verdict = {"reasoning": "r", "criteria_met": {"cited": True}, "passed": True, "issues": []}
    emulator.enqueue(verdict_reply(verdict))
    oai_emulator.enqueue(chat(json.dumps(verdict)))
    ran = cli(
        "grade", files["a.md"], "--rubric", files["r.toml"], "--task", "t", "--json",
        "--no-cache", "--base-url", emulator.base_url,
        "--judge-model", "claude-x",
        "--judge-model", f"openai-compatible:qwen3@{oai_emulator.base_url}",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    cited = json.loads(ran.out)["criteria"][0]
    assert cited["judging"]["jury"]["votes"] == {"claude-x": True, "qwen3": True}
    assert cited["agreement"] == 1.0
    assert emulator.bodies[0]["model"] == "claude-x" and oai_emulator.bodies[0]["model"] == "qwen3"


def test_the_rubrics_judge_models_make_the_jury_and_the_cli_overrides_them(
    emulator: Emulator, files: dict[str, str], tmp_path: Path
) -> None:
    url = emulator.base_url
    rubric = tmp_path / "jury.toml"
    rubric.write_text(
        f'judge_models = ["anthropic:claude-a@{url}", "anthropic:claude-b@{url}"]\n'
        'jury = {policy = "majority", quorum = 2}\n' + RUBRIC_TOML
    )
    verdict = {"reasoning": "r", "criteria_met": {"cited": False}, "passed": False,
               "issues": ["cited: no section"]}  # fmt: skip
    emulator.responder = lambda body: verdict_reply(verdict)
    ran = cli("grade", files["a.md"], "--rubric", str(rubric), "--task", "t", "--json",
              "--no-cache")  # fmt: skip
    assert ran.code == 1, ran.err
    assert sorted(b["model"] for b in emulator.bodies) == ["claude-a", "claude-b"]
    ran = cli("grade", files["a.md"], "--rubric", str(rubric), "--task", "t", "--json",
              "--no-cache", "--base-url", url, "--judge-model", "claude-c")  # fmt: skip
    assert emulator.bodies[-1]["model"] == "claude-c" and len(emulator.bodies) == 3


def test_a_bad_judge_models_entry_is_a_rubric_error(files: dict[str, str], tmp_path: Path) -> None:
    rubric = tmp_path / "bad.toml"
    rubric.write_text('judge_models = "claude-a"\n' + RUBRIC_TOML)
    ran = cli("grade", files["a.md"], "--rubric", str(rubric), "--code-only")
    assert ran.code == 2 and "bad.toml: judge_models is a list" in ran.err
    rubric.write_text('jury = {policy = "mean"}\n' + RUBRIC_TOML)
    ran = cli("grade", files["a.md"], "--rubric", str(rubric), "--code-only")
    assert ran.code == 2 and "jury policy must be 'majority' or 'median'" in ran.err


# -- optimize: --select pairwise, and the same-family line ----------------------------------


class Model:
    """Drafts, verdicts that never pass (scores close), and pairwise answers."""

    def __init__(self) -> None:
        self.drafts = 0
        self.prefers = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        schema = (body.get("output_config") or {}).get("format", {}).get("schema", {})
        if "preferred" in schema.get("properties", {}):
            self.prefers += 1
            keys = schema["$defs"]["Preferred"]["properties"]
            return verdict_reply({"reasoning": "r", "preferred": dict.fromkeys(keys, "first")})
        if schema:
            keys = list(schema["$defs"]["CriteriaMet"]["properties"])
            return verdict_reply({"reasoning": "r", "criteria_met": dict.fromkeys(keys, False),
                                  "passed": False, "issues": ["api_cited: cite 4.4"]})  # fmt: skip
        self.drafts += 1
        return text_reply(f"# Guide\n\nDraft {self.drafts}. It is short.\n")


def optimize(emulator: Emulator, *extra: str) -> Any:
    return cli(
        "optimize", "--rubric", str(EXAMPLE / "rubric.toml"), "--task-file",
        str(EXAMPLE / "task.md"), "--base-url", emulator.base_url, "--no-history", *extra,
    )  # fmt: skip


def test_optimize_select_pairwise_compares_the_best_two_and_says_so(emulator: Emulator) -> None:
    model = Model()
    emulator.responder = model
    ran = optimize(emulator, "--max-rounds", "2", "--stagnation-rounds", "0",
                   "--select", "pairwise", "--json")  # fmt: skip
    assert ran.code == 1, ran.err
    assert model.prefers == 2  # one request per order
    data = json.loads(ran.out)
    assert data["selection"]["reason"].startswith("a tie")  # first both times: inconsistent
    assert data["final_output_id"] == data["iterations"][0]["output_id"]  # the earlier draft
    assert "pairwise selection: a tie" in ran.err
    ran = optimize(emulator, "--engine", "graph", "--select", "pairwise")
    assert ran.code == 2 and "--select" in ran.err


def test_a_same_family_pair_gets_exactly_one_stderr_line(emulator: Emulator) -> None:
    emulator.responder = Model()
    ran = optimize(emulator, "--max-rounds", "1", "--model", "claude-sonnet-4-5",
                   "--judge-model", "claude-haiku-4-5")  # fmt: skip
    warned = [line for line in ran.err.splitlines() if "self-preference" in line]
    assert len(warned) == 1 and warned[0].startswith("gradeloop: warning: the generator")
    assert "GradeloopWarning" not in ran.err


def test_judges_of_another_family_draw_no_line(
    emulator: Emulator, oai_emulator: OAIEmulator
) -> None:
    emulator.responder = Model()
    oai_emulator.responder = lambda body: chat(json.dumps({
        "reasoning": "r", "criteria_met": {k: True for k in ("api_cited", "errors_named",
        "no_invention")}, "passed": True, "issues": []}))  # fmt: skip
    spec = f"openai-compatible:gpt-4o@{oai_emulator.base_url}"
    ran = optimize(emulator, "--max-rounds", "1", "--model", "claude-sonnet-4-5",
                   "--judge-model", spec)  # fmt: skip
    assert "self-preference" not in ran.err, ran.err


def test_a_jury_member_without_batches_is_refused_by_name_with_the_way_out(
    emulator: Emulator, oai_emulator: OAIEmulator, files: dict[str, str], tmp_path: Path
) -> None:
    drafts = tmp_path / "d.jsonl"
    drafts.write_text('{"task": "t", "draft": "one"}\n')
    ran = cli("grade", "--drafts", str(drafts), "--rubric", files["r.toml"], "--batch",
              "--base-url", emulator.base_url, "--judge-model", "claude-a",
              "--judge-model", f"openai-compatible:qwen3-32b@{oai_emulator.base_url}")  # fmt: skip
    assert ran.code == 2
    assert "jury member 'qwen3-32b' (OpenAICompatibleJudge) cannot go through" in ran.err
    assert "without --batch, or leave that judge out of the jury" in ran.err
    assert emulator.bodies == [] and emulator.batches.created == []  # nothing was sent
