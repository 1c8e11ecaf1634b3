"""The TRL reward function, called exactly as TRL calls one (no TRL needed here).

TRL's contract (trl/trainer/grpo_trainer.py, ``_calculate_rewards``, TRL 1.16.0; the
repository at commit f2cd577 says the same): ``reward_func(prompts=..., completions=...,
completion_ids=..., **reward_kwargs)``, with every dataset column but prompt/completion
(one value per completion), ``trainer_state``, ``log_extra`` and ``log_metric``; one
``float | None`` per completion back. Async: ``trl.trainer.utils.is_async_callable``
(``inspect.iscoroutinefunction(f) or inspect.iscoroutinefunction(f.__call__)``).
tests/trl/ runs the same functions inside the real trainer.
"""

from __future__ import annotations

import asyncio
import inspect
from types import SimpleNamespace
from typing import Any

import pytest

from gradeloop import CheckResult, JudgeCache, Rubric, checker
from gradeloop.errors import JudgeRequiredError
from gradeloop.grading import CheckContext
from gradeloop.rewards import AsyncTRLReward, TRLReward, trl_reward
from tests.rewards.fakes import CODE_ONLY, RUBRIC, WordJudge, columns


def is_async_callable(func: Any) -> bool:
    """TRL 1.16.0's test (trl/trainer/utils.py), restated."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(func.__call__)


def test_called_as_trl_calls_it_one_reward_per_completion() -> None:
    reward = trl_reward(RUBRIC, judge=WordJudge())
    out = reward(
        prompts=["Greet:", "Greet:", "Greet:"],
        completions=["hello there", "you rude person", "one two three four five six"],
        **columns(3),
    )
    assert out == [1.0, 0.5, 0.5]
    assert reward.__name__ == "gradeloop" and not is_async_callable(reward)


def test_the_task_column_is_the_task_else_the_prompt() -> None:
    judge = WordJudge()
    reward = trl_reward(RUBRIC, judge=judge)
    reward(prompts=["Say hi:"], completions=["hi"], **columns(1, task=["Greet the user."]))
    reward(prompts=["Say yo:"], completions=["yo"], **columns(1))
    chat = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Say hey:"}]
    reward(prompts=[chat], completions=[[{"role": "assistant", "content": "hey"}]], **columns(1))
    assert judge.tasks == ["Greet the user.", "Say yo:", "system: Be kind.\nuser: Say hey:"]
    assert judge.drafts[2] == "hey"  # one plain assistant message is its text


def test_reference_metadata_and_other_columns_reach_the_checkers() -> None:
    seen: list[CheckContext] = []

    @checker("remember")
    def remember(text: str, *, context: CheckContext | None = None) -> CheckResult:
        assert context is not None
        seen.append(context)
        return CheckResult(True)

    rubric = Rubric.from_dict(
        {"criteria": [{"key": "k", "description": "d", "checker": "remember"}]}
    )
    reward = trl_reward(rubric)
    reward(
        prompts=["p1", "p2"],
        completions=["a", "b"],
        **columns(
            2,
            reference=["ref a", None],
            metadata=[{"lang": "en", "level": 9}, None],
            level=[1, 2],
            image=[object(), object()],  # not a plain value: left out
        ),
    )
    seen.sort(key=lambda c: c.task)  # a plugin's checker may run in several threads
    assert [c.reference for c in seen] == ["ref a", None]
    assert [dict(c.metadata or {}) for c in seen] == [{"lang": "en", "level": 9}, {"level": 2}]


def test_an_agent_transcript_completion_is_graded_as_a_transcript() -> None:
    rubric = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "searched",
                    "description": "Searches first.",
                    "checker": "tool_called",
                    "options": {"name": "search"},
                },
                {"key": "polite", "description": "Polite."},
            ]
        }
    )
    judge = WordJudge()
    reward = trl_reward(rubric, judge=judge)
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    agent = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "found it"},
        {"role": "assistant", "content": "Here it is."},
    ]
    plain = [{"role": "assistant", "content": "Here it is."}]
    assert reward(prompts=["find"] * 2, completions=[agent, plain], **columns(2)) == [1.0, 0.5]
    assert "search" in judge.drafts[0]  # the judge saw the whole transcript rendered


def test_identical_completions_are_graded_once() -> None:
    judge = WordJudge()
    reward = trl_reward(RUBRIC, judge=judge)
    out = reward(prompts=["p"] * 4, completions=["hi", "hi", "so rude", "hi"], **columns(4))
    assert out == [1.0, 1.0, 0.5, 1.0]
    assert sorted(judge.drafts) == ["hi", "so rude"]
    assert (reward.steps[0].rollouts, reward.steps[0].unique) == (4, 2)


def test_the_same_completion_for_another_task_is_graded_again() -> None:
    judge = WordJudge()
    reward = trl_reward(RUBRIC, judge=judge)
    reward(prompts=["a", "b"], completions=["hi", "hi"], **columns(2))
    assert len(judge.drafts) == 2  # the task is part of what makes two rollouts the same


def test_per_key_functions_are_named_for_trl_and_share_one_grading() -> None:
    judge = WordJudge()
    reward = trl_reward(RUBRIC, judge=judge, name="greet")
    funcs = reward.per_key()
    assert [f.__name__ for f in funcs] == ["greet_short", "greet_polite"]
    prompts, completions = ["p", "p"], ["hello", "so rude here"]
    kwargs = columns(2)
    got = [f(prompts=prompts, completions=completions, **kwargs) for f in funcs]
    assert got == [[1.0, 1.0], [1.0, 0.0]]
    assert len(judge.drafts) == 2  # graded once for both functions
    assert len(reward.steps) == 1


def test_a_new_batch_is_graded_anew() -> None:
    judge = WordJudge()
    short, _ = trl_reward(RUBRIC, judge=judge).per_key()
    short(prompts=["p"], completions=["hi"], **columns(1))
    short(prompts=["p"], completions=["hi"], **columns(1))  # new lists: TRL's next step
    assert len(judge.drafts) == 2


def test_log_metric_gets_the_step_figures_once_per_batch() -> None:
    logged: list[tuple[str, float]] = []
    reward = trl_reward(RUBRIC, judge=WordJudge())
    kwargs = {**columns(3), "log_metric": lambda name, value: logged.append((name, value))}
    prompts, completions = ["p"] * 3, ["hi", "hi", "please fail"]
    for f in reward.per_key():
        f(prompts=prompts, completions=completions, **kwargs)
    assert logged == [("gradeloop/unanswered", 1.0), ("gradeloop/unique_fraction", 2 / 3)]


def test_the_step_is_trl_global_step() -> None:
    reward = trl_reward(CODE_ONLY)
    state = SimpleNamespace(global_step=7)
    reward(prompts=["p"], completions=["hello"], **{**columns(1), "trainer_state": state})
    reward(prompts=["p"], completions=["hello"], **columns(1))
    assert [s.step for s in reward.steps] == [7, 8]


def test_the_async_form_is_awaited_and_shares_one_grading() -> None:
    judge = WordJudge()
    reward = trl_reward(RUBRIC, judge=judge, asynchronous=True)
    funcs = reward.per_key()
    assert isinstance(reward, AsyncTRLReward) and is_async_callable(reward)
    assert all(is_async_callable(f) for f in funcs)
    prompts, completions = ["p"] * 3, ["hello", "so rude", "hello"]
    kwargs = columns(3)

    async def as_trl_does() -> list[Any]:  # asyncio.gather of every async reward function
        return await asyncio.gather(
            *(f(prompts=prompts, completions=completions, **kwargs) for f in [reward, *funcs])
        )

    whole, short, polite = asyncio.run(as_trl_does())
    assert whole == [1.0, 0.5, 1.0] and short == [1.0, 1.0, 1.0] and polite == [1.0, 0.0, 1.0]
    assert sorted(judge.drafts) == ["hello", "so rude"]


def test_a_code_only_rubric_needs_no_judge_and_a_judged_one_says_so_at_once() -> None:
    assert trl_reward(CODE_ONLY)(prompts=["p"], completions=["Hello you"]) == [1.0]
    with pytest.raises(JudgeRequiredError, match="polite"):
        trl_reward(RUBRIC)


@pytest.mark.parametrize(
    ("prompts", "completions", "extra", "message"),
    [
        (["p"], ["a", "b"], {}, "1 prompts for 2 completions"),
        (["p"], ["a"], {"task": [3]}, "the 'task' column of completion 0 is int"),
        (["p"], ["a"], {"metadata": ["x"]}, "the 'metadata' column of completion 0 is str"),
        (["p"], ["a"], {"task": "one for all"}, "the 'task' column has no value per completion"),
        (["p"], [42], {}, r"completions\[0\] is int"),
    ],
)
def test_bad_input_names_what_is_wrong(
    prompts: list[Any], completions: list[Any], extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        trl_reward(CODE_ONLY)(prompts=prompts, completions=completions, **extra)


def test_cache_needs_a_judge_that_takes_one(tmp_path: Any) -> None:
    with pytest.raises(TypeError, match="WordJudge has no 'cache' attribute"):
        trl_reward(RUBRIC, judge=WordJudge(), cache=JudgeCache(tmp_path / "c.db"))


def test_the_sync_form_is_a_trl_reward() -> None:
    reward = trl_reward(CODE_ONLY)
    assert isinstance(reward, TRLReward) and "gradeloop" in repr(reward)
