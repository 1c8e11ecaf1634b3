"""Names that left the top level keep working for this release: each one still imports
from ``gradeloop``, with a DeprecationWarning naming its new import, and is the very
object its new home exports. The names that stayed import without a warning."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import gradeloop

# gradeloop.__all__ of release 0.1, before the front door shrank.
OLD_TOP_LEVEL = """
    DEFAULT_JUDGE_MODEL DEFAULT_MODEL TOOL_DEFINITIONS AlignReport AnthropicGenerator
    AnthropicJudge CacheStats CacheWarning CalibrationReport CallRecord CandidateResult
    CheckContext CheckResult CheckerConflictError CheckerError CheckerSignatureError
    CompareReport ConfigError Criterion CriterionResult DraftItem DraftSizeWarning
    Evaluation Generator GradeloopError GradeloopWarning HistoryError HistoryStore
    InputError Iteration Judge JudgeCache JudgeError JudgeRequiredError Jury JuryVerdict
    KeyAlignment KeyCalibration KeyComparison KeyFlips KeyVerdict LabelledItem LoopEvent
    LoopNotFoundError LoopResult LoopSummary ManyProgress Meter NotAnAnswer
    NotEnoughEvidenceError OpenAICompatibleGenerator OpenAICompatibleJudge PairItem
    PluginError PositionBias Preference PreferenceBatch Proposal Registry RegradeReport
    Rubric RubricError RubricPath RubricWarning Selection ShadowResult ShadowSide
    StoredDraft StructuredFormWarning ToolCall ToolResult ToolRunner Transcript
    TranscriptError UnknownCheckerError UnusableFileError Usage Verdict accepted
    acompare_drafts acompare_many agrade agrade_many align arun_loop as_feedback
    assert_graded calibrate checker compare compare_drafts compare_many
    fingerprint_warnings first_text generator_task get_checker get_optimization_history
    grade grade_many hookimpl make_client metered model_configured optimize
    position_bias propose_checkers read_drafts read_labels read_user_file record_call
    regrade request_digest run_fingerprint run_loop stored_drafts write_rubric
""".split()  # noqa: SIM905 (a word list reads better than 116 quoted lines)

# The names of the project's public contract (the design's sections 1-9), each importable
# from gradeloop as it always was; some have a home elsewhere now and warn.
CONTRACT = """
    Verdict accepted as_feedback Criterion Rubric RubricError CheckResult hookimpl checker
    get_checker grade Evaluation AnthropicGenerator AnthropicJudge NotAnAnswer first_text
    optimize run_loop LoopResult HistoryStore get_optimization_history agrade arun_loop
    grade_many agrade_many DraftItem JudgeCache Usage CriterionResult CheckContext
    OpenAICompatibleJudge OpenAICompatibleGenerator assert_graded Transcript ToolCall
    compare_drafts Preference Jury GradeloopWarning propose_checkers Proposal read_labels
""".split()  # noqa: SIM905 (a word list reads better than 116 quoted lines)

# Public modules that moved into the package that uses them, and where they are now.
MOVED_MODULES = {
    "batches": "gradeloop.bulk.batches",
    "hookspecs": "gradeloop.grading.hookspecs",
    "mcp_server": "gradeloop.integrations.mcp_server",
    "report": "gradeloop.history.report",
    "telemetry": "gradeloop.integrations.telemetry",
}

NEW_IMPORT = re.compile(
    r"use `from (gradeloop(?:\.\w+)+) import (\w+)`; the old name goes in 0\.\d+"
)


def _old_import(name: str) -> tuple[object, list[warnings.WarningMessage]]:
    # the filters a user has by default: a warning shown once per place that caused it
    # (``from pkg import name`` asks the package for the name twice)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        namespace: dict[str, object] = {}
        exec(f"from gradeloop import {name}", namespace)
    return namespace[name], caught


@pytest.mark.parametrize("name", sorted(set(OLD_TOP_LEVEL) | set(CONTRACT)))
def test_an_old_top_level_name_still_imports(name: str) -> None:
    value, caught = _old_import(name)
    if name in gradeloop.__all__:
        assert caught == [], [str(w.message) for w in caught]
        return
    assert [w.category for w in caught] == [DeprecationWarning], name
    found = NEW_IMPORT.search(str(caught[0].message))
    assert found, caught[0].message
    assert str(caught[0].message).startswith(f"gradeloop.{name} moved: ")
    home, new_name = found.groups()
    assert new_name == name
    assert getattr(importlib.import_module(home), name) is value
    assert name in importlib.import_module(home).__all__


@pytest.mark.parametrize("name", sorted(MOVED_MODULES))
def test_a_moved_module_still_imports_from_gradeloop(name: str) -> None:
    # imported first: a first import may change the warning filters (an SDK's own
    # import does), which resets the once-per-place memory between the package's two
    # look-ups of the name and shows the same warning twice
    importlib.import_module(MOVED_MODULES[name])
    value, caught = _old_import(name)
    assert [w.category for w in caught] == [DeprecationWarning]
    package, _, module = MOVED_MODULES[name].rpartition(".")
    assert f"gradeloop.{name} moved: use `from {package} import {module}`" in str(caught[0].message)
    assert value is importlib.import_module(MOVED_MODULES[name])
    assert name not in vars(gradeloop)  # still warns next time


def test_the_old_names_are_all_there() -> None:
    assert len(OLD_TOP_LEVEL) == 116 and len(set(OLD_TOP_LEVEL)) == 116
    assert set(CONTRACT) <= set(OLD_TOP_LEVEL)
    assert set(gradeloop.__all__) <= set(OLD_TOP_LEVEL)


def test_dir_still_lists_every_old_name() -> None:
    assert set(OLD_TOP_LEVEL) <= set(dir(gradeloop))


def test_assert_graded_is_also_in_gradeloop_testing() -> None:
    from gradeloop.testing import assert_graded

    assert assert_graded is gradeloop.assert_graded


def test_the_warning_points_at_the_line_that_used_the_old_name() -> None:
    with pytest.warns(DeprecationWarning, match="from gradeloop.migration import calibrate") as w:
        gradeloop.calibrate  # noqa: B018
    assert w[0].filename == __file__


def test_every_use_of_an_old_name_warns_not_only_the_first() -> None:
    # the moved name is never cached on the module, where it would stop warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = gradeloop.Jury
        second = gradeloop.Jury
    assert first is second
    assert [w.category for w in caught] == [DeprecationWarning, DeprecationWarning]
    assert "Jury" not in vars(gradeloop)


def test_a_name_that_never_existed_is_an_attribute_error_without_a_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AttributeError, match="no attribute 'calibrate_all'"):
            gradeloop.calibrate_all  # noqa: B018
        with pytest.raises(ImportError):
            exec("from gradeloop import calibrate_all", {})
    assert caught == []


def test_a_star_import_gives_the_front_door_without_a_warning() -> None:
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("from gradeloop import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(gradeloop.__all__)


def test_the_old_names_import_in_a_fresh_interpreter_without_the_sdk() -> None:
    # the moved names are found on first use, so `import gradeloop` stays lazy: no SDK
    # until a model class is asked for, old name or new
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import gradeloop\n"
        "from gradeloop import Jury, calibrate, compare_drafts, read_drafts, Usage\n"
        "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules\n"
        "from gradeloop import OpenAICompatibleJudge\n"
        "assert 'openai' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def _changelog_homes() -> dict[str, str]:
    """``{name: home}`` from the Unreleased "Deprecated" bullets of CHANGELOG.md."""
    text = (Path(__file__).resolve().parents[2] / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## ", 1)[0]
    deprecated = unreleased.split("### Deprecated", 1)[1].split("\n### ", 1)[0]
    homes = {}
    for bullet in re.split(r"\n  - ", deprecated)[1:]:
        home, _, names = bullet.partition(":")
        for name in re.findall(r"`(\w+)`", names):
            homes[name] = home.strip("` ")
    return homes


def test_the_changelog_records_every_move_with_its_new_home() -> None:
    moved = {}
    for name in OLD_TOP_LEVEL:
        if name not in gradeloop.__all__:
            _, caught = _old_import(name)
            found = NEW_IMPORT.search(str(caught[0].message))
            assert found
            moved[name] = found.group(1)
    assert _changelog_homes() == moved
