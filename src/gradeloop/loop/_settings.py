"""The loop's settings, checked once: a bad value is the caller's error, named."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..errors import InputError
from ._similarity import DEFAULT_SIMILARITY

__all__ = ["LoopSettings", "ReturnPolicy", "Select"]

ReturnPolicy = Literal["best", "last"]
Select = Literal["score", "pairwise"]


@dataclass(frozen=True, kw_only=True)
class LoopSettings:
    """How a loop runs: its caps, stopping rules and return policy, checked when built.

    :func:`~gradeloop.run_loop` and :func:`~gradeloop.arun_loop` take each field as a
    keyword argument of the same name and default, and build one of these from them;
    a bad value raises :class:`~gradeloop.errors.InputError` naming the argument.
    """

    max_rounds: int = 3
    stagnation_rounds: int | None = 2
    return_policy: ReturnPolicy = "best"
    similarity: float | None = DEFAULT_SIMILARITY
    reuse_identical: bool = True
    token_budget: int | None = None
    time_budget: float | None = None
    max_judge_failures: int = 2
    max_cost_usd: float | None = None
    select: Select = "score"
    select_margin: float = 1.0

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem is not None:
            raise InputError(problem)

    def to_config(self) -> dict[str, Any]:
        """The settings as the history records them."""
        return {**asdict(self), "select_margin": float(self.select_margin)}


def _problem(s: LoopSettings) -> str | None:
    """What is wrong with ``s``, in one line naming the argument (None: nothing)."""
    if isinstance(s.max_rounds, bool) or not isinstance(s.max_rounds, int):
        return f"max_rounds must be an integer, not {s.max_rounds!r}"
    if s.return_policy not in ("best", "last"):
        return f"return_policy must be 'best' or 'last', not {s.return_policy!r}"
    if s.stagnation_rounds is not None and s.stagnation_rounds < 0:
        return f"stagnation_rounds must be >= 0 (0 turns it off), not {s.stagnation_rounds}"
    if s.similarity is not None and not 0 < s.similarity <= 1:
        return f"similarity must be in (0, 1], not {s.similarity}"
    for name in ("token_budget", "time_budget", "max_cost_usd"):
        value = getattr(s, name)
        if value is not None and not value > 0:
            return f"{name} must be positive, not {value}"
    if s.max_judge_failures < 1:
        return f"max_judge_failures must be >= 1, not {s.max_judge_failures}"
    if s.select not in ("score", "pairwise"):
        return f"select must be 'score' or 'pairwise', not {s.select!r}"
    if s.select == "pairwise" and s.return_policy != "best":
        return (
            "select='pairwise' chooses between the best two drafts: it needs "
            f"return_policy='best', not {s.return_policy!r}"
        )
    margin = s.select_margin
    if isinstance(margin, bool) or not (isinstance(margin, int | float) and 0 <= margin <= 10):
        return f"select_margin must be a number from 0 to 10, not {margin!r}"
    return None
