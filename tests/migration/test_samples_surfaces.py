"""Agreement where people read it: grade's table and JSON, calibrate, compare, history stats."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gradeloop import CheckResult, Criterion, HistoryStore, Rubric, Verdict, run_loop
from gradeloop.grading import Registry
from gradeloop.grading._samples import combine
from gradeloop.history._stats import key_stability
from gradeloop.migration import DraftItem, LabelledItem, calibrate, compare
from gradeloop.testing import verdict_reply
from tests.support.cli_helpers import cli
from tests.support.emulator import Emulator


class SampledJudge:
    """Answers each draft with k scripted pass/fail votes per key: {draft: {key: [votes]}}."""

    model = "sampled-fake"

    def __init__(self, votes: dict[str, dict[str, list[bool]]]) -> None:
        self.votes = votes

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        table = self.votes[draft]
        k = max(len(v) for v in table.values())
        verdicts = [
            Verdict(
                reasoning="r",
                criteria_met={c.key: table.get(c.key, [True] * k)[i] for c in criteria},
                passed=True,
                issues=[],
            )
            for i in range(k)
        ]
        if k == 1:  # as a judge with samples=1: a plain verdict
            return verdicts[0]
        return combine(list(criteria), verdicts[0], verdicts[1:], requests=k)


def has_x(text: str) -> CheckResult:
    return CheckResult("x" in text)


@pytest.fixture
def reg() -> Registry:
    r = Registry(autoload=False)
    r.add("has_x", has_x)
    return r


@pytest.fixture
def rubric(reg: Registry) -> Rubric:
    return Rubric.from_dict(
        {
            "criteria": [
                {"key": "cited", "description": "Cites the spec."},
                {
                    "key": "marked",
                    "description": "Has an x.",
                    "checker": "has_x",
                    "shadow": "judge",
                },
            ]
        },
        registry=reg,
    )


def test_calibrate_reports_self_agreement_next_to_agreement_with_labels(
    rubric: Rubric, reg: Registry
) -> None:
    judge = SampledJudge(
        {"a": {"cited": [True, True, False]}, "b": {"cited": [False, False, False]}}
    )
    items = [
        LabelledItem("i0", "t", "a", {"cited": True}),
        LabelledItem("i1", "t", "b", {"cited": True}),
    ]
    report = calibrate(items, rubric, judge=judge, registry=reg)
    cited = next(k for k in report.keys if k.key == "cited")
    assert cited.stats.agreement == 0.5  # with the labels
    assert cited.self_agreement == pytest.approx((2 / 3 + 1) / 2)  # with itself
    assert cited.to_json()["self_agreement"] == pytest.approx(0.8333, abs=1e-4)


def test_calibrate_without_sampling_has_no_self_agreement(rubric: Rubric, reg: Registry) -> None:
    judge = SampledJudge({"a": {"cited": [True]}})
    report = calibrate(
        [LabelledItem("i0", "t", "a", {"cited": True})], rubric, judge=judge, registry=reg
    )
    assert report.keys[0].self_agreement is None
    assert "self_agreement" not in report.keys[0].to_json()


def test_compare_reports_the_judges_self_agreement_on_a_shadowed_key(
    rubric: Rubric, reg: Registry
) -> None:
    judge = SampledJudge({"x": {"marked": [True, False, True]}, "y": {"marked": [False] * 3}})
    report = compare(
        [DraftItem("d1", "t", "x"), DraftItem("d2", "t", "y")], rubric, judge=judge, registry=reg
    )
    (marked,) = report.keys
    assert marked.self_agreement == pytest.approx((2 / 3 + 1) / 2)
    assert report.to_json()["keys"][0]["judge_self_agreement"] == pytest.approx(0.8333, abs=1e-4)


def test_key_stability_flags_keys_whose_samples_split() -> None:
    def record(**agreements: float) -> dict[str, Any]:
        crit = [{"key": k, "agreement": a} for k, a in agreements.items()]
        return {"detail": {"criteria": [*crit, {"key": "code_key"}]}}

    records = [record(shaky=0.6, steady=1.0)] * 2 + [record(shaky=1.0, steady=1.0)] * 3
    records += [{"detail": None}, {"nothing": 1}]
    out = key_stability(records)
    assert [k["key"] for k in out["keys"]] == ["shaky", "steady"]
    shaky, steady = out["keys"]
    assert shaky == {
        "key": "shaky",
        "evaluations": 5,
        "mean_agreement": 0.84,
        "split": 0.4,
        "unstable": True,
    }
    assert steady["unstable"] is False and steady["split"] == 0.0


class Gen:
    def generate(self, task: str, draft: str = "", issues: Any = None) -> str:
        return "draft x"


def test_stats_shows_unstable_keys_from_recorded_loops(
    rubric: Rubric, reg: Registry, tmp_path: Path
) -> None:
    db = tmp_path / "h.db"
    judge = SampledJudge({"draft x": {"cited": [True, False, True], "marked": [True] * 3}})
    with HistoryStore(db) as store:
        result = run_loop("t", rubric, generator=Gen(), judge=judge, max_rounds=1, store=store)
        stats = store.stats()
    keys = {k["key"]: k for k in stats["key_stability"]["keys"]}
    assert keys["cited"]["unstable"] is True and keys["cited"]["mean_agreement"] == 0.6667
    ran = cli("stats", "--db", str(db))
    assert ran.code == 0
    assert "cited" in ran.out and "UNSTABLE" in ran.out and "docs/judging.md" in ran.out
    shown = cli("history", result.loop_id, "--db", str(db))
    assert shown.code == 0, shown.err
    assert "split keys" in shown.out and "cited 2/3" in shown.out
    assert "marked 3/3" not in shown.out  # a key whose samples all agreed is not listed


def test_history_without_samples_has_no_split_column(rubric: Rubric, tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    judge = SampledJudge({"draft x": {"cited": [True], "marked": [True]}})
    with HistoryStore(db) as store:
        result = run_loop("t", rubric, generator=Gen(), judge=judge, max_rounds=1, store=store)
    assert "split keys" not in cli("history", result.loop_id, "--db", str(db)).out


def test_stats_without_sampled_keys_says_so(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    HistoryStore(db).close()
    ran = cli("stats", "--db", str(db))
    assert "no key was judged with samples > 1" in ran.out


# -- grade on the command line ----------------------------------------------------------

RUBRIC = """
[[criteria]]
key = "cited"
description = "Cites the spec."

[[criteria]]
key = "short"
description = "Short."
checker = "length"
options = { max_words = 50 }
"""


def wire(cited: bool) -> dict[str, Any]:
    return {"reasoning": "r", "criteria_met": {"cited": cited}, "passed": cited, "issues": []}


def test_grade_samples_on_the_command_line(emulator: Emulator, tmp_path: Path) -> None:
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("See 4.2.")
    base = ["grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml")]
    base += ["--base-url", emulator.base_url, "--no-history", "--samples", "3", "--no-cache"]
    emulator.enqueue(*(verdict_reply(wire(c)) for c in (True, False, True)))
    ran = cli(*base)
    assert ran.code == 0, ran.err
    header, *rows = [ln.split() for ln in ran.out.splitlines() if ln.strip()][:3]
    assert header[-1] == "agreement"
    assert rows[0][0] == "cited" and rows[0][-2:] == ["2/3", "agree"]
    assert rows[1][0] == "short" and rows[1][-1] == "-"
    emulator.enqueue(*(verdict_reply(wire(c)) for c in (True, False, True)))
    ran = cli(*base, "--json")
    data = json.loads(ran.out)
    cited = next(c for c in data["criteria"] if c["name"] == "cited")
    assert cited["agreement"] == pytest.approx(0.6667, abs=1e-4)
    assert sorted(cited["samples"]) == [False, True, True]
    assert len(emulator.bodies) == 6


def test_grade_doubtful_on_the_command_line(emulator: Emulator, tmp_path: Path) -> None:
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("See 4.2.")
    emulator.enqueue(verdict_reply(wire(True)))
    ran = cli(
        "grade",
        str(tmp_path / "d.md"),
        "--rubric",
        str(tmp_path / "r.toml"),
        "--base-url",
        emulator.base_url,
        "--no-history",
        "--samples",
        "3",
        "--resample",
        "doubtful",
    )
    assert ran.code == 0 and len(emulator.bodies) == 1  # nothing in doubt: one request


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--samples", "0"], "argument --samples: '0': must be at least 1"),
        (["--margin", "-1"], "--margin must be 0"),
    ],
)
def test_grade_bad_sampling_arguments_exit_2(
    emulator: Emulator, tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("x")
    ran = cli(
        "grade",
        str(tmp_path / "d.md"),
        "--rubric",
        str(tmp_path / "r.toml"),
        "--base-url",
        emulator.base_url,
        "--no-history",
        *args,
    )
    assert ran.code == 2 and message in ran.err
