"""The ``sentence_len`` checker: no prose sentence longer than ``max_words`` words.

Only prose counts. Code blocks (fenced or indented), math and ``<pre>`` blocks, HTML
comments and tags, and link addresses are not prose. Headings, list items, table
cells and block-quote paragraphs are units of their own, so an unpunctuated list item
never merges with the next one and a heading never glues onto the first sentence
under it. Sentences are found by a rule-based splitter that keeps abbreviations
(``Dr.``, ``e.g.``, ``U.S.``), initials, decimals, version numbers, times
(``5 p.m.``) and URLs inside their sentence. On the 48 English Golden Rules of the
Pragmatic Segmenter it scores 48/48 (see ``benchmarks/bench_sentence_len.py``).

A word is a whitespace-separated token with at least one letter or digit: ``--``,
``...`` or a bullet is no word, ``v1.2.3``, ``state-of-the-art`` and a URL are one
word each, an inline code span is one word however long, and a list marker opening
a sentence (``1.``, ``a)``) is not a word.

Rubric use::

    [[criteria]]
    key = "readable"
    description = "No sentence longer than 30 words."
    checker = "sentence_len"
    options = { max_words = 30 }
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from gradeloop import CheckResult

from ._prose import prose
from ._segment import count_words, is_word, split_sentences

MAX_LISTED = 10
"""Long sentences quoted one by one; the rest are summed up in one last issue."""

QUOTED_WORDS = 8
"""How many words of a long sentence its issue quotes."""

MaxWords = Annotated[int, Field(ge=1, strict=True)]


@dataclass(frozen=True)
class Sentence:
    """One prose sentence: its 1-based position among all sentences, text and length."""

    number: int
    text: str
    words: int


def sentences(text: str) -> list[Sentence]:
    """Every prose sentence of the Markdown ``text``, with inline code restored.

    >>> [s.words for s in sentences("# Setup\\n\\nRun `pip install x`. Then stop.")]
    [1, 2, 2]
    """
    doc = prose(text)
    found: list[Sentence] = []
    for unit in doc.units:
        for raw in split_sentences(unit):
            words = count_words(raw)
            if words:
                found.append(Sentence(len(found) + 1, doc.restore(raw), words))
    return found


def sentence_len(text: str, *, max_words: MaxWords = 40) -> CheckResult:
    """No prose sentence has more than ``max_words`` words (default 40).

    Each long sentence gets an issue with its number, its length and its first
    words, e.g. ``sentence 3 has 52 words (max 40): 'When the payment intent is
    confirmed…'``; past ten, one more issue says how many others there are.
    """
    if not isinstance(max_words, int) or isinstance(max_words, bool) or max_words < 1:
        # a direct call bypasses the rubric's validation; fail rather than raise
        return CheckResult(
            False, [f"option 'max_words' must be a whole number >= 1, not {max_words!r}"]
        )
    long = [s for s in sentences(text) if s.words > max_words]
    issues = [
        f"sentence {s.number} has {s.words} words (max {max_words}): {_opening(s.text)}"
        for s in long[:MAX_LISTED]
    ]
    if len(long) > MAX_LISTED:
        more = len(long) - MAX_LISTED
        issues.append(
            f"{more} more sentence{'s' if more > 1 else ''} over {max_words} words; "
            "split or shorten them too"
        )
    return CheckResult(passed=not long, issues=issues)


def _opening(sentence: str) -> str:
    """The first words of ``sentence`` in single quotes, with ``…`` when cut."""
    words = sentence.split()
    while words and not is_word(words[0]):
        del words[0]  # a bullet or a dash says nothing about which sentence it is
    head = " ".join(words[:QUOTED_WORDS])
    return f"'{head}…'" if len(words) > QUOTED_WORDS else f"'{head}'"


CHECKERS: dict[str, Callable[..., Any]] = {"sentence_len": sentence_len}
