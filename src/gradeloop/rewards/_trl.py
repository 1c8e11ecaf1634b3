"""A rubric as a TRL reward function (``GRPOTrainer(reward_funcs=...)``).

The contract, from TRL's own source (``trl/trainer/grpo_trainer.py``,
``GRPOTrainer._calculate_rewards``, TRL 1.16.0; the same in the repository at commit
``f2cd577`` of 2026-07-24): a custom reward function is called as
``reward_func(prompts=prompts, completions=completions, completion_ids=...,
**reward_kwargs)`` where ``reward_kwargs`` holds every dataset column but ``prompt``,
``completion`` and ``completion_ids`` (one value per completion), ``trainer_state``,
``log_extra``, ``log_metric`` and, with environments, ``environments``; it returns one
reward per completion, None where it does not apply (TRL turns None into NaN and leaves
it out of the sum; a completion every function left out gets no advantage). A function
TRL finds async (``is_async_callable``: an ``async def``, or an object whose
``__call__`` is one) is awaited, with the other async functions, on TRL's own event
loop; its display name (``rewards/<name>/mean`` in the logs) is the callable's
``__name__``.
"""

from __future__ import annotations

from typing import Any

from ..grading import Rubric
from ..history import HistoryStore
from ._rewarder import Graded, Rewarder, step_of
from ._rollouts import trl_rollouts
from ._steps import RewardStep

__all__ = ["AsyncTRLReward", "TRLReward", "trl_reward"]


def trl_reward(
    rubric: Rubric,
    *,
    judge: Any = None,
    shape: str | None = None,
    audit: Any = None,
    audit_fraction: float = 0.0,
    seed: int = 0,
    signed: bool | None = None,
    asynchronous: bool = False,
    concurrency: int = 64,
    cache: Any = None,
    store: HistoryStore | None = None,
    name: str | None = None,
) -> TRLReward:
    """A TRL reward function that grades each completion against ``rubric``.

    ``shape`` (default: the rubric's ``[reward]`` table, else ``"score"``): ``"score"``
    (the weighted overall / 10, in [0, 1]), ``"gate"`` (1.0 accepted, 0.0 not),
    ``"gate_score"`` (the score when accepted, else 0.0); ``signed=True`` gives [-1, 1].
    ``.per_key()`` gives one function per key instead (TRL logs each). Where the judge
    could not answer the reward is None, never 0 (TRL leaves it out); a code key that
    fails is a real 0.

    ``judge`` fills the judge keys (None for a rubric filled by code alone), with at most
    ``concurrency`` requests in flight and ``cache`` as its verdict cache; identical
    completions are graded once. ``audit`` (a second judge) with ``audit_fraction`` (say
    0.05) is the reward-hacking watch: a ``seed`` ed sample of every step is graded by it
    too and compared (``.watch.steps``; records in ``store``). ``asynchronous=True`` gives
    the ``async`` form TRL awaits beside its other async reward functions.

    >>> reward = trl_reward(rubric, judge=AnthropicJudge(), shape="gate_score")  # doctest: +SKIP
    >>> trainer = GRPOTrainer(model=..., reward_funcs=reward, ...)                # doctest: +SKIP
    """
    rewarder = Rewarder(
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
    )
    kind = AsyncTRLReward if asynchronous else TRLReward
    return kind(rewarder, None, name or "gradeloop")


class TRLReward:
    """A rubric's rewards in TRL's reward-function form (made by :func:`trl_reward`).

    Call it as TRL does: ``reward(prompts=[...], completions=[...], **columns)`` ->
    one ``float | None`` per completion. ``__name__`` is what TRL logs it as.
    """

    def __init__(self, rewarder: Rewarder, key: str | None, base: str) -> None:
        self.rewarder = rewarder
        self.key = key
        self._base = base
        self.__name__ = base if key is None else f"{base}_{key}"

    def __call__(self, prompts: Any, completions: Any, **kwargs: Any) -> list[float | None]:
        step = step_of(kwargs.get("trainer_state"))
        graded = self.rewarder.graded(
            prompts, completions, step, lambda: trl_rollouts(prompts, completions, kwargs)
        )
        return self._rewards(graded, kwargs)

    def _rewards(self, graded: Graded, kwargs: dict[str, Any]) -> list[float | None]:
        log_metric = kwargs.get("log_metric")
        if callable(log_metric) and (self.key is None or self._first_key()):
            for metric, value in graded.step.metrics().items():
                log_metric(metric, value)
        return self.rewarder.rewards(graded, self.key)

    def _first_key(self) -> bool:
        """Per-key functions log the step's figures once, from the first key's."""
        return self.key is not None and self.key == self.rewarder.rubric.keys[0]

    def per_key(self) -> list[TRLReward]:
        """One reward function per rubric key, in rubric order, each named
        ``<name>_<key>``: its key's score / 10 (pass/fail keys 1 or 0), None where the
        judge did not answer that key. They share one grading of each batch."""
        return [type(self)(self.rewarder, k, self._base) for k in self.rewarder.rubric.keys]

    @property
    def steps(self) -> list[RewardStep]:
        """Every step rewarded so far: rollouts, distinct ones graded, None rewards, mean
        reward, seconds, and the watch's figures when audited."""
        return self.rewarder.steps

    @property
    def watch(self) -> Any:
        """The reward-hacking watch (:class:`RewardWatch`), or None without ``audit``."""
        return self.rewarder.watch

    async def aclose(self) -> None:
        """Close the judges' async clients of the running event loop (the async form's
        are kept open between steps, on TRL's loop)."""
        await self.rewarder.aclose()

    def __repr__(self) -> str:
        return f"<gradeloop reward {self.__name__!r}: {self.rewarder.shape.shape}>"


class AsyncTRLReward(TRLReward):
    """:class:`TRLReward` whose ``__call__`` is a coroutine: TRL awaits it on its own
    event loop, concurrently with its other async reward functions."""

    async def __call__(  # type: ignore[override]
        self, prompts: Any, completions: Any, **kwargs: Any
    ) -> list[float | None]:
        step = step_of(kwargs.get("trainer_state"))
        graded = await self.rewarder.agraded(
            prompts, completions, step, lambda: trl_rollouts(prompts, completions, kwargs)
        )
        return self._rewards(graded, kwargs)
