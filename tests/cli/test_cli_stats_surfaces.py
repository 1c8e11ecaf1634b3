"""Intervals where gradeloop already reports figures: calibrate's corrected rate and
agreement intervals, regrade's paired test, the HTML report's error bars, and the
OpenTelemetry summary span."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from gradeloop.history import HistoryStore
from gradeloop.integrations import telemetry
from gradeloop.stats import corrected_rate
from tests.support.cli_helpers import cli

RUBRIC = (
    '[[criteria]]\nkey = "short"\ndescription = "At most 3 words."\n'
    'checker = "length"\noptions = { max_words = 3 }\n'
)
SHORT, LONG = "two words", "this draft has far too many words"


def write(tmp_path: Path, name: str, lines: list[dict[str, object]]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


def labels(tmp_path: Path, *, agree: int, disagree: int) -> str:
    """Labelled drafts: the checker (the rater) agrees with people on ``agree`` of
    each class and errs on ``disagree``."""
    lines: list[dict[str, object]] = []
    for n, (draft, label) in enumerate(
        [(SHORT, True)] * agree + [(LONG, False)] * agree
        + [(LONG, True)] * disagree + [(SHORT, False)] * disagree
    ):  # fmt: skip
        lines.append({"id": f"l{n}", "task": "t", "draft": draft, "labels": {"short": label}})
    return write(tmp_path, "labels.jsonl", lines)


def criterion(met: bool) -> dict[str, object]:
    return {
        "name": "short",
        "passed": met,
        "score": 10.0 * met,
        "status": "met" if met else "failed",
    }


@pytest.fixture
def rubric(tmp_path: Path) -> str:
    path = tmp_path / "r.toml"
    path.write_text(RUBRIC, encoding="utf-8")
    return str(path)


def test_calibrate_json_gives_the_corrected_rate_and_its_interval(
    tmp_path: Path, rubric: str
) -> None:
    ran = cli(
        "calibrate",
        labels(tmp_path, agree=40, disagree=10),
        "--rubric",
        rubric,
        "--json",
        "--no-history",
    )
    assert ran.code == 0, ran.err
    [key] = json.loads(ran.out)["keys"]
    # on the labelled drafts themselves, Rogan-Gladen gives back the people's rate
    assert key["corrected_rate"] == 0.5 and key["ci"][0] < 0.5 < key["ci"][1]
    assert key["correction"]["from"] == "labelled drafts"
    assert key["correction"]["tpr"] == 0.8 and key["correction"]["tnr"] == 0.8
    assert key["agreement_ci"][0] < 0.8 < key["agreement_ci"][1]
    assert key["kappa_ci"][0] < key["kappa"] < key["kappa_ci"][1]


def test_calibrate_corrects_another_runs_rate(tmp_path: Path, rubric: str) -> None:
    run = write(
        tmp_path,
        "run.jsonl",
        [
            {"id": f"r{i}", "passed": ok, "overall_score": 10.0 * ok, "criteria": [criterion(ok)]}
            for i, ok in enumerate([True] * 70 + [False] * 30)
        ],
    )
    ran = cli(
        "calibrate", labels(tmp_path, agree=40, disagree=10), "--rubric", rubric,
        "--json", "--no-history", "--correct", run,
    )  # fmt: skip
    [key] = json.loads(ran.out)["keys"]
    expected = corrected_rate(
        70, 100, true_positive=40, positives=50, true_negative=40, negatives=50
    )
    assert key["corrected_rate"] == round(expected.rate or 0, 4) == 0.8333
    assert key["correction"]["from"] == run and key["correction"]["observed_rate"] == 0.7
    text = cli(
        "calibrate",
        labels(tmp_path, agree=40, disagree=10),
        "--rubric",
        rubric,
        "--no-history",
        "--correct",
        run,
    )
    assert "short (length): 83.3 % [" in text.out and "observed 70.0 % of 100" in text.out


def test_calibrate_says_when_the_rater_is_too_weak(tmp_path: Path, rubric: str) -> None:
    ran = cli(
        "calibrate", labels(tmp_path, agree=20, disagree=30), "--rubric", rubric, "--no-history"
    )
    assert ran.code == 0 and "no correction: the judge is too weak" in ran.out
    bad = cli(
        "calibrate",
        labels(tmp_path, agree=2, disagree=1),
        "--rubric",
        rubric,
        "--correct",
        "nope.jsonl",
    )
    assert bad.code == 2 and "'nope.jsonl' is neither a file nor a grading run" in bad.err


def test_regrade_reports_a_paired_test_per_key(tmp_path: Path, rubric: str) -> None:
    drafts = write(
        tmp_path, "d.jsonl", [{"id": f"d{i}", "draft": SHORT if i % 2 else LONG} for i in range(40)]
    )
    assert cli("grade", "--drafts", drafts, "--rubric", rubric).code == 1
    with HistoryStore() as store:
        [run] = [r.run_id for r in store.list_grading_runs()]
    looser = tmp_path / "r2.toml"
    looser.write_text(RUBRIC.replace("max_words = 3", "max_words = 30"), encoding="utf-8")
    ran = cli("regrade", run, "--rubric", str(looser), "--json")
    assert ran.code == 0, ran.err
    paired = json.loads(ran.out)["keys"]["short"]["paired"]
    assert paired["gained"] == 20 and paired["lost"] == 0 and paired["diff"] == 0.5
    assert paired["p"] < 1e-5 and paired["verdict"] == "improvement"
    text = cli("regrade", run, "--rubric", str(looser))
    assert "+50.0 pp [" in text.out


def test_the_report_draws_error_bars_for_a_grading_run(tmp_path: Path, rubric: str) -> None:
    drafts = write(
        tmp_path, "d.jsonl", [{"id": f"d{i}", "draft": SHORT if i % 4 else LONG} for i in range(20)]
    )
    cli("grade", "--drafts", drafts, "--rubric", rubric)
    out = tmp_path / "report.html"
    assert cli("report", "--html", str(out)).code == 0
    html = out.read_text(encoding="utf-8")
    assert 'class="plot rates"' in html and "rates with 95 % confidence intervals" in html
    assert "<title>short: 75.0 % [53.1, 88.8] of 20 drafts</title>" in html
    assert html.count('class="bar"') == 6  # two rows, a line and two whiskers each


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.use_tracer_provider(None)
        provider.shutdown()


def test_summaries_carry_their_intervals_as_otel_attributes(
    tmp_path: Path, rubric: str, spans: InMemorySpanExporter
) -> None:
    drafts = write(
        tmp_path, "d.jsonl", [{"id": f"d{i}", "draft": SHORT if i % 4 else LONG} for i in range(20)]
    )
    assert cli("grade", "--drafts", drafts, "--rubric", rubric, "--no-history").code == 1
    [span] = [s for s in spans.get_finished_spans() if s.name == "gradeloop.summary"]
    assert span.attributes is not None and span.attributes["gradeloop.drafts"] == 20
    events = {
        e.attributes["gen_ai.evaluation.name"]: dict(e.attributes)
        for e in span.events
        if e.attributes
    }
    assert set(events) == {"accepted", "overall_score", "short"}
    short = events["short"]
    assert short["gen_ai.evaluation.score.value"] == 0.75
    assert short["gen_ai.evaluation.score.ci.level"] == 0.95
    assert (
        0.53
        < short["gen_ai.evaluation.score.ci.lower"]
        < 0.75
        < short["gen_ai.evaluation.score.ci.upper"]
        < 0.89
    )
    path = write(tmp_path, "g.jsonl", [])
    Path(path).write_text(
        cli("grade", "--drafts", drafts, "--rubric", rubric, "--json", "--no-history").out
    )
    cli("summarize", path)
    assert len([s for s in spans.get_finished_spans() if s.name == "gradeloop.summary"]) == 3


def test_the_shadow_compare_gives_agreement_and_kappa_intervals(tmp_path: Path) -> None:
    rubric = tmp_path / "shadowed.toml"
    rubric.write_text(
        RUBRIC + 'shadow = "length"\nshadow_options = { max_words = 4 }\n', encoding="utf-8"
    )
    words = ["one", "one two three", "one two three four", "one two three four five six"] * 10
    drafts = write(
        tmp_path, "d.jsonl", [{"id": f"d{i}", "task": "t", "draft": w} for i, w in enumerate(words)]
    )
    ran = cli("compare", drafts, "--rubric", str(rubric), "--json", "--no-history")
    assert ran.code == 0, ran.err
    [key] = json.loads(ran.out)["keys"]
    assert key["agreement"] == 0.75 and key["agreement_ci"][0] < 0.75 < key["agreement_ci"][1]
    assert key["kappa_ci"][0] < key["kappa"] < key["kappa_ci"][1]
