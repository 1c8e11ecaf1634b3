"""A rubric as verl's ``compute_score`` (``custom_reward_function.path`` / ``.name``).

The contract, from verl's own source (verl 0.9.1 on PyPI; the same in the repository
at commit ``b178a3c`` of 2026-01-29): the reward loop's ``NaiveRewardManager.run_single``
(``verl/experimental/reward_loop/reward_manager/naive.py``) calls
``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)``
once per rollout, awaited when ``inspect.iscoroutinefunction(compute_score)`` is true,
else in the event loop's executor (so a sync one may run in several threads at once);
the legacy ``verl/workers/reward_manager/naive.py`` calls it the same way, in a plain
loop. The result is a number or a dict with ``"score"``: every other entry is an extra
that verl collects per rollout into arrays (``reward_loop.py`` reads the keys of the
first rollout's extras for the whole batch, so every rollout must give the same keys)
and averages in its validation metrics (string entries are skipped there). The score
goes into the reward tensor as it is: it must be a number, never None.
"""

from __future__ import annotations

import math
from typing import Any

from ..grading import Evaluation, Rubric
from ..history import HistoryStore
from ._rewarder import Rewarder
from ._rollouts import verl_rollout
from ._shapes import key_reward, unanswered

__all__ = ["RESERVED", "AsyncVerlReward", "VerlReward", "verl_reward"]

#: The extras gradeloop adds beside the per-key rewards (a rubric key may not be one).
RESERVED = ("score", "accepted", "judge_ok", "error")


def verl_reward(
    rubric: Rubric,
    *,
    judge: Any = None,
    shape: str | None = None,
    audit: Any = None,
    audit_fraction: float = 0.0,
    seed: int = 0,
    signed: bool | None = None,
    asynchronous: bool = False,
    failed_score: float = 0.0,
    concurrency: int = 64,
    cache: Any = None,
    store: HistoryStore | None = None,
    name: str | None = None,
) -> Any:
    """verl's ``compute_score(data_source, solution_str, ground_truth, extra_info=None,
    **kw)`` grading each rollout against ``rubric``; ``asynchronous=True`` gives the
    ``async def`` form verl's reward loop awaits, many rollouts at once.

    It returns ``{"score": reward, KEY: key reward for every key, "accepted": 1.0 / 0.0,
    "judge_ok": 1.0 / 0.0, "error": ""}``. ``shape``, ``signed``, ``judge``, ``audit``,
    ``audit_fraction``, ``seed``, ``concurrency``, ``cache`` and ``store`` are
    :func:`trl_reward`'s. verl has no "no reward": where the judge could not answer,
    ``score`` is ``failed_score`` (choose it deliberately: 0.0 by default), marked by
    ``judge_ok`` 0.0 and the reason in ``error``, and that rollout's judge keys are NaN;
    a code key that fails is a real 0. The function's ``__self__`` is its
    :class:`VerlReward` (``.watch``, ``.flush()``).
    """
    kind = AsyncVerlReward if asynchronous else VerlReward
    rewards = kind(
        Rewarder(
            rubric,
            judge=judge,
            shape=shape,
            signed=signed,
            audit=audit,
            audit_fraction=audit_fraction,
            seed=seed,
            concurrency=concurrency,
            cache=cache,
            store=store,
            name=name,
        ),
        failed_score,
    )
    return rewards.compute_score


class VerlReward:
    """The object behind :func:`verl_reward`'s ``compute_score``."""

    def __init__(self, rewarder: Rewarder, failed_score: float) -> None:
        clash = [k for k in rewarder.rubric.keys if k in RESERVED]
        if clash:
            raise ValueError(
                f"the rubric key {clash[0]!r} would clash with the extra of that name verl "
                f"gets from gradeloop ({', '.join(RESERVED)}); rename the key"
            )
        if isinstance(failed_score, bool) or not isinstance(failed_score, int | float):
            raise ValueError(f"failed_score must be a number, not {failed_score!r}")
        if not math.isfinite(failed_score):
            raise ValueError(f"failed_score must be finite (verl sums it), not {failed_score}")
        self.rewarder = rewarder
        self.failed_score = float(failed_score)

    def compute_score(
        self,
        data_source: Any,
        solution_str: str,
        ground_truth: Any,
        extra_info: dict[str, Any] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """One rollout's reward and its extras (blocking)."""
        rollout = verl_rollout(data_source, solution_str, ground_truth, extra_info)
        return self.result(self.rewarder.one(rollout))

    def result(self, evaluation: Evaluation) -> dict[str, Any]:
        """The dict verl reads: ``score``, each key's reward, ``accepted``, ``judge_ok``
        and ``error``."""
        shape = self.rewarder.shape
        score = shape.of(evaluation)
        out: dict[str, Any] = {"score": self.failed_score if score is None else score}
        for key in self.rewarder.rubric.keys:
            value = key_reward(evaluation, key, shape)
            out[key] = math.nan if value is None else value
        failed = unanswered(evaluation)
        out["accepted"] = 1.0 if evaluation.accepted else 0.0
        out["judge_ok"] = 0.0 if failed else 1.0
        out["error"] = _reason(evaluation) if failed else ""
        return out

    @property
    def watch(self) -> Any:
        """The reward-hacking watch, or None without ``audit``."""
        return self.rewarder.watch

    async def aclose(self) -> None:
        """Close the judges' async clients of the running event loop (at the end of a
        run that awaited ``compute_score`` on a loop of its own)."""
        await self.rewarder.aclose()

    def flush(self) -> Any:
        """Record the audited rollouts not yet counted in a step (see :class:`RewardWatch`)."""
        return self.rewarder.flush()


class AsyncVerlReward(VerlReward):
    """:class:`VerlReward` with an ``async def compute_score``."""

    async def compute_score(  # type: ignore[override]
        self,
        data_source: Any,
        solution_str: str,
        ground_truth: Any,
        extra_info: dict[str, Any] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """One rollout's reward and its extras, awaited."""
        rollout = verl_rollout(data_source, solution_str, ground_truth, extra_info)
        return self.result(await self.rewarder.aone(rollout))


def _reason(evaluation: Evaluation) -> str:
    if evaluation.judge_error:
        return evaluation.judge_error
    errors = [f"{c.key}: {c.error}" for c in evaluation.criteria if c.source == "judge" and c.error]
    return "; ".join(errors)
