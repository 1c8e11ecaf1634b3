"""Code spans found in one pass (gradeloop_checkers.markdown._inline.code_spans)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gradeloop_checkers.markdown._inline import code_spans


def reference(text: str) -> list[tuple[int, int]]:
    """The rule read plainly (quadratic): a run of n backticks, less one when an odd
    number of backslashes comes right before it, opens a span that the next run of
    exactly n backticks closes; with no such run its backticks are literal."""
    runs = []
    i = 0
    while i < len(text):
        if text[i] != "`":
            i += 1
            continue
        j = i
        while j < len(text) and text[j] == "`":
            j += 1
        slashes = 0
        while i - slashes > 0 and text[i - slashes - 1] == "\\":
            slashes += 1
        runs.append((i, j - i, j - i - slashes % 2))
        i = j
    spans, k = [], 0
    while k < len(runs):
        pos, length, opening = runs[k]
        close = next(
            (c for c in range(k + 1, len(runs)) if opening and runs[c][1] == opening), None
        )
        if close is None:
            k += 1
            continue
        spans.append((pos + length - opening, runs[close][0] + opening))
        k = close + 1
    return spans


@given(st.text(alphabet="`\\a \n", max_size=80))
def test_code_spans_are_the_rule_read_plainly(text: str) -> None:
    assert code_spans(text) == reference(text)


def test_a_long_backslash_run_is_counted_whole() -> None:
    # the count goes back in growing steps: across the first step and far beyond it
    for slashes in (63, 64, 65, 1000, 1001, 5000):
        text = "x" + "\\" * slashes + "`code`"
        assert code_spans(text) == reference(text)
        escaped = slashes % 2 == 1
        assert code_spans(text) == ([] if escaped else [(1 + slashes, len(text))])
