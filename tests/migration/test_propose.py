"""propose_checkers on generated drafts whose verdicts follow a known rule (no model).

A length rule, a required phrase and a forbidden phrase must each be found, with
the rule's own option, and judged on the held-out drafts; verdicts no checker can
explain must leave no winner. Also: the evidence's guards (too few drafts, with how
many more), the seeded split, the validation of every candidate as a rubric's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Rubric
from gradeloop.errors import InputError, NotEnoughEvidenceError, RubricError
from gradeloop.grading._registry import default_registry
from gradeloop.migration import CandidateResult, LabelledItem, Proposal, propose_checkers
from gradeloop.migration._propose_candidates import bind
from gradeloop.migration._propose_cv import NEAR
from gradeloop.migration._propose_evidence import (
    MIN_DRAFTS,
    Example,
    HistoryDraft,
    examples_from,
    require_enough,
    split,
)
from gradeloop.migration._propose_write import write_shadow
from tests.support.propose_helpers import (
    forbidden_phrase,
    length_rule,
    required_phrase,
    rubric,
    unexplained,
)


def propose(key: str, examples: list[Example], **kwargs: Any) -> Proposal:
    return propose_checkers(rubric(), key, examples, use_model=False, **kwargs)


def test_a_length_rule_is_found_with_its_own_threshold() -> None:
    p = propose("short", length_rule())
    assert p.winner is not None
    assert (p.winner.checker, dict(p.winner.options)) == ("length", {"max_words": 80})
    assert p.winner.heldout.kappa == 1.0 and p.winner.heldout.n == len(p.split.heldout)
    assert p.winner.heldout.coverage == 1.0 and p.winner.heldout.false_failure_rate == 0.0


def test_a_required_phrase_is_found() -> None:
    p = propose("refund", required_phrase())
    assert p.winner is not None and p.winner.checker == "contains"
    assert list(p.winner.options["values"]) == ["refund policy"]


def test_a_forbidden_phrase_is_found() -> None:
    p = propose("no_ai", forbidden_phrase())
    assert p.winner is not None and p.winner.checker == "not_contains"
    assert list(p.winner.options["values"]) == ["as an ai"]


def test_verdicts_no_checker_can_explain_leave_no_winner() -> None:
    p = propose("tone", unexplained())
    assert p.candidates  # plenty were tried
    assert p.winner is None
    assert p.best is not None and (p.best.heldout.kappa or 0) < 0.8
    assert p.to_json()["winner"] is None


def test_min_kappa_decides_the_winner_on_held_out_only() -> None:
    p = propose("tone", unexplained(), min_kappa=0.01)
    best = p.best
    assert best is not None
    # chosen on train by cross-validation (within NEAR of the best cv, the simplest),
    # whatever the held-out says
    assert best.cv is not None
    assert best.cv >= max(c.cv or -2 for c in p.candidates) - NEAR
    expected = best if (best.heldout.kappa or -1) >= 0.01 else None
    assert p.winner is expected


def test_the_split_is_seeded_stratified_and_disjoint() -> None:
    ex = length_rule()
    a, b, c = split(ex, 3), split(ex, 3), split(ex, 4)
    assert a == b and a != c
    ids = [e.output_id for e in (*a.train, *a.heldout)]
    assert sorted(ids) == sorted(e.output_id for e in ex) and len(set(ids)) == len(ids)
    for part in (a.train, a.heldout):
        assert {e.met for e in part} == {True, False}


@given(met=st.integers(5, 60), unmet=st.integers(5, 60), seed=st.integers(0, 2**32))
def test_every_split_keeps_both_verdicts_on_both_sides(met: int, unmet: int, seed: int) -> None:
    ex = [Example(str(i), "", "x", i < met) for i in range(met + unmet)]
    sp = split(ex, seed)
    assert len(sp.train) + len(sp.heldout) == met + unmet
    for part in (sp.train, sp.heldout):
        assert sum(e.met for e in part) >= 2 and sum(not e.met for e in part) >= 2
    assert sum(e.met for e in sp.train) >= 3 and sum(not e.met for e in sp.train) >= 3


@pytest.mark.parametrize(
    ("met", "unmet", "more", "fragment"),
    [
        (10, 4, 6, "add 6 more, of which at least 1 unmet"),
        (3, 3, 14, "add 14 more, of which at least 2 met and 2 unmet"),
        (18, 1, 4, "add 4 more, of which at least 4 unmet"),
        (12, 7, 1, "add 1 more"),
    ],
)
def test_too_little_evidence_says_how_many_more(
    met: int, unmet: int, more: int, fragment: str
) -> None:
    ex = [Example(str(i), "", "x", i < met) for i in range(met + unmet)]
    with pytest.raises(NotEnoughEvidenceError, match=fragment) as info:
        require_enough(ex, "k")
    assert info.value.more == more and info.value.have["unmet"] == unmet
    with pytest.raises(NotEnoughEvidenceError):
        propose("tone", ex)


def test_just_enough_evidence_passes() -> None:
    ex = [Example(str(i), "", "x", i < 15) for i in range(MIN_DRAFTS)]
    require_enough(ex, "k")  # 15 met, 5 unmet: exactly enough


def test_labels_and_stored_verdicts_become_examples() -> None:
    r = Rubric.from_dict(
        {
            "criteria": [
                {"key": "k", "description": "d"},
                {"key": "s", "description": "d", "scale": "score", "threshold": 6},
            ]
        }
    )
    items = [
        LabelledItem("a", "t", "x", {"k": True, "s": 6.0}),
        LabelledItem("b", "t", "y", {"s": 5.0}),
        HistoryDraft("run", "c", "t", "z", {"k": False}),
        HistoryDraft("run", "d", "t", "w", {"other": True}),
    ]
    got, without = examples_from(items, r["k"])
    assert [(e.output_id, e.met) for e in got] == [("a", True), ("c", False)] and without == 2
    scored, _ = examples_from(items, r["s"])
    assert [(e.output_id, e.met) for e in scored] == [("a", True), ("b", False)]
    with pytest.raises(TypeError, match="not str"):
        examples_from(["a draft"], r["k"])


def test_a_key_the_rubric_lacks_or_a_checker_fills_is_refused() -> None:
    r = Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "short",
                    "description": "d",
                    "checker": "length",
                    "options": {"max_words": 5},
                },
                {"key": "tone", "description": "d"},
            ]
        }
    )
    with pytest.raises(InputError, match="did you mean 'tone'"):
        propose_checkers(r, "tones", length_rule(), use_model=False)
    with pytest.raises(InputError, match="filled by the checker 'length' already"):
        propose_checkers(r, "short", length_rule(), use_model=False)


def test_candidates_are_validated_exactly_as_a_rubrics_shadow() -> None:
    reg = default_registry()
    r = rubric()
    assert bind(r, "short", "length", {"max_words": 80}, reg) == {"max_words": 80}
    for checker, options, fragment in [
        ("length", {}, "set at least one of"),
        ("length", {"max_words": 5, "min_words": 9}, "is below min_words"),
        ("length", {"max_words": "80"}, "valid integer"),
        ("regex", {"pattern": "("}, "not a valid regular expression"),
        ("nope", {}, "nope"),
    ]:
        with pytest.raises(RubricError, match=fragment):
            bind(r, "short", checker, options, reg)


def test_caller_candidates_join_and_invalid_ones_are_dropped_with_the_reason() -> None:
    p = propose(
        "short",
        length_rule(),
        candidates=[("length", {"max_words": 81}), ("length", {"max_wrods": 1})],
    )
    assert any(dict(c.options) == {"max_words": 81} for c in p.candidates)
    assert any("unknown option 'max_wrods'" in d.reason for d in p.dropped)


def test_the_same_checker_with_the_same_effective_options_is_one_candidate() -> None:
    p = propose("short", length_rule(), candidates=[("sentence_len", {"max_words": 40})])
    sentence = [c for c in p.candidates if c.checker == "sentence_len"]
    effective = [dict(c.options).get("max_words", 40) for c in sentence]
    assert len(effective) == len(set(effective))  # {} and {max_words: 40} are one


def test_a_miner_that_raises_is_reported_and_the_others_go_on() -> None:
    from gradeloop.migration._propose_mine import MINERS

    def broken(info: Any, data: Any) -> Any:
        raise RuntimeError("boom")

    p = propose("short", length_rule(), miners={**MINERS, "length": broken})
    assert any("mining 'length' (broken) failed: RuntimeError: boom" in n for n in p.mining_notes)
    assert p.winner is not None  # the generic miners still found length's threshold


def test_a_miner_plugged_into_the_table_proposes_for_its_checker() -> None:
    from gradeloop.migration._propose_mine import MINERS

    def ends(info: Any, data: Any) -> Any:
        yield info.name, {"value": "days."}, "a test miner"

    p = propose("refund", required_phrase(), miners={**MINERS, "ends_with": ends})
    assert any(c.checker == "ends_with" and c.candidate.why == "a test miner" for c in p.candidates)


def test_to_json_has_the_contract_shape() -> None:
    data = propose("short", length_rule()).to_json()
    assert list(data)[:4] == ["key", "winner", "candidates", "cost_usd"]
    assert data["cost_usd"] == 0.0 and data["key"] == "short"
    assert set(data["winner"]) == {"checker", "options", "heldout"}
    assert set(data["winner"]["heldout"]) == {
        "kappa",
        "agreement",
        "coverage",
        "false_failure_rate",
    }
    first = data["candidates"][0]
    assert {"checker", "options", "train", "heldout"} <= set(first)
    json.dumps(data)  # JSON-ready throughout
    assert isinstance(propose("short", length_rule()).candidates[0], CandidateResult)


def test_a_checker_that_raises_counts_as_failing_and_is_counted() -> None:
    from gradeloop.grading import Registry

    reg = Registry()

    def flaky(text: str, *, limit: int = 80) -> bool:
        if "refund" in text:
            raise ValueError("boom")
        return len(text.split()) <= limit

    reg.add("flaky", flaky)
    r = Rubric.from_dict({"criteria": [{"key": "short", "description": "d"}]}, registry=reg)
    p = propose_checkers(
        r, "short", length_rule(), use_model=False, registry=reg, candidates=[("flaky", {})]
    )
    row = next(c for c in p.candidates if c.checker == "flaky")
    assert row.errors > 0


# -- R2 ------------------------------------------------------------------------------


def test_r2_keeps_the_rubric_and_adds_the_shadow(tmp_path: Path) -> None:
    src = tmp_path / "r.toml"
    src.write_text(
        '# my rubric\nname = "x"\n\n[[criteria]]\nkey = "short"  # keep me\n'
        'description = "At most 80 words."\n\n[[criteria]]\nkey = "b"\ndescription = "d"\n'
    )
    out = write_shadow(src, tmp_path / "r2.toml", "short", "length", {"max_words": 80})
    text = out.read_text()
    assert text.startswith("# my rubric\n") and 'key = "short"  # keep me' in text
    assert 'shadow = "length"\nshadow_options = { max_words = 80 }\n\n[[criteria]]' in text
    assert Rubric.load(out)["short"].shadow_options == {"max_words": 80}
    assert src.read_text().count("shadow") == 0  # the input is untouched


def test_r2_replaces_an_existing_shadow_and_writes_json_too(tmp_path: Path) -> None:
    src = tmp_path / "r.json"
    src.write_text(
        json.dumps(
            {
                "criteria": [
                    {
                        "key": "k",
                        "description": "d",
                        "shadow": "sentence_len",
                        "shadow_options": {"max_words": 9},
                    }
                ]
            }
        )
    )
    out = write_shadow(src, tmp_path / "r2.json", "k", "json_valid", {})
    data = json.loads(out.read_text())
    assert data["criteria"][0]["shadow"] == "json_valid"
    assert "shadow_options" not in data["criteria"][0]


@pytest.mark.parametrize("out", ["same", "link", "other-format"])
def test_r2_is_never_the_input_rubric(tmp_path: Path, out: str) -> None:
    src = tmp_path / "r.toml"
    src.write_text('[[criteria]]\nkey = "k"\ndescription = "d"\n')
    target = {
        "same": src,
        "link": tmp_path / "link.toml",
        "other-format": tmp_path / "r2.json",
    }[out]
    if out == "link":
        target.symlink_to(src)
    with pytest.raises(InputError, match=r"never overwrites|same format"):
        write_shadow(src, target, "k", "json_valid", {})
    assert src.read_text() == '[[criteria]]\nkey = "k"\ndescription = "d"\n'


def test_a_candidate_too_slow_to_shadow_a_key_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    import time as clock

    from gradeloop.grading import Registry
    from gradeloop.migration import _propose

    reg = Registry()

    def slow(text: str, *, limit: int = 80) -> bool:
        clock.sleep(0.002)
        return len(text.split()) <= limit

    reg.add("slow", slow)
    r = Rubric.from_dict({"criteria": [{"key": "short", "description": "d"}]}, registry=reg)
    given = propose_checkers(
        r, "short", length_rule(), use_model=False, registry=reg, candidates=[("slow", {})]
    )
    assert any(c.checker == "slow" for c in given.candidates)  # within the budget: scored
    monkeypatch.setattr(_propose, "CANDIDATE_SECONDS", 0.02)
    p = propose_checkers(
        r, "short", length_rule(), use_model=False, registry=reg, candidates=[("slow", {})]
    )
    assert not any(c.checker == "slow" for c in p.candidates)
    assert any(d.checker == "slow" and "too slow" in d.reason for d in p.dropped)
    assert p.winner is not None  # the others were scored on every draft


# -- figures, scored keys, the history reader -----------------------------------------


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_figures_count_what_they_say(pairs: list[tuple[bool, bool]]) -> None:
    from gradeloop.migration._agreement import cohen_kappa
    from gradeloop.migration._propose_score import figures

    predicted, truth = [p for p, _ in pairs], [t for _, t in pairs]
    f = figures(predicted, truth)
    unmet = [p for p, t in pairs if not t]
    met = [p for p, t in pairs if t]
    assert f.n == len(pairs)
    assert f.agreement == sum(p == t for p, t in pairs) / len(pairs)
    assert f.coverage == (sum(not p for p in unmet) / len(unmet) if unmet else None)
    assert f.false_failure_rate == (sum(not p for p in met) / len(met) if met else None)
    assert f.kappa == cohen_kappa(predicted, truth)[0]


def test_a_scored_key_is_met_only_at_its_threshold() -> None:
    from gradeloop import CheckResult
    from gradeloop.grading import Registry

    reg = Registry()

    def graded(text: str, *, scale: int = 10) -> CheckResult:
        return CheckResult(True, score=min(10.0, len(text.split()) / scale))

    reg.add("graded", graded)
    r = Rubric.from_dict(
        {"criteria": [{"key": "q", "description": "d", "scale": "score", "threshold": 6}]},
        registry=reg,
    )
    ex = [Example(str(i), "", "w " * (i * 3), i * 3 / 10 >= 6) for i in range(1, 41)]
    items = [LabelledItem(e.output_id, "", e.draft, {"q": 8.0 if e.met else 3.0}) for e in ex]
    p = propose_checkers(r, "q", items, use_model=False, registry=reg, candidates=[("graded", {})])
    row = next(c for c in p.candidates if c.checker == "graded" and not c.options)
    # passed=True on every draft, yet met only where the score reaches 6
    assert row.train.kappa == 1.0 and row.heldout.kappa == 1.0


def test_history_keeps_only_the_judges_answers_once_per_draft(tmp_path: Path) -> None:
    from gradeloop import HistoryStore, grade
    from gradeloop.history._grading import GradedDraft
    from gradeloop.migration._propose_evidence import history_evidence
    from tests.support.fakes import FakeJudge, verdict

    r = Rubric.from_dict(
        {
            "criteria": [
                {"key": "tone", "description": "d"},
                {"key": "short", "description": "d", "checker": "length",
                 "options": {"max_words": 3}},
            ]
        }
    )  # fmt: skip
    judge = FakeJudge(verdict(True, {"tone": True}), verdict(False, {"tone": False}, ["x"]))
    drafts = [
        GradedDraft("a", "one", grade("one", r, judge=judge)),
        GradedDraft("b", "two", grade("two", r, judge=judge)),
        GradedDraft("c", "one", None, error="judge failed"),  # no verdict: left out
    ]
    with HistoryStore(tmp_path / "h.db") as store:
        store.add_grading_run(drafts, rubric=r.to_dict())
        store.add_grading_run(drafts[:1], rubric=r.to_dict())  # "one" again: counted once
        tone = history_evidence(store, "tone")
        short = history_evidence(store, "short")
    assert sorted((d.draft, d.met("tone")) for d in tone) == [("one", True), ("two", False)]
    assert short == []  # a checker's answers are not the judge's


def test_options_naming_a_file_or_path_are_refused_for_any_plugin() -> None:
    from gradeloop.grading import Registry
    from gradeloop.migration._propose_candidates import model_risk

    reg = Registry(autoload=False)

    def reads(text: str, *, words_path: str = "", log_dir: str = "", n: int = 1) -> bool:
        return True

    reg.add("reads", reads)
    info = reg.info("reads")
    assert "names a file or path" in (model_risk(info, {"words_path": "/etc/shadow"}) or "")
    assert "names a file or path" in (model_risk(info, {"log_dir": "/tmp"}) or "")
    assert model_risk(info, {"n": 3}) is None
    nested = {"n": 1, "extra": {"rules": [{"pattern": "(a|aa)*b"}]}}
    assert "pattern" in (model_risk(info, nested) or "")
