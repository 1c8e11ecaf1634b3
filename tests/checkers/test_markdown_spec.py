"""The Markdown scanner against markdown-it-py on every CommonMark 0.31.2 spec example.

markdown-it-py renders all 652 examples exactly, so its fence tokens are the
reference: for each example, the fenced blocks found (opening line, language,
content) must be the same. The examples differ only where the scanner is lenient on
purpose, listed below by number with the reason. Provenance of the examples file:
tests/data/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll

from gradeloop_checkers.markdown import fences, language_of, scan

EXAMPLES = json.loads(
    (Path(__file__).parents[1] / "data" / "commonmark_spec_examples.json").read_text(
        encoding="utf-8"
    )
)
ORACLE = MarkdownIt("commonmark")

ACCEPTED = {
    # A fence indented four spaces is indented code in CommonMark; the scanner still
    # takes it for a fence, so code a model indented too far is checked, not skipped.
    134: "over-indented fence (documented leniency)",
}


def expected(markdown: str) -> list[tuple[int, str, str]]:
    """The fences markdown-it-py finds: 1-based opening line, language, content."""
    return [
        (t.map[0] + 1, language_of(unescapeAll(t.info).strip()), t.content)
        for t in ORACLE.parse(markdown)
        if t.type == "fence" and t.map is not None
    ]


def found(markdown: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.language, f.source) for f in scan(markdown).fences]


def test_the_examples_file_is_the_whole_spec() -> None:
    assert [e["example"] for e in EXAMPLES] == list(range(1, 653))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: str(e["example"]))
def test_fences_agree_with_markdown_it(example: dict[str, object]) -> None:
    markdown = str(example["markdown"])
    if example["example"] in ACCEPTED:
        assert found(markdown) != expected(markdown), "accepted difference no longer differs"
    else:
        assert found(markdown) == expected(markdown)
    # the fast path for plain drafts answers exactly as the scanner does
    assert list(fences(markdown)) == list(scan(markdown).fences)


def test_agreement_count() -> None:
    agree = sum(found(str(e["markdown"])) == expected(str(e["markdown"])) for e in EXAMPLES)
    assert agree == len(EXAMPLES) - len(ACCEPTED) == 651
