"""run_loop and arun_loop take the same keywords, build the same LoopSettings from them,
and refuse a bad value the same way, before any model is called."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from typing import Any

import pytest

from gradeloop import Rubric, arun_loop, run_loop
from gradeloop.errors import InputError
from gradeloop.grading._registry import Registry
from gradeloop.loop._settings import LoopSettings
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

RUBRIC = Rubric.from_dict(
    {"criteria": [{"key": "a", "description": "A."}]}, registry=Registry(autoload=False)
)


def parameters(fn: Any) -> list[tuple[str, Any, Any, Any]]:
    """Each parameter's name, kind, default and annotation (as written)."""
    return [
        (p.name, p.kind, p.default, p.annotation)
        for p in inspect.signature(inspect.unwrap(fn)).parameters.values()
    ]


def test_both_drivers_take_the_same_keywords() -> None:
    assert parameters(run_loop) == parameters(arun_loop)
    names = [name for name, *_ in parameters(run_loop)]
    assert names[:4] == ["task", "rubric", "generator", "judge"]  # the DESIGN.md contract
    assert names[4:8] == ["max_rounds", "stagnation_rounds", "return_policy", "store"]


def test_the_checks_compare_names_kinds_defaults_and_annotations() -> None:
    def twin(task: str, rubric: Any, *, generator: Any, judge: Any, max_rounds: int = 4) -> None:
        pass

    def same(task: str, rubric: Any, *, generator: Any, judge: Any, max_rounds: int = 4) -> None:
        pass

    assert parameters(twin) == parameters(same)  # the passing twin
    assert parameters(twin) != parameters(run_loop)  # a default or a parameter apart


def test_every_setting_is_a_keyword_of_both_with_the_settings_default() -> None:
    params = {name: default for name, _, default, _ in parameters(run_loop)}
    for f in dataclasses.fields(LoopSettings):
        assert f.name in params, f"run_loop has no {f.name}="
        assert params[f.name] == f.default, f"{f.name}: run_loop's default is not the settings'"


def run(driver: str, **kw: Any) -> Any:
    models = {"generator": FakeGenerator(), "judge": FakeJudge(verdict(True, {"a": True}))}
    if driver == "sync":
        return run_loop("t", RUBRIC, **models, **kw)
    return asyncio.run(arun_loop("t", RUBRIC, **models, **kw))


BAD = [
    ({"max_rounds": "3"}, "max_rounds must be an integer, not '3'"),
    ({"max_rounds": True}, "max_rounds must be an integer"),
    ({"return_policy": "first"}, "return_policy must be 'best' or 'last', not 'first'"),
    ({"stagnation_rounds": -1}, "stagnation_rounds must be >= 0"),
    ({"similarity": 1.5}, r"similarity must be in \(0, 1\], not 1.5"),
    ({"token_budget": 0}, "token_budget must be positive, not 0"),
    ({"time_budget": -1.0}, "time_budget must be positive"),
    ({"max_cost_usd": 0}, "max_cost_usd must be positive"),
    ({"max_judge_failures": 0}, "max_judge_failures must be >= 1"),
    ({"select": "vote"}, "select must be 'score' or 'pairwise'"),
    ({"select": "pairwise", "return_policy": "last"}, "needs return_policy='best'"),
    ({"select_margin": 11}, "select_margin must be a number from 0 to 10"),
    ({"select_margin": True}, "select_margin must be a number"),
]


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize(("kw", "message"), BAD)
def test_a_bad_value_is_refused_the_same_way_by_both(
    driver: str, kw: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        run(driver, **kw)
    with pytest.raises(InputError, match=message):
        LoopSettings(**kw)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_an_unknown_keyword_is_refused_by_both(driver: str) -> None:
    with pytest.raises(TypeError, match="max_round"):
        run(driver, max_round=3)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_good_values_run_and_are_recorded_alike(driver: str, tmp_path: Any) -> None:
    from gradeloop import HistoryStore

    kw = {"max_rounds": 2, "select_margin": 2, "stagnation_rounds": None, "similarity": None}
    with HistoryStore(tmp_path / "h.db") as store:
        result = run(driver, store=store, **kw)
        config = store.loop_settings(result.loop_id)["config"]
    assert result.passed
    assert {k: config[k] for k in kw} == {**kw, "select_margin": 2.0}
    assert config == {**config, **LoopSettings(**kw).to_config()}
