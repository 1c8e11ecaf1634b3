"""gradeloop: grade LLM output against a hybrid rubric and drive the evaluator-optimizer loop.

Every criterion of a rubric is filled either by a deterministic code checker (a
plugin) or by an LLM judge; both land in one ``criteria_met`` dict that
:func:`accepted` gates on.
"""

from gradeloop._checks import CheckResult
from gradeloop._grade import CriterionResult, Evaluation, Judge, grade
from gradeloop._registry import Registry, checker, get_checker, hookimpl
from gradeloop._rubric import Criterion, Rubric
from gradeloop._verdict import Verdict, accepted, as_feedback
from gradeloop.errors import (
    CheckerConflictError,
    CheckerError,
    ConfigError,
    GradeloopError,
    InputError,
    JudgeError,
    JudgeRequiredError,
    NotAnAnswer,
    RubricError,
    UnknownCheckerError,
)

__version__ = "0.1.0"

__all__ = [
    "CheckResult",
    "CheckerConflictError",
    "CheckerError",
    "ConfigError",
    "Criterion",
    "CriterionResult",
    "Evaluation",
    "GradeloopError",
    "InputError",
    "Judge",
    "JudgeError",
    "JudgeRequiredError",
    "NotAnAnswer",
    "Registry",
    "Rubric",
    "RubricError",
    "UnknownCheckerError",
    "Verdict",
    "__version__",
    "accepted",
    "as_feedback",
    "checker",
    "get_checker",
    "grade",
    "hookimpl",
]
