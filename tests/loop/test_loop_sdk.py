"""The loop through the real model classes: a seed-style fake client, and the
real ``anthropic`` client against the Messages-API emulator."""

from __future__ import annotations

import json
import types
from typing import Any

import pytest

from gradeloop import (
    AnthropicGenerator,
    AnthropicJudge,
    NotAnAnswer,
    Rubric,
    Verdict,
    optimize,
    run_loop,
)
from gradeloop.grading import Registry
from gradeloop.testing import text_reply, verdict_reply
from tests.support.emulator import Emulator

KEYS = ("api_cited", "code_runs", "errors_named", "sentence_len", "no_invention")


@pytest.fixture
def rubric() -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": k, "description": f"{k} holds"} for k in KEYS]},
        registry=Registry(autoload=False),
    )


# -- a fake client shaped like the seed's: SimpleNamespace replies, no SDK types ----------


def block(kind: str, text: str = "") -> types.SimpleNamespace:
    b = types.SimpleNamespace(type=kind)
    if kind == "text":
        b.text = text  # a thinking block has no .text at all
    return b


def reply(stop_reason: str, *blocks: types.SimpleNamespace) -> types.SimpleNamespace:
    return types.SimpleNamespace(stop_reason=stop_reason, content=list(blocks), stop_details=None)


class SeedFake:
    def __init__(self, n_drafts: int, verdicts: list[Verdict]) -> None:
        self.replies = [reply("end_turn", block("text", f"d{i}")) for i in range(n_drafts)]
        self.verdicts = list(verdicts)
        self.calls: list[str] = []
        self.judged: list[str] = []
        self.messages = types.SimpleNamespace(create=self.create, parse=self.parse)

    def create(self, **kw: Any) -> Any:
        self.calls.append("generate")
        return self.replies.pop(0)

    def parse(self, **kw: Any) -> Any:
        self.calls.append("evaluate")
        self.judged.append(kw["messages"][0]["content"])
        return types.SimpleNamespace(parsed_output=self.verdicts.pop(0))


def v(passed: bool, met: dict[str, bool] | None = None) -> Verdict:
    return Verdict(
        reasoning="cited section 4.2",
        passed=passed,
        criteria_met=dict.fromkeys(KEYS, True) if met is None else met,
        issues=["add caveats", "cite section"],
    )


FAILS = [v(False, dict.fromkeys(KEYS, False))] * 9


def seed_optimize(client: SeedFake, rubric: Rubric, cap: int = 3) -> tuple[str, bool]:
    return optimize(
        "t",
        rubric,
        generator=AnthropicGenerator(client),
        judge=AnthropicJudge(client),
        max_rounds=cap,
    )


def test_seed_guard_the_returned_draft_was_judged_and_no_call_is_wasted(rubric: Rubric) -> None:
    client = SeedFake(9, FAILS)
    assert seed_optimize(client, rubric) == ("d2", False)
    assert client.calls == ["generate", "evaluate"] * 3
    assert "d2" in client.judged[-1]


@pytest.mark.parametrize(
    "met", [{}, {"api_cited": True}, dict.fromkeys(KEYS, True) | {"no_invention": False}]
)
def test_seed_guard_the_claim_needs_the_evidence(rubric: Rubric, met: dict[str, bool]) -> None:
    client = SeedFake(9, [v(True, met)] * 3)
    assert seed_optimize(client, rubric) == ("d2", False)


def test_seed_guard_and_a_real_pass_passes(rubric: Rubric) -> None:
    client = SeedFake(1, [v(True)])
    assert seed_optimize(client, rubric, cap=1) == ("d0", True)


@pytest.mark.parametrize("cap", [0, -1, 1, 3])
def test_seed_guard_the_cap(rubric: Rubric, cap: int) -> None:
    client = SeedFake(9, list(FAILS))
    _, ok = seed_optimize(client, rubric, cap)
    assert ok is False and len(client.calls) == max(1, 2 * cap)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (reply("refusal"), "declined"),
        (reply("max_tokens", block("text", "half a dra")), "max_tokens"),
        (reply("end_turn", block("thinking")), "no text block"),
    ],
)
def test_seed_guard_replies_that_are_not_drafts(
    rubric: Rubric, bad: types.SimpleNamespace, message: str
) -> None:
    client = SeedFake(0, [])
    client.replies = [bad]
    with pytest.raises(NotAnAnswer, match=message):
        AnthropicGenerator(client).generate("t")


# -- the real client against the emulator ------------------------------------------------


def wire_verdict(passed: bool, met: bool) -> Any:
    return verdict_reply(
        {
            "reasoning": "checked each criterion",
            "criteria_met": dict.fromkeys(KEYS, met),
            "passed": passed,
            "issues": ["cite 4.2 for the amount format"],
        }
    )


def test_the_whole_loops_request_sequence_at_cap_3(emulator: Emulator, rubric: Rubric) -> None:
    emulator.enqueue(
        text_reply("draft zero"),
        wire_verdict(False, False),
        text_reply("draft one"),
        wire_verdict(False, False),
        text_reply("draft two"),
        wire_verdict(False, False),
    )
    client = emulator.client()
    result = run_loop(
        "Write the payments guide.",
        rubric,
        generator=AnthropicGenerator(client),
        judge=AnthropicJudge(client),
        max_rounds=3,
        stagnation_rounds=0,
    )
    assert (result.draft, result.passed, result.stop_reason) == ("draft two", False, "max_rounds")
    bodies = emulator.bodies
    kinds = ["evaluate" if "output_config" in b else "generate" for b in bodies]
    assert kinds == ["generate", "evaluate"] * 3
    judge_bodies = [b for b in bodies if "output_config" in b]
    # fresh context every round: one user message, the same cached system block
    assert all(len(b["messages"]) == 1 for b in judge_bodies)
    assert len({json.dumps(b["system"], sort_keys=True) for b in judge_bodies}) == 1
    assert judge_bodies[0]["system"][0]["cache_control"]["type"] == "ephemeral"
    assert "draft two" in judge_bodies[-1]["messages"][0]["content"]
    revision = bodies[2]["messages"][0]["content"]
    assert "draft zero" in revision and "- cite 4.2 for the amount format" in revision
    assert "['" not in revision
    for key in KEYS:  # the generator sees every criterion
        assert f"{key}: {key} holds" in bodies[0]["messages"][0]["content"]
    assert result.usage.output_tokens > 0
    assert all(it.usage.total_input > 0 for it in result.history)


def test_code_keys_never_reach_the_judge_schema(emulator: Emulator) -> None:
    reg = Registry(autoload=False)
    reg.add("short", lambda text: len(text) < 50)
    mixed = Rubric.from_dict(
        {
            "criteria": [
                {"key": "tone", "description": "Warm."},
                {"key": "brief", "description": "Short.", "checker": "short"},
            ]
        },
        registry=reg,
    )
    emulator.enqueue(
        text_reply("hi there"),
        verdict_reply(
            {"reasoning": "warm", "criteria_met": {"tone": True}, "passed": True, "issues": []}
        ),
    )
    client = emulator.client()
    result = run_loop(
        "greet",
        mixed,
        generator=AnthropicGenerator(client),
        judge=AnthropicJudge(client),
        registry=reg,
    )
    assert result.passed is True and result.stop_reason == "passed"
    schema = emulator.bodies[1]["output_config"]["format"]["schema"]
    assert "brief" not in json.dumps(schema)
    assert "Short." in emulator.bodies[0]["messages"][0]["content"]
