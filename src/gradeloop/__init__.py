"""gradeloop: grade LLM output against a hybrid rubric and drive the evaluator-optimizer loop.

Every criterion of a rubric is filled either by a deterministic code checker (a
plugin) or by an LLM judge; both land in one ``criteria_met`` dict that
:func:`accepted` gates on.
"""

import importlib
from typing import TYPE_CHECKING, Any

from gradeloop.bulk._many import agrade_many, grade_many
from gradeloop.bulk._progress import ManyProgress
from gradeloop.errors import (
    CacheWarning,
    CheckerConflictError,
    CheckerError,
    CheckerSignatureError,
    ConfigError,
    DraftSizeWarning,
    GradeloopError,
    GradeloopWarning,
    HistoryError,
    InputError,
    JudgeError,
    JudgeRequiredError,
    LoopNotFoundError,
    NotAnAnswer,
    NotEnoughEvidenceError,
    PluginError,
    RubricError,
    RubricWarning,
    StructuredFormWarning,
    TranscriptError,
    UnknownCheckerError,
    UnusableFileError,
)
from gradeloop.grading._agrade import agrade
from gradeloop.grading._checks import CheckResult, RubricPath
from gradeloop.grading._context import CheckContext
from gradeloop.grading._files import read_user_file
from gradeloop.grading._grade import CriterionResult, Evaluation, Judge, grade
from gradeloop.grading._registry import Registry, checker, get_checker, hookimpl
from gradeloop.grading._rubric import Criterion, Rubric
from gradeloop.grading._shadow import ShadowResult, ShadowSide
from gradeloop.grading._transcript import ToolCall, ToolResult, Transcript
from gradeloop.grading._verdict import Verdict, accepted, as_feedback
from gradeloop.history._cache import CacheStats, JudgeCache
from gradeloop.history._store import HistoryStore, LoopSummary, get_optimization_history
from gradeloop.judging._bias import (
    PairItem,
    PositionBias,
    PreferenceBatch,
    acompare_many,
    compare_many,
    position_bias,
)
from gradeloop.judging._jury import Jury
from gradeloop.judging._preference import Preference, acompare_drafts, compare_drafts
from gradeloop.judging._votes import JuryVerdict
from gradeloop.loop._result import Iteration, LoopResult
from gradeloop.loop._run import (
    Generator,
    LoopEvent,
    arun_loop,
    generator_task,
    optimize,
    run_loop,
)
from gradeloop.loop._select import Selection
from gradeloop.migration._align import AlignReport, KeyAlignment, align
from gradeloop.migration._calibrate import CalibrationReport, KeyCalibration, calibrate
from gradeloop.migration._compare import CompareReport, KeyComparison, compare
from gradeloop.migration._evidence import KeyVerdict, StoredDraft, stored_drafts
from gradeloop.migration._jsonl import DraftItem, LabelledItem, read_drafts, read_labels
from gradeloop.migration._propose import CandidateResult, Proposal, propose_checkers
from gradeloop.migration._regrade import KeyFlips, RegradeReport, regrade
from gradeloop.migration._rubric_write import write_rubric
from gradeloop.models._digest import request_digest
from gradeloop.models._fingerprint import fingerprint_warnings, run_fingerprint
from gradeloop.testing._assert import assert_graded
from gradeloop.tools import TOOL_DEFINITIONS, ToolRunner

__version__ = "0.1.0"

if TYPE_CHECKING:
    from gradeloop.models._anthropic import (
        DEFAULT_JUDGE_MODEL,
        DEFAULT_MODEL,
        AnthropicGenerator,
        AnthropicJudge,
        CallRecord,
        Usage,
        first_text,
        make_client,
        model_configured,
    )
    from gradeloop.models._openai import OpenAICompatibleGenerator, OpenAICompatibleJudge
    from gradeloop.models._usage import Meter, metered, record_call

# The model tier imports the `anthropic` SDK, which takes about two seconds of CPU
# to import; code-only grading, `gradeloop checkers` and plugin loading never
# need it, so those names are imported on first use.
_LAZY = {
    "DEFAULT_JUDGE_MODEL": "gradeloop.models._anthropic",
    "DEFAULT_MODEL": "gradeloop.models._anthropic",
    "AnthropicGenerator": "gradeloop.models._anthropic",
    "AnthropicJudge": "gradeloop.models._anthropic",
    "CallRecord": "gradeloop.models._usage",
    "Meter": "gradeloop.models._usage",
    "Usage": "gradeloop.models._usage",
    "first_text": "gradeloop.models._reply",
    "OpenAICompatibleGenerator": "gradeloop.models._openai",
    "OpenAICompatibleJudge": "gradeloop.models._openai",
    "make_client": "gradeloop.models._anthropic",
    "metered": "gradeloop.models._usage",
    "model_configured": "gradeloop.models._anthropic",
    "record_call": "gradeloop.models._usage",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradeloop' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_MODEL",
    "TOOL_DEFINITIONS",
    "AlignReport",
    "AnthropicGenerator",
    "AnthropicJudge",
    "CacheStats",
    "CacheWarning",
    "CalibrationReport",
    "CallRecord",
    "CandidateResult",
    "CheckContext",
    "CheckResult",
    "CheckerConflictError",
    "CheckerError",
    "CheckerSignatureError",
    "CompareReport",
    "ConfigError",
    "Criterion",
    "CriterionResult",
    "DraftItem",
    "DraftSizeWarning",
    "Evaluation",
    "Generator",
    "GradeloopError",
    "GradeloopWarning",
    "HistoryError",
    "HistoryStore",
    "InputError",
    "Iteration",
    "Judge",
    "JudgeCache",
    "JudgeError",
    "JudgeRequiredError",
    "Jury",
    "JuryVerdict",
    "KeyAlignment",
    "KeyCalibration",
    "KeyComparison",
    "KeyFlips",
    "KeyVerdict",
    "LabelledItem",
    "LoopEvent",
    "LoopNotFoundError",
    "LoopResult",
    "LoopSummary",
    "ManyProgress",
    "Meter",
    "NotAnAnswer",
    "NotEnoughEvidenceError",
    "OpenAICompatibleGenerator",
    "OpenAICompatibleJudge",
    "PairItem",
    "PluginError",
    "PositionBias",
    "Preference",
    "PreferenceBatch",
    "Proposal",
    "Registry",
    "RegradeReport",
    "Rubric",
    "RubricError",
    "RubricPath",
    "RubricWarning",
    "Selection",
    "ShadowResult",
    "ShadowSide",
    "StoredDraft",
    "StructuredFormWarning",
    "ToolCall",
    "ToolResult",
    "ToolRunner",
    "Transcript",
    "TranscriptError",
    "UnknownCheckerError",
    "UnusableFileError",
    "Usage",
    "Verdict",
    "__version__",
    "accepted",
    "acompare_drafts",
    "acompare_many",
    "agrade",
    "agrade_many",
    "align",
    "arun_loop",
    "as_feedback",
    "assert_graded",
    "calibrate",
    "checker",
    "compare",
    "compare_drafts",
    "compare_many",
    "fingerprint_warnings",
    "first_text",
    "generator_task",
    "get_checker",
    "get_optimization_history",
    "grade",
    "grade_many",
    "hookimpl",
    "make_client",
    "metered",
    "model_configured",
    "optimize",
    "position_bias",
    "propose_checkers",
    "read_drafts",
    "read_labels",
    "read_user_file",
    "record_call",
    "regrade",
    "request_digest",
    "run_fingerprint",
    "run_loop",
    "stored_drafts",
    "write_rubric",
]
