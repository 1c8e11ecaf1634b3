"""The reward-hacking watch: a seeded sample audited, the gap and its trend, the records."""

from __future__ import annotations

import asyncio
import warnings
from types import SimpleNamespace
from typing import Any

import pytest

from gradeloop import HistoryStore
from gradeloop.errors import GradeloopWarning
from gradeloop.rewards import trl_reward, verl_reward
from gradeloop.rewards._rewarder import STREAM_STEP
from tests.rewards.fakes import RUBRIC, WordJudge, columns

COMPLETIONS = [f"hello number {i}" for i in range(20)]


class FlatteredJudge(WordJudge):
    """The training judge: every key met, whatever the draft says."""

    def __init__(self) -> None:
        super().__init__("trainee-judge", unmet_word="\0never")


def _step(reward: Any, n: int, completions: list[str] = COMPLETIONS) -> list[float | None]:
    state = SimpleNamespace(global_step=n)
    return reward(  # type: ignore[no-any-return]
        prompts=["p"] * len(completions),
        completions=list(completions),
        **{**columns(len(completions)), "trainer_state": state},
    )


def test_a_seeded_fraction_of_each_step_is_audited() -> None:
    audit = WordJudge("audit-judge")
    reward = trl_reward(RUBRIC, judge=WordJudge(), audit=audit, audit_fraction=0.1, seed=3)
    _step(reward, 0)
    _step(reward, 1)
    assert len(audit.drafts) == 4  # 10 % of 20, twice
    again = WordJudge("audit-judge")
    twin = trl_reward(RUBRIC, judge=WordJudge(), audit=again, audit_fraction=0.1, seed=3)
    _step(twin, 0)
    _step(twin, 1)
    assert sorted(again.drafts) == sorted(audit.drafts)  # the same seed: the same sample
    other = WordJudge("audit-judge")
    _step(trl_reward(RUBRIC, judge=WordJudge(), audit=other, audit_fraction=0.1, seed=4), 0)
    assert sorted(other.drafts) != sorted(audit.drafts[:2])


def test_the_figures_compare_the_two_judges_on_the_same_rollouts() -> None:
    reward = trl_reward(
        RUBRIC, judge=FlatteredJudge(), audit=WordJudge("audit", "hello"), audit_fraction=0.25
    )
    _step(reward, 0)
    step = reward.steps[0].audit
    assert step is not None and step.audited == 5 and step.rollouts == 20
    # the training judge finds every draft polite (1.0); the audit judge none (0.5)
    assert step.train_reward == 1.0 and step.audit_reward == 0.5
    assert step.gap == pytest.approx(0.5)
    assert step.agreement == {"polite": 0.0}
    assert step.unanswered == {"train": 0, "audit": 0}
    assert step.run_id is None  # no store given
    metrics = reward.steps[0].metrics()
    assert metrics["gradeloop/audit/gap"] == pytest.approx(0.5)
    assert metrics["gradeloop/audit/agreement/polite"] == 0.0


def test_agreeing_judges_show_no_gap() -> None:
    reward = trl_reward(RUBRIC, judge=WordJudge("a"), audit=WordJudge("b"), audit_fraction=0.5)
    _step(reward, 0, [*COMPLETIONS[:5], "so rude", "rude again"])
    step = reward.watch.steps[0]
    assert step.gap == 0.0 and step.agreement == {"polite": 1.0}


class Drifting(WordJudge):
    """An audit judge that finds more and more drafts impolite, step by step."""

    def __init__(self) -> None:
        super().__init__("audit-judge")
        self.step = 0

    def evaluate(self, task: str, draft: str, criteria: Any) -> Any:
        number = int(draft.rsplit(" ", 1)[1])
        verdict = super().evaluate(task, draft, criteria)
        if number < self.step * 4:
            met = dict.fromkeys(verdict.criteria_met, False)
            return verdict.model_copy(update={"criteria_met": met, "passed": False})
        return verdict


def test_a_widening_gap_warns_once_and_a_steady_one_does_not() -> None:
    audit = Drifting()
    reward = trl_reward(RUBRIC, judge=FlatteredJudge(), audit=audit, audit_fraction=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(5):
            audit.step = n
            _step(reward, n)
    gaps = [s.gap for s in reward.watch.steps]
    assert gaps == sorted(gaps) and gaps[-1] > gaps[0]
    assert [s.widening for s in reward.watch.steps][-1] is True
    mine = [w for w in caught if issubclass(w.category, GradeloopWarning)]
    assert len(mine) == 1 and "reward watch" in str(mine[0].message)
    assert "docs/rewards.md" in str(mine[0].message)

    steady = trl_reward(RUBRIC, judge=WordJudge("a"), audit=WordJudge("b"), audit_fraction=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(5):
            _step(steady, n)
    assert not any(s.widening for s in steady.watch.steps)


def test_the_records_land_in_the_history(tmp_path: Any) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        reward = trl_reward(
            RUBRIC,
            judge=FlatteredJudge(),
            audit=WordJudge("audit", "hello"),
            audit_fraction=0.1,
            store=store,
            name="greet-run",
        )
        _step(reward, 0)
        step = reward.watch.steps[0]
        assert step.run_id is not None
        run = store.grading_run(step.run_id)
        assert run["origin"] == "reward-audit" and len(run["drafts"]) == 2
        figures = run["config"]["reward_watch"]
        assert figures["watch"] == "greet-run" and figures["step"] == 0
        assert figures["gap"] == 0.5 and figures["agreement"] == {"polite": 0.0}
        assert run["config"]["audit_judge"] == "audit"
        shadows = store.shadow_results(key="polite")
        assert len(shadows) == 2 and all(s.agree is False for s in shadows)
        assert {s.primary.filled_by for s in shadows} == {"trainee-judge"}
        assert {s.shadow.filled_by for s in shadows} == {"audit"}


def test_an_audit_judge_outage_is_counted_not_compared() -> None:
    reward = trl_reward(
        RUBRIC, judge=WordJudge("a"), audit=WordJudge("b", "\0"), audit_fraction=1.0
    )
    _step(reward, 0, ["hello", "please fail"])
    step = reward.watch.steps[0]
    assert step.unanswered == {"train": 1, "audit": 1}
    assert step.agreement == {"polite": 1.0}  # only the rollout both judges answered


def test_streamed_rollouts_are_audited_in_steps() -> None:
    audit = WordJudge("audit", "hello")
    compute_score = verl_reward(
        RUBRIC, judge=FlatteredJudge(), audit=audit, audit_fraction=1.0, asynchronous=True
    )

    async def many() -> list[Any]:
        texts = [f"hello {i}" for i in range(STREAM_STEP + 3)]
        return await asyncio.gather(*(compute_score("src", t, "", {}) for t in texts))

    asyncio.run(many())
    watch = compute_score.__self__.watch
    assert [s.audited for s in watch.steps] == [STREAM_STEP]
    last = compute_score.__self__.flush()
    assert last is not None and last.audited == 3 and last.gap == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"audit_fraction": 0.1}, "audit_fraction needs an audit judge"),
        ({"audit": WordJudge(), "audit_fraction": 0.0}, r"audit_fraction must be in \(0, 1\]"),
        ({"audit": WordJudge(), "audit_fraction": 1.5}, r"audit_fraction must be in \(0, 1\]"),
        ({"audit": WordJudge(), "audit_fraction": "5%"}, "audit_fraction must be a number"),
    ],
)
def test_bad_watch_settings_name_the_argument(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        trl_reward(RUBRIC, judge=WordJudge(), **kwargs)


def test_auditing_a_rubric_without_judge_keys_is_refused() -> None:
    from tests.rewards.fakes import CODE_ONLY

    with pytest.raises(ValueError, match="this rubric has none"):
        trl_reward(CODE_ONLY, audit=WordJudge(), audit_fraction=0.5)
    assert trl_reward(CODE_ONLY)(prompts=["p"], completions=["hello"]) == [1.0]  # the twin
