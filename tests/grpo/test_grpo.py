"""gradeloop's reward functions inside TRL's real GRPOTrainer, a couple of steps each.

The contract is TRL's own (trl/trainer/grpo_trainer.py, ``_calculate_rewards``, TRL
1.16.0; the same in the repository at commit f2cd577): every dataset column but
``prompt`` reaches a reward function as a keyword with one value per completion, beside
``completion_ids``, ``trainer_state``, ``log_extra`` and ``log_metric``; a None reward
is NaN to TRL and left out; async functions are gathered on TRL's own event loop. The
rubric has a code key (a checker registered here that records what it was given) and a
judge key filled by a real AnthropicJudge talking to the Messages-API emulator.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from gradeloop import AnthropicJudge, CheckResult, Rubric, checker
from gradeloop.grading import CheckContext
from gradeloop.rewards import AsyncTRLReward, trl_reward
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator, http_error

pytestmark = [
    pytest.mark.trl,
    # transformers' own deprecations, raised from inside TRL's trainer
    pytest.mark.filterwarnings("ignore::FutureWarning:transformers"),
]

ROWS = [
    {"prompt": "Say hi:", "task": "Greet the user.", "reference": "hi", "level": 1},
    {"prompt": "Say yo:", "task": "Greet a friend.", "reference": "yo", "level": 2},
] * 4
SEEN: list[CheckContext] = []


@pytest.fixture
def rubric() -> Rubric:
    SEEN.clear()

    @checker("short_and_seen")
    def short_and_seen(text: str, *, context: CheckContext | None = None) -> CheckResult:
        assert context is not None
        SEEN.append(context)
        return CheckResult(len(text) <= 6)

    return Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "short",
                    "description": "At most 6 characters.",
                    "checker": "short_and_seen",
                },
                {"key": "friendly", "description": "The greeting is friendly."},
            ]
        }
    )


def _verdict(body: dict[str, Any]) -> Any:
    """Every asked key met, except for drafts with an even number of characters' worth
    of prompt: rewards that differ, from a judge that answers every request."""
    schema = body["output_config"]["format"]["schema"]
    keys = schema["$defs"]["CriteriaMet"]["required"]
    text = str(body["messages"])
    met = len(text) % 2 == 0
    return verdict_reply(
        {
            "reasoning": "checked",
            "criteria_met": dict.fromkeys(keys, met),
            "passed": met,
            "issues": [],
        }
    )


def _judge(emulator: Emulator) -> AnthropicJudge:
    return AnthropicJudge(emulator.client(max_retries=0), model="claude-sonnet-4-5-20250929")


def _logged(trainer: Any, name: str) -> list[float]:
    return [entry[name] for entry in trainer.state.log_history if name in entry]


def test_the_sync_reward_in_grpo_gets_the_columns_and_logs_per_step(
    emulator: Emulator, rubric: Rubric, trained: Any
) -> None:
    emulator.responder = _verdict
    reward = trl_reward(rubric, judge=_judge(emulator))
    trainer = trained(reward, ROWS)

    means = _logged(trainer, "rewards/gradeloop/mean")
    assert len(means) == 2 and all(0.0 <= m <= 1.0 for m in means)
    assert _logged(trainer, "gradeloop/unanswered") == [0.0, 0.0]
    assert [s.rollouts for s in reward.steps] == [4, 4]
    # identical completions are graded once: one request per distinct one
    assert len(emulator.bodies) == sum(s.unique for s in reward.steps)
    # the task column (not the prompt) is the judge's task; reference and the other
    # columns reach the checker's context
    assert all("Greet" in str(b["messages"]) for b in emulator.bodies)
    assert {c.reference for c in SEEN} <= {"hi", "yo"} and SEEN
    assert all(c.metadata and c.metadata["level"] in (1, 2) for c in SEEN)
    assert all(c.task in ("Greet the user.", "Greet a friend.") for c in SEEN)


def test_async_per_key_rewards_share_one_grading_and_each_key_is_logged(
    emulator: Emulator, rubric: Rubric, trained: Any
) -> None:
    emulator.responder = _verdict
    rows = [
        {
            "prompt": [{"role": "user", "content": r["prompt"]}],
            "task": r["task"],
            "reference": r["reference"],
        }
        for r in ROWS
    ]
    reward = trl_reward(rubric, judge=_judge(emulator), asynchronous=True)
    funcs = reward.per_key()
    assert all(isinstance(f, AsyncTRLReward) for f in funcs)
    trainer = trained(funcs, rows)

    for key in ("short", "friendly"):
        values = _logged(trainer, f"rewards/gradeloop_{key}/mean")
        assert len(values) == 2 and all(0.0 <= v <= 1.0 for v in values), key
    # two reward functions, one grading a step: requests as many as distinct completions
    assert len(reward.steps) == 2
    assert len(emulator.bodies) == sum(s.unique for s in reward.steps)
    # conversational completions arrive as one assistant message each: read as text
    assert SEEN and all(isinstance(c.task, str) for c in SEEN)


def test_a_judge_outage_is_none_to_trl_while_the_code_key_still_rewards(
    emulator: Emulator, rubric: Rubric, trained: Any
) -> None:
    emulator.responder = lambda body: http_error(500, "down", x_should_retry="false")
    reward = trl_reward(rubric, judge=_judge(emulator))
    trainer = trained(reward.per_key(), ROWS)

    code = _logged(trainer, "rewards/gradeloop_short/mean")
    judged = _logged(trainer, "rewards/gradeloop_friendly/mean")
    assert len(code) == 2 and all(0.0 <= v <= 1.0 for v in code)
    # every reward of the function None: TRL logs no mean at all (None), never a 0
    assert len(judged) == 2 and all(v is None or math.isnan(v) for v in judged)
    assert _logged(trainer, "gradeloop/unanswered") == [4.0, 4.0]
    assert all(s.unanswered == s.rollouts for s in reward.steps)


def test_the_whole_score_with_a_working_judge_is_never_nan(
    emulator: Emulator, rubric: Rubric, trained: Any, tmp_path: Path
) -> None:
    # the twin of the outage test: the same rubric and trainer, the judge answering
    emulator.responder = _verdict
    reward = trl_reward(rubric, judge=_judge(emulator), shape="gate_score")
    trainer = trained([*reward.per_key(), reward], ROWS)
    for name in ("rewards/gradeloop_friendly/mean", "rewards/gradeloop/mean"):
        assert all(not math.isnan(v) for v in _logged(trainer, name)), name
