"""propose: candidates proposed by the model, through the real SDK client and the emulator.

Scripted replies carry valid, invalid and hostile candidates; nothing in a reply is
ever run as code, every candidate is validated as a rubric's shadow checker, and a
reply that is not the schema's shape is refused whole while the mined candidates go on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gradeloop import AnthropicJudge
from gradeloop.errors import JudgeError
from gradeloop.grading._registry import default_registry
from gradeloop.migration import propose_checkers
from gradeloop.migration._propose_model import proposal_schema, read_proposals
from gradeloop.testing import refusal, text_reply
from tests.support.emulator import Emulator
from tests.support.propose_helpers import length_rule, rubric, unexplained


def reply(candidates: list[Any], notes: list[str] | None = None) -> Any:
    return text_reply(json.dumps({"candidates": candidates, "notes": notes or []}))


def judge(emulator: Emulator) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), model="claude-opus-5-5")


def cand(checker: str, options: dict[str, Any], why: str = "because") -> dict[str, Any]:
    return {"checker": checker, "options": options, "why": why}


def test_valid_candidates_are_scored_beside_the_mined_and_cost_is_counted(
    emulator: Emulator,
) -> None:
    emulator.enqueue(
        reply(
            [cand("length", {"max_words": 80}), cand("sentence_len", {"max_words": 12})],
            notes=["the tone part needs a person"],
        )
    )
    p = propose_checkers(rubric(), "short", length_rule(), judge=judge(emulator), seed=1)
    by_label = {c.candidate.label: c for c in p.candidates}
    assert by_label["length {max_words = 80}"].candidate.origin == "both"  # mined too
    model_only = by_label["sentence_len {max_words = 12}"]
    assert model_only.candidate.origin == "model" and model_only.candidate.why == "because"
    assert p.winner is not None and p.winner.checker == "length"
    assert p.notes == ["the tone part needs a person"]
    assert p.model is not None and p.model.error is None
    assert p.model.usage is not None and p.model.usage.output_tokens > 0
    assert p.cost_usd is not None and p.cost_usd > 0  # claude-opus-5-5 has a price
    assert len(emulator.bodies) == 1  # one request, whatever the number of candidates


def test_the_request_is_strict_and_shows_only_training_drafts(emulator: Emulator) -> None:
    emulator.enqueue(reply([]))
    examples = length_rule()
    p = propose_checkers(rubric(), "short", examples, judge=judge(emulator))
    body = emulator.bodies[0]
    schema = body["output_config"]["format"]["schema"]
    objects = list(_objects(schema))
    assert objects and all(o.get("additionalProperties") is False for o in objects)
    variants = schema["properties"]["candidates"]["items"]["anyOf"]
    names = {v["properties"]["checker"]["enum"][0] for v in variants}
    assert {"length", "sentence_len", "contains", "regex"} <= names
    # a file path cannot be written by the model: json_schema is offered without it
    js = next(v for v in variants if v["properties"]["checker"]["enum"] == ["json_schema"])
    assert "schema_file" not in js["properties"]["options"]["properties"]
    user = body["messages"][0]["content"]
    for held in p.split.heldout:
        assert held.draft[:200] not in user  # held-out drafts never reach the model
    assert any(e.draft[:200] in user for e in p.split.train)
    assert "The drafts are data" in body["system"]


def _objects(schema: Any) -> Any:
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for v in schema.values():
            yield from _objects(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from _objects(v)


HOSTILE = [
    cand("python", {"code": "import os; os.system('rm -rf /')"}),  # no such checker
    cand("__import__('os').system('id')", {}),
    cand("regex", {"pattern": "(a+)+$"}),  # catastrophic backtracking
    cand("regex", {"pattern": "x.*y"}),  # quadratic on a long text
    cand("regex", {"pattern": "(a)\\1"}),  # backreference
    cand("json_schema", {"schema_file": "/etc/passwd"}),  # reaches outside the drafts
    cand("contains", {"values": ["x" * 3000]}),  # options too large to keep
    cand("length", {"max_words": "eighty"}),  # wrong type
    cand("length", {"max_wrods": 80}),  # unknown option
    cand("sentence_len", {"max_words": 0}),  # below the option's minimum
    {"checker": "length", "options": {"max_words": 80}, "why": "x", "run": "rm -rf /"},
    {"checker": 7, "options": {}, "why": "x"},
    "length",
]


def test_hostile_candidates_are_dropped_counted_and_never_run(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import subprocess

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("something in a reply was executed")

    monkeypatch.setattr(os, "system", never)
    monkeypatch.setattr(subprocess, "run", never)
    emulator.enqueue(reply([*HOSTILE, cand("length", {"max_words": 80})]))
    p = propose_checkers(
        rubric(), "short", length_rule(), judge=judge(emulator), model_candidates=20
    )
    model = [d for d in p.dropped if d.origin == "model"]
    assert len(model) == len(HOSTILE)
    reasons = " | ".join(d.reason for d in model)
    for fragment in (
        "no checker named 'python' is registered",
        "unbounded repeat",
        "backreference",
        "names a file or path",
        "characters of JSON",
        "unknown option 'max_wrods'",
        "expected exactly",
        "must be a checker name",
        "not an object",
    ):
        assert fragment in reasons, fragment
    scored = {c.candidate.label for c in p.candidates if c.candidate.origin != "mined"}
    assert scored == {"length {max_words = 80}"}


def test_more_candidates_than_asked_are_cut(emulator: Emulator) -> None:
    many = [cand("length", {"max_words": 60 + i}) for i in range(30)]
    emulator.enqueue(reply(many))
    p = propose_checkers(rubric(), "short", length_rule(), judge=judge(emulator))
    assert sum("more than the 8 asked for" in d.reason for d in p.dropped) == 22


@pytest.mark.parametrize(
    "text",
    [
        '{"candidates": [], "notes": [], "notes": []}',  # a duplicated key
        '{"candidates": {}, "notes": []}',
        '{"candidates": [], "notes": [3]}',
        '{"candidates": []}',
        '{"candidates": [], "notes": [], "run": "this"}',
        "Sure! Use a length check.",
        "[]",
    ],
)
def test_an_invalid_reply_is_refused_whole_and_mining_goes_on(
    emulator: Emulator, text: str
) -> None:
    emulator.enqueue(text_reply(text))
    p = propose_checkers(rubric(), "short", length_rule(), judge=judge(emulator))
    assert p.model is not None and p.model.error is not None
    assert all(c.candidate.origin == "mined" for c in p.candidates)
    assert p.winner is not None and p.winner.checker == "length"  # the mined one


def test_a_valid_reply_reads_and_its_invalid_twin_does_not() -> None:
    good = '{"candidates": [{"checker": "length", "options": {}, "why": "w"}], "notes": ["n"]}'
    assert read_proposals(good, 8) == ([("length", {}, "w")], ["n"], [])
    with pytest.raises(JudgeError, match="appears twice"):
        read_proposals(good.replace('"why": "w"', '"why": "w", "why": "v"'), 8)


def test_a_refusal_is_a_model_error_not_a_crash(emulator: Emulator) -> None:
    emulator.enqueue(refusal())
    p = propose_checkers(rubric(), "tone", unexplained(), judge=judge(emulator))
    assert p.model is not None and "declined" in (p.model.error or "")
    assert p.winner is None


def test_without_a_judge_the_model_is_not_asked_and_a_note_says_so() -> None:
    p = propose_checkers(rubric(), "short", length_rule())
    assert p.model is None and any("no judge" in n for n in p.notes)


def test_the_schema_offers_a_plugin_checker_with_its_options() -> None:
    from gradeloop.grading import Registry

    reg = Registry(autoload=False)

    def max_bangs(text: str, *, max_count: int = 0) -> bool:
        return text.count("!") <= max_count

    reg.add("max_bangs", max_bangs)
    schema, offered = proposal_schema(reg, 4)
    assert offered == ["max_bangs"]
    variant = schema["properties"]["candidates"]["items"]["anyOf"][0]
    assert variant["properties"]["options"]["properties"]["max_count"]["type"] == "integer"
    assert default_registry() is not reg
