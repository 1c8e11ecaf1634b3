"""One rubric as gate, eval and reward: a rubric as a reinforcement-learning reward function.

The rubric your evals gate on scores the rollouts of a GRPO-style trainer, unchanged:
code keys (format, code that runs, required facts) and judge keys land in one grade, and
the reward is read off it (the weighted score, the gate, or both)::

    from gradeloop import AnthropicJudge, Rubric
    from gradeloop.rewards import trl_reward, verl_reward

    rubric = Rubric.load("rubric.toml")
    reward = trl_reward(rubric, judge=AnthropicJudge())  # GRPOTrainer(reward_funcs=reward)
    compute_score = verl_reward(rubric, judge=AnthropicJudge())  # verl's custom_reward_function

Where the judge could not answer, the reward is None (TRL leaves it out), never a silent
0. ``audit=`` with ``audit_fraction=`` grades a seeded sample of every step with a second
judge as well: the reward-hacking watch. :func:`import_graders` turns OpenAI grader
configs into a rubric (``gradeloop import-graders``). docs/rewards.md has the whole story.
Nothing here imports TRL, verl or torch.
"""

from ._graders import import_graders
from ._rollouts import Rollout
from ._steps import RewardStep
from ._trl import AsyncTRLReward, TRLReward, trl_reward
from ._verl import AsyncVerlReward, VerlReward, verl_reward
from ._watch import RewardWatch, WatchStep

__all__ = [
    "AsyncTRLReward",
    "AsyncVerlReward",
    "RewardStep",
    "RewardWatch",
    "Rollout",
    "TRLReward",
    "VerlReward",
    "WatchStep",
    "import_graders",
    "trl_reward",
    "verl_reward",
]
