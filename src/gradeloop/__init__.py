"""gradeloop: grade LLM output against a hybrid rubric and drive the evaluator-optimizer loop.

Every criterion of a rubric is filled either by a deterministic code checker (a
plugin) or by an LLM judge; both land in one ``criteria_met`` dict that
:func:`accepted` gates on::

    from gradeloop import AnthropicGenerator, AnthropicJudge, Rubric, grade, run_loop

    rubric = Rubric.load("rubric.toml")
    evaluation = grade(draft, rubric, judge=AnthropicJudge())
    result = run_loop(task, rubric, generator=AnthropicGenerator(), judge=AnthropicJudge())

This module holds what a first hour uses. Everything else public lives in a
subpackage named for what it holds, each with its own ``__all__``:
:mod:`gradeloop.grading` (rubrics, checks, verdicts, transcripts),
:mod:`gradeloop.models` (judges, generators, usage), :mod:`gradeloop.judging` (juries,
pairwise comparison), :mod:`gradeloop.bulk` (many drafts, Message Batches),
:mod:`gradeloop.loop`, :mod:`gradeloop.history`, :mod:`gradeloop.migration` (moving a
key from the judge to code), :mod:`gradeloop.errors`, :mod:`gradeloop.tools`,
:mod:`gradeloop.graph` and :mod:`gradeloop.testing`.
"""

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from gradeloop.bulk import agrade_many, grade_many
from gradeloop.errors import GradeloopError, NotAnAnswer, RubricError
from gradeloop.grading import (
    CheckResult,
    Criterion,
    Evaluation,
    Rubric,
    Transcript,
    Verdict,
    accepted,
    agrade,
    as_feedback,
    checker,
    get_checker,
    grade,
    hookimpl,
)
from gradeloop.history import HistoryStore, JudgeCache, get_optimization_history
from gradeloop.loop import LoopResult, arun_loop, optimize, run_loop
from gradeloop.models import first_text, make_client
from gradeloop.testing import assert_graded

__version__ = "0.1.0"

if TYPE_CHECKING:
    from gradeloop.models import (
        AnthropicGenerator,
        AnthropicJudge,
        OpenAICompatibleGenerator,
        OpenAICompatibleJudge,
    )

# The model classes import the `anthropic` (or `openai`) SDK, which takes about two
# seconds of CPU to import; code-only grading, `gradeloop checkers` and plugin loading
# never need it, so those names are imported on first use.
_LAZY = (
    "AnthropicGenerator",
    "AnthropicJudge",
    "OpenAICompatibleGenerator",
    "OpenAICompatibleJudge",
)

# Names that left the top level: each still works for this release, with a
# DeprecationWarning naming its new import (CHANGELOG.md lists them).
_MOVED_TO = {
    "gradeloop.bulk": ("ManyProgress",),
    "gradeloop.errors": (
        "CacheWarning",
        "CheckerConflictError",
        "CheckerError",
        "CheckerSignatureError",
        "ConfigError",
        "DraftSizeWarning",
        "GradeloopWarning",
        "HistoryError",
        "InputError",
        "JudgeError",
        "JudgeRequiredError",
        "LoopNotFoundError",
        "NotEnoughEvidenceError",
        "PluginError",
        "RubricWarning",
        "StructuredFormWarning",
        "TranscriptError",
        "UnknownCheckerError",
        "UnusableFileError",
    ),
    "gradeloop.grading": (
        "CheckContext",
        "CriterionResult",
        "Judge",
        "Registry",
        "RubricPath",
        "ShadowResult",
        "ShadowSide",
        "ToolCall",
        "ToolResult",
        "read_user_file",
    ),
    "gradeloop.history": (
        "CacheStats",
        "LoopSummary",
    ),
    "gradeloop.judging": (
        "Jury",
        "JuryVerdict",
        "PairItem",
        "PositionBias",
        "Preference",
        "PreferenceBatch",
        "acompare_drafts",
        "acompare_many",
        "compare_drafts",
        "compare_many",
        "position_bias",
    ),
    "gradeloop.loop": (
        "Generator",
        "Iteration",
        "LoopEvent",
        "Selection",
        "generator_task",
    ),
    "gradeloop.migration": (
        "AlignReport",
        "CalibrationReport",
        "CandidateResult",
        "CompareReport",
        "DraftItem",
        "KeyAlignment",
        "KeyCalibration",
        "KeyComparison",
        "KeyFlips",
        "KeyVerdict",
        "LabelledItem",
        "Proposal",
        "RegradeReport",
        "StoredDraft",
        "align",
        "calibrate",
        "compare",
        "propose_checkers",
        "read_drafts",
        "read_labels",
        "regrade",
        "stored_drafts",
        "write_rubric",
    ),
    "gradeloop.models": (
        "DEFAULT_JUDGE_MODEL",
        "DEFAULT_MODEL",
        "CallRecord",
        "Meter",
        "Usage",
        "fingerprint_warnings",
        "metered",
        "model_configured",
        "record_call",
        "request_digest",
        "run_fingerprint",
    ),
    "gradeloop.tools": (
        "TOOL_DEFINITIONS",
        "ToolRunner",
    ),
}
_MOVED = {name: home for home, names in _MOVED_TO.items() for name in names}
# Public modules that moved into the package that uses them: `from gradeloop import X`
# and `gradeloop.X` still find them (a dotted `import gradeloop.X` cannot, short of an
# import hook, which a library must not install).
_MOVED_MODULES = {
    "batches": "gradeloop.bulk.batches",
    "hookspecs": "gradeloop.grading.hookspecs",
    "mcp_server": "gradeloop.integrations.mcp_server",
    "report": "gradeloop.history.report",
    "telemetry": "gradeloop.integrations.telemetry",
}
_REMOVED_IN = "0.3"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module("gradeloop.models"), name)
        globals()[name] = value
        return value
    # neither is cached in globals(): every old-style use warns (once per place)
    if name in _MOVED:
        _moved(name, f"from {_MOVED[name]} import {name}")
        return getattr(importlib.import_module(_MOVED[name]), name)
    if name in _MOVED_MODULES:
        package, _, module = _MOVED_MODULES[name].rpartition(".")
        _moved(name, f"from {package} import {module}")
        return importlib.import_module(_MOVED_MODULES[name])
    raise AttributeError(f"module 'gradeloop' has no attribute {name!r}")


def _moved(name: str, new_import: str) -> None:
    warnings.warn(
        f"gradeloop.{name} moved: use `{new_import}`; the old name goes in {_REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_MOVED})


__all__ = [
    "AnthropicGenerator",
    "AnthropicJudge",
    "CheckResult",
    "Criterion",
    "Evaluation",
    "GradeloopError",
    "HistoryStore",
    "JudgeCache",
    "LoopResult",
    "NotAnAnswer",
    "OpenAICompatibleGenerator",
    "OpenAICompatibleJudge",
    "Rubric",
    "RubricError",
    "Transcript",
    "Verdict",
    "accepted",
    "agrade",
    "agrade_many",
    "arun_loop",
    "as_feedback",
    "assert_graded",
    "checker",
    "first_text",
    "get_checker",
    "get_optimization_history",
    "grade",
    "grade_many",
    "hookimpl",
    "make_client",
    "optimize",
    "run_loop",
]
