"""verl's ``compute_score``, called exactly as verl's reward managers call it.

verl 0.9.1 (PyPI; the repository at commit b178a3c says the same),
``verl/experimental/reward_loop/reward_manager/naive.py``, ``NaiveRewardManager``:
``__init__`` sets ``self.is_async_reward_score = inspect.iscoroutinefunction(
self.compute_score)``; ``run_single`` then either ``await self.compute_score(
data_source=..., solution_str=..., ground_truth=..., extra_info=...)`` or runs the same
call in ``self.loop.run_in_executor(None, ...)``; a dict result's ``"score"`` is the
reward and every entry is an extra. ``verl/experimental/reward_loop/reward_loop.py``
grades a batch with one task per rollout and reads the extras' keys from the first
rollout (``reward_extra_infos[0].keys()``) for all of them.
``verl/trainer/ppo/reward.py`` loads the function by file and name and, for an async
one, wraps it in ``functools.partial(_call_with_kwargs_async, ...)``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
from typing import Any

import pytest

from gradeloop import Rubric
from gradeloop.rewards import AsyncVerlReward, VerlReward, verl_reward
from tests.rewards.fakes import RUBRIC, WordJudge


async def run_single(compute_score: Any, response: str, ground_truth: Any = "hi") -> dict[str, Any]:
    """NaiveRewardManager.run_single's call and its reading of the result."""
    extra_info: dict[str, Any] = {"question": "Greet the user.", "index": 3}
    extra_info["num_turns"] = None
    extra_info["rollout_reward_scores"] = {}
    kwargs = {
        "data_source": "greetings",
        "solution_str": response,
        "ground_truth": ground_truth,
        "extra_info": extra_info,
    }
    if inspect.iscoroutinefunction(compute_score):
        result = await compute_score(**kwargs)
    else:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(None, lambda: compute_score(**kwargs))
    if isinstance(result, dict):
        return {"reward_score": result["score"], "reward_extra_info": dict(result)}
    return {"reward_score": result, "reward_extra_info": {"acc": result}}


async def compute_score_batch(compute_score: Any, responses: list[str]) -> list[dict[str, Any]]:
    """RewardLoopWorker.compute_score_batch: one task per rollout, all at once."""
    tasks = [asyncio.create_task(run_single(compute_score, r)) for r in responses]
    return list(await asyncio.gather(*tasks))


RESPONSES = ["hello there", "you rude person", "please fail", "hello there"]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_reward_loop_reads_a_score_and_the_same_extras_for_every_rollout(
    asynchronous: bool,
) -> None:
    judge = WordJudge()
    compute_score = verl_reward(RUBRIC, judge=judge, asynchronous=asynchronous)
    assert inspect.iscoroutinefunction(compute_score) is asynchronous
    outputs = asyncio.run(compute_score_batch(compute_score, RESPONSES))

    assert [o["reward_score"] for o in outputs] == [1.0, 0.5, 0.0, 1.0]
    keys = list(outputs[0]["reward_extra_info"])  # what reward_loop.py reads for all
    assert keys == ["score", "short", "polite", "accepted", "judge_ok", "error"]
    assert all(list(o["reward_extra_info"]) == keys for o in outputs)
    failed = outputs[2]["reward_extra_info"]
    assert failed["judge_ok"] == 0.0 and "api_error" in failed["error"]
    assert math.isnan(failed["polite"]) and failed["short"] == 1.0  # the code key still counts
    assert [o["reward_extra_info"]["judge_ok"] for o in outputs] == [1.0, 1.0, 0.0, 1.0]
    assert all(task == "Greet the user." for task in judge.tasks)  # extra_info's question


def test_the_async_form_survives_verls_partial_wrapping() -> None:
    compute_score = verl_reward(RUBRIC, judge=WordJudge(), asynchronous=True)

    async def _call_with_kwargs_async(
        raw_fn: Any, extra_kwargs: Any, *args: Any, **kwargs: Any
    ) -> Any:
        return await raw_fn(*args, **{**kwargs, **extra_kwargs})  # verl/trainer/ppo/reward.py

    wrapped = functools.partial(_call_with_kwargs_async, compute_score, {})
    assert inspect.iscoroutinefunction(wrapped)
    out = asyncio.run(run_single(wrapped, "hello"))
    assert out["reward_score"] == 1.0


def test_the_legacy_batch_manager_loop() -> None:
    # verl/workers/reward_manager/naive.py: a plain loop, extras appended per key
    compute_score = verl_reward(RUBRIC, judge=WordJudge(), shape="gate")
    extras: dict[str, list[Any]] = {}
    rewards = []
    for response in RESPONSES:
        score = compute_score(
            data_source="greetings", solution_str=response, ground_truth="hi", extra_info={}
        )
        rewards.append(score["score"])
        for key, value in score.items():
            extras.setdefault(key, []).append(value)
    assert rewards == [1.0, 0.0, 0.0, 1.0]
    assert all(len(v) == len(RESPONSES) for v in extras.values())


def test_failed_score_is_the_deliberate_choice() -> None:
    compute_score = verl_reward(RUBRIC, judge=WordJudge(), failed_score=0.5)
    out = compute_score("src", "please fail", "hi", {})
    assert out["score"] == 0.5 and out["judge_ok"] == 0.0
    answered = compute_score("src", "hello", "hi", {})  # the twin: an answer is not 0.5
    assert answered["score"] == 1.0 and answered["judge_ok"] == 1.0 and answered["error"] == ""


def test_ground_truth_and_extra_info_reach_grading() -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "same",
                    "description": "Matches the ground truth.",
                    "checker": "matches_reference",
                },
                {
                    "key": "level",
                    "description": "Names the level.",
                    "checker": "string_check",
                    "options": {"operation": "like", "reference_field": "level"},
                },
            ]
        }
    )
    compute_score = verl_reward(rubric)
    out = compute_score("src", "42 level 3", "42 level 3", {"level": 3})
    assert (out["same"], out["level"]) == (1.0, 1.0)
    out = compute_score("src", "41", "42", {"level": 3})
    assert (out["same"], out["level"]) == (0.0, 0.0)


def test_a_rubric_key_that_clashes_with_an_extra_is_refused() -> None:
    rubric = Rubric.from_dict({"criteria": [{"key": "score", "description": "A score."}]})
    with pytest.raises(ValueError, match="the rubric key 'score' would clash"):
        verl_reward(rubric, judge=WordJudge())


@pytest.mark.parametrize("bad", [math.inf, "0", True])
def test_failed_score_must_be_a_finite_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="failed_score must be"):
        verl_reward(RUBRIC, judge=WordJudge(), failed_score=bad)


def test_the_functions_object_holds_the_watch() -> None:
    compute_score = verl_reward(RUBRIC, judge=WordJudge())
    assert isinstance(compute_score.__self__, VerlReward)
    assert compute_score.__self__.watch is None and compute_score.__self__.flush() is None
    async_score = verl_reward(RUBRIC, judge=WordJudge(), asynchronous=True)
    assert isinstance(async_score.__self__, AsyncVerlReward)
