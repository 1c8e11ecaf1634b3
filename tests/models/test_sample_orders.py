"""samples=k shows the criteria in a seeded shuffle per sample, recorded, and each order's
system prompt stays byte-identical from draft to draft (so it still caches)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gradeloop import AnthropicJudge, Criterion, grade
from gradeloop.judging._orders import sample_order
from gradeloop.testing import verdict_reply
from tests.support.emulator import Emulator

TEXT = "The guide explains this requirement in full detail with worked examples. " * 12
CRITERIA = [Criterion(key=f"rule_{i}", description=TEXT) for i in range(6)]
RUBRIC = {"criteria": [c.model_dump(exclude_defaults=True) for c in CRITERIA]}
REPLY = {
    "reasoning": "r",
    "criteria_met": {c.key: True for c in CRITERIA},
    "passed": True,
    "issues": [],
}


def keys_in(system: str) -> list[str]:
    block = system[system.index("<criteria>") : system.index("</criteria>")]
    return re.findall(r"^(rule_\d+):", block, flags=re.MULTILINE)


def judge(emulator: Emulator, **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), model="claude-test", **kw)


def test_each_sample_shows_its_own_order_and_the_orders_are_recorded(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(REPLY)
    ev = grade("draft one", RUBRIC, judge=judge(emulator, samples=3))
    orders = sorted((keys_in(b["system"][0]["text"]) for b in emulator.bodies), key=str)
    rubric_order = [c.key for c in CRITERIA]
    assert rubric_order in orders  # sample 0 keeps the rubric's order
    assert len({tuple(o) for o in orders}) == 3  # and the orders differ
    # the schema follows the prompt's order, so the answers are written in it too
    for body in emulator.bodies:
        props = list(
            body["output_config"]["format"]["schema"]["$defs"]["CriteriaMet"]["properties"]
        )
        assert props == keys_in(body["system"][0]["text"])
    positions = ev["rule_0"].judging["positions"]  # type: ignore[index]
    assert positions[0] == 0 and len(positions) == 3
    assert ev.to_json()["criteria"][0]["judging"] == {"positions": positions}


def test_the_orders_are_the_same_for_every_draft_so_each_one_caches(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(REPLY)
    j = judge(emulator, samples=3)
    grade("draft one", RUBRIC, judge=j)
    first = {b["system"][0]["text"] for b in emulator.bodies}
    grade("draft two", RUBRIC, judge=j)
    second = {b["system"][0]["text"] for b in emulator.bodies[3:]}
    assert first == second and len(first) == 3
    later = [c.usage for c in j.calls[3:]]
    assert all(
        u.cache_read_input_tokens > 1024 and u.cache_creation_input_tokens == 0 for u in later
    )
    assert (
        sum(c.usage.cache_creation_input_tokens > 0 for c in j.calls[:3]) == 3
    )  # one write per order


def test_shuffle_off_keeps_one_order_and_one_prompt(emulator: Emulator) -> None:
    emulator.responder = lambda body: verdict_reply(REPLY)
    grade("draft", RUBRIC, judge=judge(emulator, samples=3, shuffle=False))
    assert len({b["system"][0]["text"] for b in emulator.bodies}) == 1


def test_another_seed_gives_other_orders(emulator: Emulator) -> None:
    a = [tuple(c.key for c in sample_order(CRITERIA, i, seed=0)) for i in range(1, 4)]
    b = [tuple(c.key for c in sample_order(CRITERIA, i, seed=1)) for i in range(1, 4)]
    assert a != b
    assert judge(emulator, samples=2, seed=1).system_prompt(CRITERIA, 1) != judge(
        emulator, samples=2
    ).system_prompt(CRITERIA, 1)


@given(st.integers(2, 8), st.integers(1, 20), st.integers(0, 1000))
def test_a_shuffled_order_is_a_permutation_that_differs_and_repeats(
    n: int, sample: int, seed: int
) -> None:
    criteria = [Criterion(key=f"k{i}", description="d") for i in range(n)]
    order = sample_order(criteria, sample, seed=seed)
    assert sorted(c.key for c in order) == sorted(c.key for c in criteria)
    assert list(order) != criteria  # never the rubric order again
    assert order == sample_order(criteria, sample, seed=seed)  # the same every time
    assert list(sample_order(criteria, 0, seed=seed)) == criteria
