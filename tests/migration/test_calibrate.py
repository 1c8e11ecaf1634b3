"""gradeloop calibrate: the judge (and checkers) against people's labels, run over run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gradeloop import CheckResult, Criterion, HistoryStore, Rubric, Verdict
from gradeloop.errors import InputError, JudgeError, JudgeRequiredError
from gradeloop.grading import Registry
from gradeloop.migration import LabelledItem, calibrate, read_labels
from gradeloop.migration._calibrate import MIN_LABELS
from tests.migration.test_compare import stand_in
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator

T, F = True, False
# the fixtures of test_agreement: agreement 0.7, kappa 0.4 by hand
HUMAN = [T, T, T, F, F, F, T, F, T, T]
JUDGE = [T, T, F, F, F, T, T, F, T, F]


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
            "name": "demo",
            "criteria": [
                {"key": "api_cited", "description": "Cites the spec."},
                {"key": "clarity", "description": "Clear.", "scale": "score", "threshold": 7},
                {
                    "key": "marked",
                    "description": "Has an x.",
                    "checker": "has_x",
                    "shadow": "judge",
                },
            ],
        },
        registry=reg,
    )


class ScriptedJudge:
    """Answers per draft from a table: {draft: {key: bool or score}}; raises for 'boom'."""

    model = "scripted-judge"

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self.answers = answers
        self.asked: list[list[str]] = []

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.asked.append([c.key for c in criteria])
        if draft == "boom":
            raise JudgeError("declined", reason="refusal")
        got = self.answers[draft]
        met = {c.key: bool(got.get(c.key, True)) for c in criteria if c.scale != "score"}
        scores = {c.key: float(got[c.key]) for c in criteria if c.scale == "score"}
        return Verdict(reasoning="r", criteria_met=met, passed=True, issues=[], scores=scores)


def items(labels: Sequence[dict[str, Any]]) -> list[LabelledItem]:
    return [LabelledItem(f"i{n}", "t", f"d{n}", lab) for n, lab in enumerate(labels)]


def test_pass_fail_agreement_and_kappa_against_labels(rubric: Rubric, reg: Registry) -> None:
    judge = ScriptedJudge({f"d{n}": {"api_cited": j, "clarity": 5} for n, j in enumerate(JUDGE)})
    report = calibrate(items([{"api_cited": h} for h in HUMAN]), rubric, judge=judge, registry=reg)
    (k,) = report.keys
    assert (k.key, k.rated_by, k.labels, k.rated) == ("api_cited", "judge", 10, 10)
    assert k.stats.agreement == pytest.approx(0.7) and k.stats.kappa == pytest.approx(0.4)
    assert judge.asked[0] == ["api_cited", "clarity", "marked"]  # asked as in use


def test_scored_keys_get_mae_and_correlation(rubric: Rubric, reg: Registry) -> None:
    judge = ScriptedJudge({"d0": {"clarity": 8}, "d1": {"clarity": 5}, "d2": {"clarity": 6}})
    report = calibrate(
        items([{"clarity": 7}, {"clarity": 5}, {"clarity": 9}]), rubric, judge=judge, registry=reg
    )
    (k,) = report.keys
    figures = k.figures()
    assert figures["mae"] == pytest.approx(4 / 3)
    assert figures["correlation"] == pytest.approx(2 / (8 * 14 / 3) ** 0.5)
    assert figures["kappa"] is None  # kappa is for pass/fail keys
    # met-ness at threshold 7: people (T, F, T), judge (T, F, F)
    assert figures["agreement"] == pytest.approx(2 / 3)


def test_a_shadowed_key_is_calibrated_on_both_sources(rubric: Rubric, reg: Registry) -> None:
    judge = ScriptedJudge(
        {"d0": {"marked": False, "clarity": 5}, "d1": {"marked": False, "clarity": 5}}
    )
    labelled = [
        LabelledItem("a", "t", "d0", {"marked": False}),
        LabelledItem("b", "t", "xd1", {"marked": True}),
    ]
    judge.answers["xd1"] = judge.answers["d1"]
    report = calibrate(labelled, rubric, judge=judge, registry=reg)
    by_role = {k.role: k for k in report.keys}
    assert by_role["primary"].rated_by == "has_x" and by_role["primary"].stats.agreement == 1.0
    assert by_role["shadow"].rated_by == "judge" and by_role["shadow"].stats.agreement == 0.5


def test_code_only_labels_need_no_judge(rubric: Rubric, reg: Registry) -> None:
    report = calibrate(items([{"marked": False}] * MIN_LABELS), rubric, registry=reg)
    primary = report.keys[0]
    assert primary.rated == MIN_LABELS and report.judge_model is None
    assert primary.warning is None  # 50 labels: no warning
    assert report.keys[1].rated == 0  # the judge shadow: no judge, no answers


def test_without_a_judge_judge_labels_are_refused_and_shadows_unrated(
    rubric: Rubric, reg: Registry
) -> None:
    with pytest.raises(JudgeRequiredError, match="api_cited; calibrating them needs a judge"):
        calibrate(items([{"api_cited": True, "marked": False}]), rubric, registry=reg)
    report = calibrate(items([{"marked": False}]), rubric, registry=reg)
    assert [(k.role, k.rated) for k in report.keys] == [("primary", 1), ("shadow", 0)]


def test_fewer_than_50_labels_warn(rubric: Rubric, reg: Registry) -> None:
    report = calibrate(items([{"marked": False}] * (MIN_LABELS - 1)), rubric, registry=reg)
    assert report.warnings[0] == (
        f"marked (has_x): only {MIN_LABELS - 1} labelled drafts; "
        f"about {MIN_LABELS} are needed before trusting these figures"
    )


def test_a_judge_failure_leaves_its_labels_unrated_and_keeps_the_checkers(
    rubric: Rubric, reg: Registry
) -> None:
    judge = ScriptedJudge({"d0": {"api_cited": True, "clarity": 5}})
    labelled = [
        LabelledItem("ok", "t", "d0", {"api_cited": True, "marked": False}),
        LabelledItem("bad", "t", "boom", {"api_cited": True, "marked": False}),
    ]
    report = calibrate(labelled, rubric, judge=judge, registry=reg)
    figures = {(k.key, k.role): (k.labels, k.rated) for k in report.keys}
    assert report.judge_failures == [("bad", "refusal: declined")]
    assert figures[("api_cited", "primary")] == (2, 1)
    assert figures[("marked", "primary")] == (2, 2)


def test_deltas_against_the_previous_run(rubric: Rubric, reg: Registry) -> None:
    labelled = items([{"api_cited": h} for h in HUMAN])
    worse = ScriptedJudge({f"d{n}": {"api_cited": j, "clarity": 5} for n, j in enumerate(JUDGE)})
    first = calibrate(labelled, rubric, judge=worse, registry=reg).to_json()
    reworded = Rubric.from_dict(
        {
            **rubric.to_dict(),
            "criteria": [
                {
                    **c.model_dump(exclude_defaults=True),
                    **({"description": "Cites a spec section."} if c.key == "api_cited" else {}),
                }
                for c in rubric
            ],
        },
        registry=reg,
    )
    better = ScriptedJudge({f"d{n}": {"api_cited": h, "clarity": 5} for n, h in enumerate(HUMAN)})
    second = calibrate(labelled, reworded, judge=better, registry=reg, previous=first)
    (k,) = second.keys
    assert k.delta() == {
        "agreement": pytest.approx(0.3),
        "kappa": pytest.approx(0.6),
        "mae": None,
        "correlation": None,
    }
    assert second.changed_descriptions() == ["api_cited"]
    assert calibrate(labelled, rubric, judge=worse, registry=reg).keys[0].delta() is None


# -- label files -------------------------------------------------------------------------

GOOD = '{"id": "a", "task": "t", "draft": "x", "labels": {"api_cited": true, "clarity": 8}}'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"task": "t", "draft": "x", "labels": {"api_cited": true}', "invalid JSON"),
        ("[1, 2]", "expected a JSON object, got an array"),
        ('{"task": "t", "labels": {"api_cited": true}}', "missing field 'draft'"),
        ('{"task": "t", "draft": "x"}', "missing field 'labels'"),
        ('{"draft": "x", "labels": {"api_cited": true}}', "missing field 'task'"),
        ('{"task": "t", "draft": "x", "labels": [true]}', "'labels' must be an object"),
        ('{"task": "t", "draft": "x", "labels": {}}', "'labels' is empty"),
        (
            '{"task": "t", "draft": "x", "labels": {"api_cite": true}}',
            "unknown criterion 'api_cite' in 'labels'; did you mean 'api_cited'?",
        ),
        (
            '{"task": "t", "draft": "x", "labels": {"api_cited": "yes"}}',
            "label 'api_cited' is a pass/fail criterion: give true or false, not \"yes\"",
        ),
        ('{"task": "t", "draft": "x", "labels": {"api_cited": 1}}', "give true or false, not 1"),
        (
            '{"task": "t", "draft": "x", "labels": {"clarity": true}}',
            "label 'clarity' is a scored criterion: give a score from 1 to 10, not true",
        ),
        ('{"task": "t", "draft": "x", "labels": {"clarity": 11}}', "from 1 to 10, not 11"),
        ('{"task": "t", "draft": 7, "labels": {"clarity": 5}}', "'draft' must be a string"),
        ('{"task": "t", "draft": "x", "lables": {"clarity": 5}}', "did you mean 'labels'?"),
        (
            '{"id": "a", "task": "t", "draft": "x", "labels": {"clarity": 5}}',
            "id 'a' is already used at",
        ),
    ],
)
def test_malformed_label_lines_name_file_and_line(
    tmp_path: Path, rubric: Rubric, line: str, message: str
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(f"{GOOD}\n\n{line}\n")
    with pytest.raises(InputError) as info:
        read_labels(path, rubric)
    assert str(info.value).startswith(f"{path}:3: ")
    assert message in str(info.value)


def test_a_good_label_file_reads(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(f"# people's labels\n{GOOD}\n" + GOOD.replace('"id": "a", ', "") + "\n")
    first, second = read_labels(path, rubric)
    assert (first.output_id, dict(first.labels)) == ("a", {"api_cited": True, "clarity": 8.0})
    assert second.output_id == "labels.jsonl:3"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no labelled drafts in the file"),
        (b"\xff\xfe", "not UTF-8 text"),
    ],
)
def test_unusable_label_files(tmp_path: Path, rubric: Rubric, content: bytes, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_labels(path, rubric)


# -- the command line --------------------------------------------------------------------

SHADOW_RUBRIC = EXAMPLE / "rubric-shadow.toml"
LABELS = str(EXAMPLE / "labels.jsonl")
TASK = str(EXAMPLE / "task.md")


def run_calibrate(emulator: Emulator, *args: str) -> Any:
    emulator.responder = stand_in().respond
    return cli("calibrate", *args, "--task-file", TASK, "--base-url", emulator.base_url)


def test_calibrate_reports_stores_and_shows_the_change(
    emulator: Emulator, tmp_path: Path, gradeloop_home: Path
) -> None:
    first = run_calibrate(emulator, LABELS, "--rubric", str(SHADOW_RUBRIC))
    assert first.code == 0, first.err
    assert "calibrate: grading 10 labelled drafts with the judge and the checkers" in first.err
    rows = {tuple(ln.split()[:2]): ln.split()[2:] for ln in first.out.splitlines()}
    assert rows[("sentence_len", "judge")] == ["10", "70%", "0.40", "-", "-"]
    assert rows[("sentence_len", "sentence_len")] == ["(shadow)", "10", "100%", "1.00", "-", "-"]
    assert "warning: only 10 labelled drafts for api_cited (judge)" in first.out
    assert "about 50 are needed" in first.out
    assert len(emulator.bodies) == 10

    # the shipped v2 (docs/migrating-a-criterion.md, step 3): a clearer description,
    # so the stand-in judge treats list items as sentences
    v2 = EXAMPLE / "rubric-shadow-v2.toml"
    assert (
        v2.read_text()
        .replace(
            "; count the words exactly, and read each list item as a sentence of its own.", "."
        )
        .split("\nname =")[1]
        == (SHADOW_RUBRIC.read_text().split("\nname =")[1])
    )  # only that description differs
    second = run_calibrate(emulator, LABELS, "--rubric", str(v2), "--json")
    assert second.code == 0, second.err
    data = json.loads(second.out)
    judged = next(k for k in data["keys"] if k["key"] == "sentence_len" and k["role"] == "primary")
    assert judged["agreement"] == 1.0
    assert judged["delta"]["agreement"] == pytest.approx(0.3)
    assert data["previous"]["changed_descriptions"] == ["sentence_len"]
    assert data["previous"]["same_labels"] is True
    with HistoryStore(gradeloop_home / "history.db") as store:
        runs = store.calibration_runs("payments-guide")
        assert [r["run_id"] for r in runs] == [data["run_id"], data["previous"]["run_id"]]
        keys = store.calibration_keys(data["run_id"])
    assert {(k["key"], k["role"]) for k in keys} >= {
        ("sentence_len", "primary"),
        ("sentence_len", "shadow"),
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json}", "labels.jsonl:2: invalid JSON"),
        (
            '{"draft": "x", "labels": {"sentence_len": "no"}}',
            "labels.jsonl:2: label 'sentence_len' is a pass/fail criterion",
        ),
        (
            '{"draft": "x", "labels": {"sentence_lenght": true}}',
            "labels.jsonl:2: unknown criterion 'sentence_lenght'",
        ),
        ('{"labels": {"sentence_len": true}}', "labels.jsonl:2: missing field 'draft'"),
    ],
)
def test_calibrate_malformed_labels_exit_2_with_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"draft": "fine", "labels": {"sentence_len": true}}\n' + line + "\n")
    ran = cli(
        "calibrate",
        str(path),
        "--rubric",
        str(SHADOW_RUBRIC),
        "--task",
        "t",
        "--base-url",
        "http://127.0.0.1:9",
    )
    assert ran.code == 2, ran.err
    assert message in ran.err and str(tmp_path) in ran.err


def test_calibrate_needs_a_model_only_for_judge_labels(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"draft": "Short. Fine.", "labels": {"api_cited": true}}\n')
    ran = cli("calibrate", str(path), "--rubric", str(SHADOW_RUBRIC), "--task", "t")
    assert ran.code == 2 and "ANTHROPIC_API_KEY" in ran.err and "api_cited" in ran.err
    path.write_text('{"draft": "Short. Fine.", "labels": {"code_runs": true}}\n')
    ran = cli(
        "calibrate",
        str(path),
        "--rubric",
        str(SHADOW_RUBRIC),
        "--task",
        "t",
        "--json",
        "--no-history",
    )
    assert ran.code == 0, ran.err
    (key,) = json.loads(ran.out)["keys"]
    assert (key["key"], key["rated_by"], key["agreement"]) == ("code_runs", "code_runs", 1.0)


def test_jobs_give_the_same_figures(rubric: Rubric, reg: Registry) -> None:
    labels = [{"api_cited": h, "marked": h} for h in HUMAN] + [{"api_cited": True}]
    answers = {f"d{n}": {"api_cited": j, "marked": j, "clarity": 8} for n, j in enumerate(JUDGE)}
    data = items(labels)
    data[-1] = LabelledItem("boom", "t", "boom", {"api_cited": True})  # its judge fails
    reports = [
        calibrate(data, rubric, judge=ScriptedJudge(answers), registry=reg, jobs=jobs).to_json()
        for jobs in (1, 4)
    ]
    for report in reports:
        report.pop("run_id"), report.pop("started_at")
    assert reports[0]["judge_failures"] == [{"output_id": "boom", "error": "refusal: declined"}]
    assert reports[0] == reports[1]
