"""gradeloop compare: agreement of a shadowed key's sources, and what each key costs."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gradeloop import CheckResult, Criterion, HistoryStore, Rubric, Verdict
from gradeloop.cli import main
from gradeloop.errors import InputError, JudgeError
from gradeloop.grading import Registry
from gradeloop.migration import DraftItem, compare, read_drafts
from gradeloop.migration._key_cost import CostLedger, key_shares
from gradeloop.models import CallRecord, Usage, record_call
from gradeloop.models._prompts import judge_user
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator

SHADOW_RUBRIC = str(EXAMPLE / "rubric-shadow.toml")
SWITCHED_RUBRIC = str(EXAMPLE / "rubric.toml")
DRAFTS = str(EXAMPLE / "drafts.jsonl")
TASK = str(EXAMPLE / "task.md")


def stand_in() -> ModuleType:
    """The example's deterministic stand-in judge (examples/payments-guide)."""
    spec = importlib.util.spec_from_file_location("stand_in_judge", EXAMPLE / "stand_in_judge.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_compare(emulator: Emulator, *args: str) -> Any:
    """``gradeloop compare`` against the stand-in judge, in this process."""
    emulator.responder = stand_in().respond
    return cli("compare", *args, "--task-file", TASK, "--base-url", emulator.base_url)


def compare_here(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """The same command in this process (the SDK is imported once per test session)."""
    emulator.responder = stand_in().respond
    code = main(["compare", *args, "--task-file", TASK, "--base-url", emulator.base_url])
    out, err = capsys.readouterr()
    return code, out, err


# -- cost attribution --------------------------------------------------------------------

A = Criterion(key="api_cited", description="Every claim cites a section.")
B = Criterion(key="tone", description="Polite.")


def test_a_lone_judge_key_owns_the_whole_call() -> None:
    (share,) = key_shares([A], "task", "draft").values()
    assert (share.input, share.output, share.whole_call) == (1.0, 1.0, True)


def test_a_keys_input_share_is_its_criteria_line_over_the_request() -> None:
    shares = key_shares([A, B], "task", "draft")
    from gradeloop.models._prompts import judge_system

    total = len(judge_system([A, B])) + len(judge_user("task", "draft"))
    # removing a key removes its line and one newline from the <criteria> block
    assert shares["tone"].input == pytest.approx((len(B.prompt_line()) + 1) / total)
    assert shares["api_cited"].input == pytest.approx((len(A.prompt_line()) + 1) / total)
    assert shares["tone"].output == shares["api_cited"].output == 0.5
    assert not shares["tone"].whole_call


def test_the_ledger_applies_shares_to_measured_usage() -> None:
    ledger = CostLedger()
    record = CallRecord("evaluate", "m", "end_turn", Usage(800, 100, 0, 200), 1.0)
    ledger.add([A, B], "task", "draft", [record])
    ledger.add([A, B], "task", "draft", [])  # a judge that records nothing adds nothing
    shares = key_shares([A, B], "task", "draft")
    assert ledger.calls == 1 and ledger.drafts == 1
    assert ledger.keys["tone"].input_tokens == pytest.approx(1000 * shares["tone"].input)
    assert ledger.keys["tone"].output_tokens == 50
    assert ledger.keys["tone"].per_draft_output == 50


# -- the library -------------------------------------------------------------------------


def words(text: str, *, max_words: int = 3) -> CheckResult:
    return CheckResult(len(text.split()) <= max_words)


class CountingJudge:
    """Says 'short' is met when the draft has at most 4 words; records usage per call."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[CallRecord] = []
        self.fail_on = fail_on

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        record = CallRecord("evaluate", "m", "end_turn", Usage(100, 10), 1.0)
        self.calls.append(record)
        record_call(record)
        if draft == self.fail_on:
            raise JudgeError("declined", reason="refusal")
        met = {c.key: len(draft.split()) <= 4 for c in criteria}
        return Verdict(reasoning="counted", criteria_met=met, passed=all(met.values()), issues=[])


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.add("words", words)
    return r


@pytest.fixture
def shadowed(reg: Registry) -> Rubric:
    return Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "short",
                    "description": "At most 3 words.",
                    "checker": "words",
                    "shadow": "judge",
                },
                {"key": "tone", "description": "Polite."},
            ]
        },
        registry=reg,
    )


ITEMS = [
    DraftItem(f"i{n}", "t", text)
    for n, text in enumerate(["a", "a b", "a b c d", "a b c d e", "a b c d e f"])
]


def test_compare_counts_agreement_and_lists_disagreements(
    shadowed: Rubric, reg: Registry, tmp_path: Path
) -> None:
    judge = CountingJudge()
    with HistoryStore(tmp_path / "h.db") as store:
        report = compare(ITEMS, shadowed, judge=judge, store=store, registry=reg)
        stored = store.shadow_results(disagreements_only=True)
    (k,) = report.keys
    # code passes i0,i1; judge passes i0,i1,i2: they disagree on i2 only
    assert (k.stats.n, k.stats.agreement) == (5, 0.8)
    assert k.oriented.table.a_fail_b_pass == 1 and k.oriented.table.a_pass_b_fail == 0
    assert [d.output_id for d in k.disagreements] == ["i2"]
    assert [d.output_id for d in stored] == ["i2"]
    assert len(judge.calls) == 5  # once per draft, shadow and own keys together
    data = report.to_json()
    assert data["keys"][0]["confusion"]["code_fail_judge_pass"] == 1
    assert data["judge"]["request"]["keys"] == ["short", "tone"]
    assert set(data["cost_by_key"]) == {"short", "tone"}


def test_a_judge_failure_is_counted_and_the_run_goes_on(shadowed: Rubric, reg: Registry) -> None:
    report = compare(ITEMS, shadowed, judge=CountingJudge(fail_on="a b"), registry=reg)
    (k,) = report.keys
    assert report.judge_failures == [("i1", "refusal: declined")]
    assert (k.stats.n, k.skipped) == (4, 1)


def test_drafts_file_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"task": "t", "draft": "x"}\n\n# a comment\n{"draft": 3}\n')
    with pytest.raises(InputError, match=r"d\.jsonl:4: 'draft' must be a string, not a number"):
        read_drafts(path)
    path.write_text('{"draft": "x"}\n')
    with pytest.raises(InputError, match=r"d\.jsonl:1: missing field 'task'"):
        read_drafts(path)
    assert read_drafts(path, default_task="t")[0].output_id == "d.jsonl:1"


# -- the command line, against the emulator and the example's stand-in judge ------------


def test_compare_reports_agreement_disagreements_and_cost(emulator: Emulator) -> None:
    ran = run_compare(emulator, DRAFTS, "--rubric", SHADOW_RUBRIC, "--json", "--no-history")
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    (key,) = data["keys"]
    assert (key["key"], key["primary"], key["shadow"]) == ("sentence_len", "judge", "sentence_len")
    assert (key["n"], key["agreement"], key["kappa"]) == (10, 0.7, 0.4)
    assert key["confusion"] == {
        "both_pass": 4,
        "both_fail": 3,
        "code_pass_judge_fail": 2,
        "code_fail_judge_pass": 1,
    }
    assert [d["output_id"] for d in key["disagreements"]] == ["d03", "d04", "d09"]
    assert "46 words" in key["disagreements"][1]["primary"]["issues"][0]
    assert len(emulator.bodies) == 10  # the judge is called once per draft
    assert data["judge"]["calls"] == 10 and key["cost"]["per_draft"]["input"] > 0


def test_switching_the_key_saves_what_the_report_attributed(emulator: Emulator) -> None:
    before = json.loads(
        run_compare(emulator, DRAFTS, "--rubric", SHADOW_RUBRIC, "--json", "--no-history").out
    )
    after = json.loads(
        run_compare(emulator, DRAFTS, "--rubric", SWITCHED_RUBRIC, "--json", "--no-history").out
    )
    measured = (
        before["judge"]["usage"]["total_input"] - after["judge"]["usage"]["total_input"]
    ) / 10
    attributed = before["keys"][0]["cost"]["per_draft"]["input"]
    assert measured > 0 and abs(measured - attributed) <= 1.0
    assert before["judge"]["request"]["keys"] == [
        "api_cited",
        "errors_named",
        "sentence_len",
        "no_invention",
    ]
    assert after["judge"]["request"]["keys"] == ["api_cited", "errors_named", "no_invention"]
    assert after["judge"]["request"]["schema_chars"] < before["judge"]["request"]["schema_chars"]
    assert after["keys"] == []


def test_compare_text_report(emulator: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = compare_here(
        emulator, capsys, DRAFTS, "--rubric", SHADOW_RUBRIC, "--show", "1", "--no-history"
    )
    assert code == 0
    row = next(ln for ln in out.splitlines() if ln.startswith("sentence_len  judge"))
    assert row.split()[:8] == [
        "sentence_len",
        "judge",
        "sentence_len",
        "10",
        "70%",
        "0.40",
        "2",
        "1",
    ]
    assert "  sentence_len  d03  code: FAIL  judge: pass" in out
    assert "... and 2 more (--show N, or --json for all)" in out
    assert "sentence_len: switching it to checker 'sentence_len' saves about" in out


def test_compare_text_report_without_shadows(
    emulator: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = compare_here(
        emulator, capsys, DRAFTS, "--rubric", SWITCHED_RUBRIC, "--no-history"
    )
    assert code == 0
    assert "judge asked per draft: api_cited, errors_named, no_invention (" in out
    assert "no criterion has a shadow" in out
    assert "api_cited     primary" in out  # the cost table still shows every judge key


def test_compare_from_history_uses_recorded_drafts(
    emulator: Emulator, gradeloop_home: Path
) -> None:
    drafts = [json.loads(line) for line in Path(DRAFTS).read_text().splitlines()[:3]]
    with HistoryStore(gradeloop_home / "history.db") as store:
        store.start_loop("loop_a", task="Write the guide.", rubric={}, config={})
        for n, d in enumerate(drafts, start=1):
            store.add_iteration(
                "loop_a", {"iteration": n, "output_id": f"out_{d['id']}", "content": d["draft"]}
            )
    ran = run_compare(emulator, "--from-history", "--rubric", SHADOW_RUBRIC, "--json")
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    assert data["drafts"] == 3
    assert [d["output_id"] for d in data["keys"][0]["disagreements"]] == ["out_d03"]
    with HistoryStore(gradeloop_home / "history.db") as store:
        assert [s.output_id for s in store.shadow_results()] == ["out_d01", "out_d02", "out_d03"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((), "give a DRAFTS file or --from-history"),
        ((DRAFTS, "--from-history"), "give a DRAFTS file or --from-history"),
        (("missing.jsonl",), "drafts file not found: missing.jsonl"),
    ],
)
def test_compare_bad_arguments_exit_2(
    emulator: Emulator, args: tuple[str, ...], fragment: str
) -> None:
    ran = run_compare(emulator, *args, "--rubric", SHADOW_RUBRIC)
    assert ran.code == 2 and fragment in ran.err


def test_compare_malformed_drafts_file_exit_2_with_the_line(
    emulator: Emulator, tmp_path: Path
) -> None:
    bad = tmp_path / "drafts.jsonl"
    bad.write_text('{"draft": "fine"}\n{"draft": "oops",}\n')
    ran = run_compare(emulator, str(bad), "--rubric", SHADOW_RUBRIC)
    assert ran.code == 2
    assert f"{bad}:2: invalid JSON" in ran.err
    assert emulator.bodies == []  # nothing is graded before the whole file reads


def test_compare_without_a_model_exit_2() -> None:
    ran = cli("compare", DRAFTS, "--rubric", SHADOW_RUBRIC, "--task-file", TASK)
    assert ran.code == 2 and "ANTHROPIC_API_KEY" in ran.err and "sentence_len" in ran.err


DOC = Path(__file__).resolve().parents[2] / "docs" / "migrating-a-criterion.md"


def doc_output(name: str) -> list[str]:
    """The console block after ``<!-- output: NAME -->`` in the doc, without its command."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split(f"<!-- output: {name} -->\n```console\n", 1)[1].split("```", 1)[0]
    return block.splitlines()[1:]


@pytest.mark.parametrize(
    ("name", "rubric"), [("compare-before", SHADOW_RUBRIC), ("compare-after", SWITCHED_RUBRIC)]
)
def test_the_docs_worked_example_shows_real_output(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], name: str, rubric: str
) -> None:
    code, out, _ = compare_here(emulator, capsys, DRAFTS, "--rubric", rubric, "--no-history")
    assert code == 0
    assert [line.rstrip() for line in out.splitlines()] == doc_output(name)


def test_jobs_grade_many_drafts_at_once_with_the_same_report(emulator: Emulator) -> None:
    import zlib

    from gradeloop import AnthropicJudge, Rubric
    from gradeloop.migration import compare, read_drafts
    from gradeloop.testing import refusal, verdict_reply

    def answer(body: dict[str, Any]) -> Any:
        text = body["messages"][0]["content"]
        if zlib.crc32(text.encode()) % 4 == 0:  # some drafts' judge refuses, in any order
            return refusal()
        schema = body["output_config"]["format"]["schema"]
        keys = schema["$defs"]["CriteriaMet"]["required"]
        met = zlib.crc32(text.encode()) % 3 != 0
        return verdict_reply(
            {"reasoning": "r", "criteria_met": dict.fromkeys(keys, met), "passed": met,
             "issues": [] if met else [f"{keys[0]}: fix"]}
        )  # fmt: skip

    emulator.responder = answer
    rubric = Rubric.load(SHADOW_RUBRIC)
    items = read_drafts(DRAFTS, default_task="Write the payments guide.")
    reports = [
        compare(items, rubric, judge=AnthropicJudge(client=emulator.client()), jobs=jobs).to_json()
        for jobs in (1, 4)
    ]
    assert reports[0]["judge"]["failures"]  # the failures were exercised
    assert reports[0] == reports[1]
