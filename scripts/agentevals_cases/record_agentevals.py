"""Record agentevals' trajectory-match test cases as data for gradeloop's conformance test.

Usage (from the gradeloop checkout, with its dev environment)::

    git -C AGENTEVALS archive COMMIT python | tar -x -C /tmp/agentevals
    python scripts/agentevals_cases/record_agentevals.py /tmp/agentevals/python COMMIT \
        > tests/data/agentevals_trajectory_cases.json

agentevals is not installed: its test module ``tests/test_trajectory.py`` is run with
its ``agentevals`` imports replaced by recorders. Each call of an evaluator made by
``create_trajectory_match_evaluator(...)`` records the match mode, the argument mode,
the per-tool overrides, the two trajectories (LangChain messages converted to their
OpenAI dict form with ``convert_to_openai_messages``) and the score the test asserts
(``== EvaluatorResult(score=...)``, ``["score"] == x`` or ``assert (not) ...["score"]``).

Then agentevals' own scorers (``agentevals/trajectory/*.py`` of the same checkout,
with the ``openevals`` helpers they import stubbed) are run on every recorded case, to
check the recording, and on :data:`DIFFERENCES`: trajectories built from agentevals'
fixtures on which gradeloop answers otherwise, each with the reason. The script
refuses to write a "difference" that agentevals does not in fact answer otherwise.
"""

from __future__ import annotations

import inspect
import itertools
import json
import sys
import types
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_openai_messages

CASES: list[dict[str, Any]] = []
LIVE_OVERRIDES: list[Any] = []  # the overrides themselves (callables too), per case
_CURRENT: dict[str, str] = {}


def _messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict) and "messages" in value:
        value = value["messages"]
    out = []
    for m in value:
        out.append(convert_to_openai_messages([m])[0] if isinstance(m, BaseMessage) else dict(m))
    return json.loads(json.dumps(out))


def _override(value: Any) -> Any:
    if isinstance(value, str | list):
        return value
    return {"callable": inspect.getsource(value).strip()}


class _Score:
    """What the test compares the score with is what it expects."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case

    def __eq__(self, other: object) -> bool:
        self.case["expected"] = bool(other)
        return True

    def __bool__(self) -> bool:
        # `assert result["score"]` expects True, `assert not result["score"]` False: the
        # asserting line says which
        line = "".join(inspect.stack()[1].code_context or ()).strip()
        expected = not line.startswith("assert not ")
        self.case["expected"] = expected
        return expected

    __hash__ = None  # type: ignore[assignment]


class _Result:
    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case

    def __eq__(self, other: object) -> bool:  # `== EvaluatorResult(key=..., score=...)`
        assert isinstance(other, dict)
        self.case["expected"] = bool(other["score"])
        return True

    def __getitem__(self, name: str) -> _Score:
        assert name == "score"
        return _Score(self.case)

    __hash__ = None  # type: ignore[assignment]


def create_trajectory_match_evaluator(
    *,
    trajectory_match_mode: str = "strict",
    tool_args_match_mode: str = "exact",
    tool_args_match_overrides: dict[str, Any] | None = None,
) -> Any:
    def evaluator(*, outputs: Any, reference_outputs: Any, **_: Any) -> _Result:
        case = {
            "id": f"{_CURRENT['test']}[{_CURRENT['params']}]#{_CURRENT['calls']}",
            "test": _CURRENT["test"],
            "mode": trajectory_match_mode,
            "tool_args_match_mode": tool_args_match_mode,
            "overrides": {k: _override(v) for k, v in (tool_args_match_overrides or {}).items()},
            "outputs": _messages(outputs),
            "reference_outputs": _messages(reference_outputs),
        }
        _CURRENT["calls"] = str(int(_CURRENT["calls"]) + 1)
        CASES.append(case)
        LIVE_OVERRIDES.append(tool_args_match_overrides)
        return _Result(case)

    return evaluator


def _stub_agentevals() -> None:
    root = types.ModuleType("agentevals")
    trajectory = types.ModuleType("agentevals.trajectory")
    match = types.ModuleType("agentevals.trajectory.match")
    typing_ = types.ModuleType("agentevals.types")
    match.create_trajectory_match_evaluator = create_trajectory_match_evaluator  # type: ignore[attr-defined]
    typing_.EvaluatorResult = lambda **kw: dict(kw)  # type: ignore[attr-defined]
    typing_.ChatCompletionMessage = lambda **kw: dict(kw)  # type: ignore[attr-defined]
    sys.modules.update(
        {
            "agentevals": root,
            "agentevals.trajectory": trajectory,
            "agentevals.trajectory.match": match,
            "agentevals.types": typing_,
        }
    )


def _parameter_sets(fn: Any) -> list[dict[str, Any]]:
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    grids = []
    for mark in marks:
        names = (
            [n.strip() for n in mark.args[0].split(",")]
            if isinstance(mark.args[0], str)
            else list(mark.args[0])
        )
        rows = [row if isinstance(row, tuple) else (row,) for row in mark.args[1]]
        grids.append([dict(zip(names, row, strict=True)) for row in rows])
    return [
        dict(kv for part in combo for kv in part.items()) for combo in itertools.product(*grids)
    ]


def _call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _turns(*steps: list[tuple[str, dict[str, Any]]] | str) -> list[dict[str, Any]]:
    """A weather trajectory in agentevals' fixture style: each step a list of parallel
    calls (each answered by a tool message) or an assistant text."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in SF?"}]
    n = 0
    for step in steps:
        if isinstance(step, str):
            out.append({"role": "assistant", "content": step})
            continue
        calls = [_call(name, args, f"call_{n + i}") for i, (name, args) in enumerate(step)]
        n += len(calls)
        out.append({"role": "assistant", "content": "", "tool_calls": calls})
        out += [{"role": "tool", "tool_call_id": c["id"], "content": "80 and sunny"} for c in calls]
    return out


SF = ("get_weather", {"city": "SF"})
LONDON = ("get_weather", {"city": "London"})
DIFFERENCES: list[dict[str, Any]] = [
    {
        "id": "D1-strict-compares-calls-not-messages",
        "why": "strict compares the tool calls made, not the message list: a text message "
        "more (or fewer) is not a different trajectory. agentevals' strict mode wants "
        "the same number of messages with the same roles. gradeloop counts messages "
        "with step_count.",
        "mode": "strict",
        "tool_args_match_mode": "exact",
        "outputs": _turns("Let me look that up.", [SF], "It is 80 and sunny in SF."),
        "reference_outputs": _turns([SF], "It is 80 and sunny in SF."),
        "gradeloop": True,
    },
    {
        "id": "D2-strict-order-not-grouping",
        "why": "strict wants the same calls in the same order; how the agent grouped them "
        "into messages is not part of it (calls made together in one message may come in "
        "any order among themselves). agentevals wants the same grouping.",
        "mode": "strict",
        "tool_args_match_mode": "exact",
        "outputs": _turns([SF], [LONDON], "Done."),
        "reference_outputs": _turns([SF, LONDON], "Done."),
        "gradeloop": True,
    },
    {
        "id": "D3-maximum-pairing",
        "why": "calls are paired with expected calls by a maximum matching, so the answer "
        "never depends on the order calls are listed in. agentevals pairs first-fit: the "
        "first expected call takes the first call that fits, and the second expected call "
        "then finds none although a pairing of both exists.",
        "mode": "superset",
        "tool_args_match_mode": "superset",
        "outputs": _turns([("get_weather", {"city": "SF", "units": "F"})], [SF], "Done."),
        "reference_outputs": _turns([SF], [("get_weather", {"city": "SF", "units": "F"})], "Done."),
        "gradeloop": True,
    },
    {
        "id": "D4-args-mode-means-one-thing",
        "why": "the args mode says the same in every trajectory mode: `superset` means the "
        "call made has every expected argument (and maybe more). agentevals' subset mode "
        "calls its argument matcher with the two sides swapped, so there `superset` means "
        "the call made has no argument beyond the expected ones.",
        "mode": "subset",
        "tool_args_match_mode": "superset",
        "outputs": _turns([("get_weather", {"city": "SF", "units": "F"})], "Done."),
        "reference_outputs": _turns([SF], "Done."),
        "gradeloop": True,
    },
    {
        "id": "D5-nested-containment",
        "why": "subset / superset arguments compare nested objects the same way, key by key; "
        "agentevals compares top-level keys only, and nested values must be equal.",
        "mode": "strict",
        "tool_args_match_mode": "superset",
        "outputs": _turns(
            [("get_weather", {"city": "SF", "when": {"day": "today", "tz": "PT"}})], "Done."
        ),
        "reference_outputs": _turns(
            [("get_weather", {"city": "SF", "when": {"day": "today"}})], "Done."
        ),
        "gradeloop": True,
    },
    {
        "id": "D6-json-equality",
        "why": "arguments are compared as JSON: true is not 1 (1 and 1.0 are one number). "
        "agentevals compares Python values, where True == 1.",
        "mode": "strict",
        "tool_args_match_mode": "exact",
        "outputs": _turns([("get_weather", {"city": "SF", "metric": 1})], "Done."),
        "reference_outputs": _turns([("get_weather", {"city": "SF", "metric": True})], "Done."),
        "gradeloop": False,
    },
]


def _stub_openevals() -> None:
    """What agentevals' trajectory modules import from openevals, reduced to what runs."""
    types_ = types.ModuleType("openevals.types")
    utils = types.ModuleType("openevals.utils")
    for name in ("ChatCompletionMessage", "EvaluatorResult", "FewShotExample",
                 "SimpleEvaluator", "SimpleAsyncEvaluator"):  # fmt: skip
        setattr(types_, name, dict)
    for name in ("_run_evaluator", "_arun_evaluator", "_normalize_final_app_outputs_as_string",
                 "_chat_completion_messages_to_string"):  # fmt: skip
        setattr(utils, name, lambda *a, **k: None)
    sys.modules.update({"openevals": types.ModuleType("openevals"),
                        "openevals.types": types_, "openevals.utils": utils})  # fmt: skip


def _real_scorers(package_root: str) -> dict[str, Any]:
    """agentevals' scorer per mode, from its source (imported under its own name)."""
    for name in [m for m in sys.modules if m == "agentevals" or m.startswith("agentevals.")]:
        del sys.modules[name]  # the recorders are done; the real package takes the name
    _stub_openevals()
    for name, folder in (("agentevals", ""), ("agentevals.trajectory", "/trajectory")):
        bare = types.ModuleType(name)  # a package whose __init__ (the LLM judges) is not run
        bare.__path__ = [f"{package_root}/agentevals{folder}"]
        sys.modules[name] = bare
    import importlib

    return {
        mode: importlib.import_module(f"agentevals.trajectory.{mode}")._scorer
        for mode in ("strict", "unordered", "subset", "superset")
    }


def _score(scorers: dict[str, Any], case: dict[str, Any], overrides: Any = None) -> bool:
    return bool(
        scorers[case["mode"]](
            outputs=case["outputs"],
            reference_outputs=case["reference_outputs"],
            tool_args_match_mode=case["tool_args_match_mode"],
            tool_args_match_overrides=overrides,
        )
    )


def main(package_root: str, commit: str) -> None:
    _stub_agentevals()
    namespace: dict[str, Any] = {"__name__": "agentevals_test_trajectory"}
    path = f"{package_root}/tests/test_trajectory.py"
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), namespace)  # agentevals' own test module
    for name, fn in namespace.items():
        if not name.startswith("test_") or not callable(fn):
            continue
        for params in _parameter_sets(fn) or [{}]:
            _CURRENT.update(test=name, params=",".join(str(v) for v in params.values()), calls="0")
            fn(**params)
    missing = [c["id"] for c in CASES if "expected" not in c]
    assert not missing, f"no expected score recorded for {missing}"
    scorers = _real_scorers(package_root)
    for case, live in zip(CASES, LIVE_OVERRIDES, strict=True):
        assert _score(scorers, case, live) is case["expected"], case["id"]
    for diff in DIFFERENCES:
        diff["agentevals"] = _score(scorers, diff)
        assert diff["agentevals"] is not diff["gradeloop"], f"{diff['id']} is no difference"
    json.dump(
        {
            "source": "https://github.com/langchain-ai/agentevals "
            "(python/tests/test_trajectory.py)",
            "commit": commit,
            "licence": "MIT (Copyright (c) 2025 LangChain, Inc.); see tests/data/README.md",
            "how": "scripts/agentevals_cases/record_agentevals.py: agentevals' trajectory-match "
            "tests run with its imports replaced by recorders; each evaluator call gives one "
            "case: match mode, argument mode, per-tool overrides (callables kept as their "
            "source text), both trajectories as OpenAI message dicts, the asserted score "
            "(checked against agentevals' own scorers). 'differences': trajectories built "
            "from its fixtures where gradeloop answers otherwise, with agentevals' answer "
            "(from its scorers) and why.",
            "cases": CASES,
            "differences": DIFFERENCES,
        },
        sys.stdout,
        indent=1,
        ensure_ascii=False,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
