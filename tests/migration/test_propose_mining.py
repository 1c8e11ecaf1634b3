"""The miners: thresholds measured by the real checker, phrases, number patterns,
headings; linear on hostile drafts; every pattern they write runs in linear time."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Rubric
from gradeloop.grading import CheckContext
from gradeloop.grading._registry import default_registry
from gradeloop.migration import propose_checkers
from gradeloop.migration._propose_candidates import regex_risk
from gradeloop.migration._propose_evidence import Example
from gradeloop.migration._propose_mine import MiningData, _probe, _sweep, mine
from gradeloop.migration._propose_phrases import heading_features, number_patterns
from gradeloop_checkers.sentence_len import sentences

CTX = CheckContext()
TEXT = st.lists(
    st.sampled_from([*"ab1 .\n#`-,!?()", "Dr. ", "e.g. ", "```", "\n\n", "word "]),
    max_size=120,
).map("".join)


@given(TEXT)
def test_the_probe_finds_the_checkers_own_measure(text: str) -> None:
    length = default_registry().info("length")
    words = len(text.split())
    assert _probe(length, "max_words", "max", 0, text, CTX) == words
    assert _probe(length, "min_words", "min", 0, text, CTX) == words
    sentence_len = default_registry().info("sentence_len")
    longest = max((s.words for s in sentences(text)), default=0)
    assert _probe(sentence_len, "max_words", "max", 1, text, CTX) == max(1, longest)


def test_a_draft_that_never_passes_has_no_value() -> None:
    reg = default_registry()
    from gradeloop.grading import Registry

    reg = Registry(autoload=False)

    def never(text: str, *, max_count: int = 0) -> bool:
        return False

    reg.add("never", never)
    assert _probe(reg.info("never"), "max_count", "max", 0, "x", CTX) is None


def test_the_sweep_prefers_the_descriptions_number_then_a_round_one() -> None:
    values = [30, 35, 38, 44, 47, 52]
    met = [True, True, True, False, False, False]
    assert _sweep(values, met, "max", [40])[0] == (40, 1.0)
    assert _sweep(values, met, "max", [])[0] == (40, 1.0)  # the roundest in 38..43
    assert _sweep(values, met, "max", [99])[0] == (40, 1.0)  # a number outside the cut
    assert _sweep([5, 9, 20], [False, True, True], "min", [])[0] == (9, 1.0)
    assert _sweep([None, None], [True, False], "max", []) == []


def examples(texts: list[str], met: list[bool]) -> list[Example]:
    return [Example(str(i), "", t, m) for i, (t, m) in enumerate(zip(texts, met, strict=True))]


def test_a_number_pattern_is_found_for_citations() -> None:
    texts, met = [], []
    for i in range(40):
        cited = i % 2 == 0
        body = f"The API retries {i} times and see also chapter {i}. Done here."
        texts.append(
            body + (f" Details in (see {i % 7 + 1}.{i % 5})." if cited else " Details later.")
        )
        met.append(cited)
    r = Rubric.from_dict({"criteria": [{"key": "cites", "description": "Cites the spec."}]})
    p = propose_checkers(r, "cites", examples(texts, met), use_model=False)
    regexes = [c for c in p.candidates if c.checker == "regex" and c.train.kappa == 1.0]
    assert regexes, [c.candidate.label for c in p.candidates[:5]]
    pattern = regexes[0].options["pattern"]
    assert re.search(pattern, "read (see 12.3) first", re.IGNORECASE)
    assert regex_risk(pattern) is None


def test_required_headings_are_found() -> None:
    texts, met = [], []
    for i in range(30):
        ok = i % 3 != 0
        body = "# Guide\n\nIntro text.\n\n## Setup\n\nSteps.\n"
        body += "\n## Errors\n\nWhat fails.\n" if ok else "\n```\n## Errors\n```\n"
        texts.append(body)
        met.append(ok)
    r = Rubric.from_dict({"criteria": [{"key": "sections", "description": "Has an errors part."}]})
    p = propose_checkers(r, "sections", examples(texts, met), use_model=False)
    assert p.winner is not None
    assert (p.winner.checker, list(p.winner.options["sections"])) == (
        "required_sections",
        ["errors"],
    )


def test_headings_are_read_outside_fences_only() -> None:
    text = "# One\n```\n# Not\n```\n   ## Two ##\n####### seven\n#nospace\n"
    assert list(heading_features(text)) == ["one", "two"]


@given(st.lists(st.sampled_from([*"a1. ()-:\n", "see ", "v2", "12.50"]), max_size=80).map("".join))
def test_every_number_pattern_is_linear_and_matches_where_it_came_from(text: str) -> None:
    for pattern in set(number_patterns(text)):
        assert regex_risk(pattern) is None, pattern
        assert re.search(pattern, text, re.IGNORECASE), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("(a+)+$", "unbounded repeat"),
        ("a*", "unbounded repeat"),
        ("x{2,}", "unbounded repeat"),
        ("(a{1,5}){1,5}", "nests a repeat"),
        ("(ab|a){1,9}", "repeats an alternation"),
        (r"(a)\1", "backreference"),
        ("(?P<x>a)(?(x)b|c)", "backreference"),
        (r"\w{1,100}\s{1,100}\w{1,100}", "steps at each position"),
        ("(", "does not compile"),
        ("a" * 301, "at most 300"),
    ],
)
def test_risky_patterns_are_refused(pattern: str, fragment: str) -> None:
    risk = regex_risk(pattern)
    assert risk is not None and fragment in risk


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?<!\w)see \d{1,9}\.\d{1,9}(?!\w)",
        r"^# [A-Z]{1,40}$",
        "refund policy|return policy",
        "abc",
    ],
)
def test_bounded_patterns_are_accepted(pattern: str) -> None:
    assert regex_risk(pattern) is None


HOSTILE = {
    "one long word": "x" * 20_000,
    "distinct words": " ".join(f"w{i}" for i in range(4_000)),
    "one word repeated": "a " * 10_000,
    "numbers and dots": ".".join(str(i % 10) for i in range(10_000)),
    "headings and fences": "#\n```\n" * 3_500,
    "one long sentence": "word " * 4_000,
    "separators": "a" + "-" * 20_000 + "1",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_mining_hostile_drafts_stays_linear(name: str) -> None:
    """24 drafts of ~20 KB each: linear mining takes seconds; quadratic, hours."""
    base = HOSTILE[name]
    ex = [Example(str(i), "", base + f" tail{i % 2}", i % 2 == 0) for i in range(24)]
    data = MiningData("k", "At most 40 words.", ex, default_registry())
    started = time.perf_counter()
    proposals = mine(data)
    assert time.perf_counter() - started < 120  # generous: a shared machine
    assert not data.notes, data.notes
    assert proposals  # at least the tail phrase, or the defaults
