"""The pytest plugin end to end: a user's project in a temporary folder, recorded against
the emulator by pytest in a subprocess (as a user runs it), then replayed offline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator

KEY = "sk-ant-api03-" + "Pl4ygr0und" * 6

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"

#: A test added to the docs' example: a draft the judge dislikes, to see the table.
RUDE = """
from pathlib import Path

from gradeloop import assert_graded


def test_rude(gradeloop_judge):
    rubric = Path(__file__).parent / "rubric.toml"
    assert_graded("Go away.", rubric, task="Greet a first-time reader by name.",
                  judge=gradeloop_judge)
"""


def example_files() -> dict[str, str]:
    """The example project's files, as docs/pytest.md shows them."""
    files = {}
    pattern = r"<!-- fragment: file (\S+) of the example project -->\n```\w+\n(.*?)```"
    for path, body in re.findall(pattern, DOCS.read_text(encoding="utf-8"), re.S):
        files[path] = body
    return files


def respond(body: dict[str, Any]) -> Any:
    """A judge that likes friendly drafts and dislikes rude ones."""
    rude = "Go away" in json.dumps(body["messages"])
    return verdict_reply(
        {
            "reasoning": "Curt and unwelcoming." if rude else "Warm and accurate.",
            "scores": {"tone": 3 if rude else 9},
            "criteria_met": {"accurate": True},
            "passed": not rude,
            "issues": ["the greeting turns the reader away"] if rude else [],
        }
    )


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    files = example_files()
    assert sorted(files) == [
        "greetings.py",
        "pyproject.toml",
        "tests/rubric.toml",
        "tests/test_greetings.py",
    ]
    for name, body in files.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(body, encoding="utf-8")
    (pytester.path / "tests" / "test_rude.py").write_text(RUDE, encoding="utf-8")
    for var in ("CI", "GRADELOOP_PROVIDER", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(var, raising=False)
    return pytester


# other projects' plugins this environment happens to have cost seconds a start
QUIET = ("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:anyio")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """As a user runs it: a fresh process (the end-to-end run, once per suite: each fresh
    pytest imports the SDK again, seconds of CPU)."""
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *QUIET, *args, timeout=300)


def run_here(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """In this process (its modules imported afresh, the SDK already loaded): the rest."""
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *QUIET, *args)


#: Added to the project for the end-to-end test: each fresh pytest process (the
#: recording run, each xdist worker) notes whether the SDK was imported by its end.
PROBE = """
import sys
from pathlib import Path


def pytest_sessionfinish(session):
    name = getattr(session.config, "workerinput", {}).get("workerid", "main")
    (Path(__file__).parent / f"sdk-{name}.txt").write_text(str("anthropic" in sys.modules))
"""


def sdk_imported(project: pytest.Pytester) -> dict[str, str]:
    """What :data:`PROBE` noted per process (and forgets it for the next run)."""
    notes = {}
    for note in sorted(project.path.glob("sdk-*.txt")):
        notes[note.stem.removeprefix("sdk-")] = note.read_text(encoding="utf-8")
        note.unlink()
    return notes


def test_record_against_the_emulator_then_replay_offline(
    project: pytest.Pytester, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.responder = respond
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    (project.path / "conftest.py").write_text(PROBE, encoding="utf-8")

    recorded = run(project, "--gradeloop-record=new")
    assert sdk_imported(project) == {"main": "True"}  # recording reaches the model: the SDK
    recorded.assert_outcomes(passed=3, failed=1)
    assert len(emulator.bodies) == 5  # 1 + 3 samples + 0 (code keys only) + 1
    folder = project.path / "tests" / "cassettes"
    greetings, rude = folder / "test_greetings.json", folder / "test_rude.json"
    text = greetings.read_text(encoding="utf-8")
    assert len(json.loads(text)["requests"]) == 4
    for written in (text, rude.read_text(encoding="utf-8")):
        assert KEY not in written and "Pl4ygr0und" not in written  # no secret in a cassette
    out = recorded.stdout.str()
    assert "judge calls: 5 made, 0 replayed from cassettes (record mode: new)" in out
    assert f"recorded 4 replies into {greetings}" in out
    assert f"recorded 1 reply into {rude}" in out
    # the failing test shows the table, without assertion rewriting
    recorded.stdout.fnmatch_lines(
        [
            "*draft not accepted: overall *; failed: tone",
            "*key*filled by*met*score/threshold*issues",
            "*tone*judge*NO*3/7*scored 3, needs 7",
            "*judge's reasoning:",
            "*Curt and unwelcoming.",
        ]
    )

    # offline: no key, no server, and CI=true means replay only
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CI", "true")
    replayed = run_here(project)
    replayed.assert_outcomes(passed=3, failed=1)
    assert len(emulator.bodies) == 5  # not one more request
    replayed.stdout.fnmatch_lines(
        [
            "*= gradeloop =*",
            "drafts graded: 4, accepted: 3; failed keys: tone 1",
            "judge calls: 0 made, 5 replayed from cassettes (record mode: none)*",
        ]
    )
    assert greetings.read_text(encoding="utf-8") == text  # replay writes nothing

    # the same, across two xdist workers (processes of their own): the summary adds them up
    parallel = run_here(project, "-n", "2")
    parallel.assert_outcomes(passed=3, failed=1)
    # each worker is a fresh interpreter (the in-process controller is not: it shares this
    # process's SDK), and replaying needs no SDK: its import costs seconds of CPU
    workers = {k: v for k, v in sdk_imported(project).items() if k != "main"}
    assert workers == {"gw0": "False", "gw1": "False"}
    parallel.stdout.fnmatch_lines(["judge calls: 0 made, 5 replayed from cassettes*"])

    # a changed draft is a request nobody recorded: a clear failure naming it
    (project.path / "greetings.py").write_text(
        "def greet(name):\n    return f'Hi {name}.'\n", encoding="utf-8"
    )
    missing = run_here(project, "-k", "welcoming")
    missing.assert_outcomes(failed=1, deselected=3)
    missing.stdout.fnmatch_lines(
        [
            "*has no recorded judge reply for request * (model claude-haiku-4-5, keys tone, "
            "accurate; draft 'Hi Ada.'); *--gradeloop-record=new*",
        ]
    )
    # said once: no second copy as the context of the failure
    failures = missing.stdout.str().split("short test summary info")[0]
    assert failures.count("has no recorded judge reply") == 1
    assert "During handling of the above exception" not in missing.stdout.str()
    assert len(emulator.bodies) == 5


def test_new_without_a_model_fails_clearly_on_a_missing_request(
    project: pytest.Pytester,
) -> None:
    result = run_here(project, "--gradeloop-record=new", "-k", "welcoming")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(
        ["*not in the cassette and no model is configured to record it: set ANTHROPIC_API_KEY*"]
    )
    assert not (project.path / "tests" / "cassettes" / "test_greetings.json").exists()


def test_the_ini_option_and_a_bad_value(project: pytest.Pytester) -> None:
    project.makefile(".ini", pytest="[pytest]\npythonpath = .\ngradeloop_record = none\n")
    result = run_here(project, "-k", "welcoming")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(["*has no recorded judge reply*"])
    project.makefile(".ini", pytest="[pytest]\ngradeloop_record = sometimes\n")
    bad = run_here(project)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    shown = bad.stdout.str() + bad.stderr.str()
    assert "gradeloop_record = 'sometimes' in the ini file; use one of: none, new, all" in shown


def test_a_bad_marker_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_marker="""
import pytest

@pytest.mark.gradeloop(rubrik="rubric.toml")
def test_it(gradeloop_judge):
    pass
"""
    )
    result = run_here(project, "test_marker.py")
    result.stdout.fnmatch_lines(["*takes rubric= and samples= only*rubrik*"])
    assert result.ret != 0


def test_the_marker_is_registered_for_strict_markers(project: pytest.Pytester) -> None:
    result = run_here(project, "--strict-markers", "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.gradeloop(rubric=None, samples=1)*"])


def test_the_entry_point_is_declared() -> None:
    from importlib.metadata import entry_points

    [ep] = [e for e in entry_points(group="pytest11") if e.name == "gradeloop"]
    assert ep.value == "gradeloop.testing._plugin"


def test_ci_decides_the_default(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # without CI a missing request with no model says how to record; under CI=true the
    # run is replay-only and says so
    monkeypatch.setenv("CI", "true")
    result = run_here(project, "-k", "welcoming")
    result.stdout.fnmatch_lines(["*has no recorded judge reply*"])
    monkeypatch.setenv("CI", "false")
    result = run_here(project, "-k", "welcoming")
    result.stdout.fnmatch_lines(["*no model is configured to record it*"])
    assert Path(project.path).is_dir()
