"""The loop's settings, checked once: a bad value is the caller's error, named."""

from __future__ import annotations

from typing import Any

from ..errors import InputError

__all__ = ["LoopSettings"]


class LoopSettings:
    """Validated loop settings (bad values are the caller's error, named)."""

    def __init__(
        self,
        *,
        max_rounds: int,
        stagnation_rounds: int | None,
        return_policy: str,
        similarity: float | None,
        reuse_identical: bool,
        token_budget: int | None,
        time_budget: float | None,
        max_judge_failures: int,
        max_cost_usd: float | None = None,
        select: str = "score",
        select_margin: float = 1.0,
    ) -> None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int):
            raise InputError(f"max_rounds must be an integer, not {max_rounds!r}")
        if return_policy not in ("best", "last"):
            raise InputError(f"return_policy must be 'best' or 'last', not {return_policy!r}")
        if stagnation_rounds is not None and stagnation_rounds < 0:
            raise InputError(
                f"stagnation_rounds must be >= 0 (0 turns it off), not {stagnation_rounds}"
            )
        if similarity is not None and not 0 < similarity <= 1:
            raise InputError(f"similarity must be in (0, 1], not {similarity}")
        for name, value in (
            ("token_budget", token_budget),
            ("time_budget", time_budget),
            ("max_cost_usd", max_cost_usd),
        ):
            if value is not None and not value > 0:
                raise InputError(f"{name} must be positive, not {value}")
        if max_judge_failures < 1:
            raise InputError(f"max_judge_failures must be >= 1, not {max_judge_failures}")
        if select not in ("score", "pairwise"):
            raise InputError(f"select must be 'score' or 'pairwise', not {select!r}")
        if select == "pairwise" and return_policy != "best":
            raise InputError(
                "select='pairwise' chooses between the best two drafts: it needs "
                f"return_policy='best', not {return_policy!r}"
            )
        if isinstance(select_margin, bool) or not (
            isinstance(select_margin, int | float) and 0 <= select_margin <= 10
        ):
            raise InputError(f"select_margin must be a number from 0 to 10, not {select_margin!r}")
        self.max_rounds = max_rounds
        self.stagnation_rounds = stagnation_rounds
        self.return_policy = return_policy
        self.similarity = similarity
        self.reuse_identical = reuse_identical
        self.token_budget = token_budget
        self.time_budget = time_budget
        self.max_judge_failures = max_judge_failures
        self.max_cost_usd = max_cost_usd
        self.select = select
        self.select_margin = float(select_margin)

    def to_config(self) -> dict[str, Any]:
        return dict(vars(self))
