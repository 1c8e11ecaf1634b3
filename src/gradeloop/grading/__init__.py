"""The grading core: rubrics, the checker registry, checks, verdicts, grading and shadows.

Everything here is deterministic and needs no model: a rubric is loaded and validated,
its code keys run through registered checkers, the judge (when one is given) fills the
rest, and the results merge into one :class:`Evaluation` that the :func:`accepted`
gate reads. An agent's messages are a draft too (:class:`Transcript`), so transcripts
live here beside the checks that read them::

    from gradeloop.grading import CheckContext, CheckResult, Transcript, checker, grade

The names most code needs (``grade``, ``Rubric``, ``checker``, ``Transcript``...) are
also importable from :mod:`gradeloop` itself.
"""

from ._agrade import agrade
from ._checks import CheckResult, RubricPath
from ._context import CheckContext
from ._files import read_user_file
from ._grade import CriterionResult, Evaluation, Judge, grade
from ._regex import LinearRegex, linear_regex
from ._registry import Registry, checker, get_checker, hookimpl
from ._rubric import Criterion, Rubric
from ._shadow import ShadowResult, ShadowSide
from ._transcript import ToolCall, ToolResult, Transcript
from ._verdict import Verdict, accepted, as_feedback

__all__ = [
    "CheckContext",
    "CheckResult",
    "Criterion",
    "CriterionResult",
    "Evaluation",
    "Judge",
    "LinearRegex",
    "Registry",
    "Rubric",
    "RubricPath",
    "ShadowResult",
    "ShadowSide",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "Verdict",
    "accepted",
    "agrade",
    "as_feedback",
    "checker",
    "get_checker",
    "grade",
    "hookimpl",
    "linear_regex",
    "read_user_file",
]
