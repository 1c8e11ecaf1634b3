"""The one Markdown scanner: model-style drafts, prose units, generated Markdown, hostile input."""

from __future__ import annotations

import re
import time

import commonmark  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll

from gradeloop_checkers.code_runs import code_runs
from gradeloop_checkers.json_checks import json_valid
from gradeloop_checkers.markdown import _driver, _opening, fences, language_of, scan
from gradeloop_checkers.markdown._scanner import Scanner
from gradeloop_checkers.sentence_len import sentence_len, sentences
from gradeloop_checkers.text import no_placeholders

ORACLE = MarkdownIt("commonmark")


def found(text: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.language, f.source) for f in scan(text).fences]


def expected(text: str) -> list[tuple[int, str, str]]:
    """markdown-it-py's fences; a last line without its line end gets one, as ours do."""
    return [
        (
            t.map[0] + 1,
            language_of(unescapeAll(t.info).strip()),
            t.content + "\n" if t.content and not t.content.endswith("\n") else t.content,
        )
        for t in ORACLE.parse(text)
        if t.type == "fence" and t.map is not None
    ]


def reference(text: str) -> list[tuple[int, str, str]]:
    """commonmark.py's fences (a port of the spec's reference implementation, commonmark.js)."""
    out = []
    for node, entering in commonmark.Parser().parse(text).walker():
        if entering and node.t == "code_block" and node.is_fenced:
            info = language_of((node.info or "").strip())
            out.append((node.sourcepos[0][0], info, node.literal or ""))
    return out


# -- fences where models put them ------------------------------------------------------


def test_a_fence_in_a_quote_in_a_list_item_is_found() -> None:
    draft = "Steps:\n\n- > ```python\n  > import requests\n  > ```\n"
    assert found(draft) == [(3, "python", "import requests\n")]
    assert not code_runs(draft).passed  # requests is not in the standard library
    assert code_runs(draft, allow=("requests",)).passed


def test_an_unclosed_fence_ends_with_its_list_item() -> None:
    draft = "- Run:\n  ```python\n  x = 1\n\nThe prose after the list is not code at all.\n"
    (fence,) = scan(draft).fences
    assert (fence.line, fence.end, fence.closed) == (2, 4, False)
    assert fence.source == "x = 1\n\n"
    assert code_runs(draft).passed
    assert [s.text for s in sentences(draft)] == [
        "- Run:",
        "The prose after the list is not code at all.",
    ]


def test_fences_in_html_comments_are_not_code() -> None:
    draft = "<!--\n```python\nimport requests\n```\n-->\nText.\n"
    assert found(draft) == []
    assert code_runs(draft).passed
    # the same block outside the comment is checked
    assert not code_runs(draft.replace("<!--\n", "").replace("-->\n", "")).passed


def test_quoted_blocks_count_for_the_text_checkers() -> None:
    assert json_valid('> ```json\n> {"a": 1}\n> ```\n', block=True).passed
    assert not json_valid('> ```json\n> {"a": 1,}\n> ```\n', block=True).passed
    quoted = "> ```python\n> # TODO later\n> ```\n"
    assert no_placeholders(quoted, ignore_code=True).passed
    assert not no_placeholders(quoted).passed


def test_over_indented_fences_are_still_checked() -> None:
    draft = "Intro:\n\n    ```python\n    import requests\n    ```\n"
    assert found(draft) == [(3, "python", "import requests\n")]
    assert not code_runs(draft).passed
    assert found("Intro:\n\n    import requests\n") == []  # plain indented code is not


def test_fence_lines_map_to_draft_lines() -> None:
    draft = "> Quote\n>\n> ```python\n> x = (\n> ```\n"
    (fence,) = scan(draft).fences
    assert fence.line == 3 and fence.source == "x = (\n"
    assert "line 4" in code_runs(draft).issues[0]


# -- prose units ------------------------------------------------------------------------

LONG = " ".join(["word"] * 35) + "."


def test_footnote_text_is_prose() -> None:
    assert not sentence_len(f"Claim.[^1]\n\n[^1]: {LONG}\n", max_words=30).passed
    assert sentence_len("Claim.[^1]\n\n[^1]: A short note.\n", max_words=30).passed
    assert [u.kind for u in scan("Claim.[^1]\n\n[^1]: A note.\n").units] == [
        "paragraph",
        "footnote",
    ]


def test_front_matter_is_not_prose() -> None:
    draft = f"---\ntitle: {LONG}\n---\n# Title\n\nBody.\n"
    assert sentence_len(draft, max_words=30).passed
    assert [u.text for u in scan(draft).units] == ["Title", "Body."]
    # a rule and a setext heading are no front matter
    assert [u.kind for u in scan("---\nNot front matter\n---\n").units] == ["heading"]


def test_entities_are_characters_not_words() -> None:
    assert [s.words for s in sentences("Tom &amp; Jerry &copy; 2024 &mdash; fine.")] == [4]
    assert [s.words for s in sentences("Tom & Jerry © 2024 — fine.")] == [4]


def test_multi_line_link_definitions_are_not_prose() -> None:
    draft = '[docs]:\n  https://example.com/a.b\n  "The reference. Read it."\n\nShort.\n'
    assert [s.text for s in sentences(draft)] == ["Short."]


def test_a_lazy_quote_line_does_not_split_a_sentence() -> None:
    assert [s.words for s in sentences("> A quoted sentence that\ncontinues here.\n")] == [6]


# -- generated Markdown: the scanner against markdown-it-py ---------------------------

PIECES = st.sampled_from(
    [
        "",
        "text here",
        "```python",
        "```",
        "~~~",
        "````",
        "x = 1",
        "> ",
        ">",
        "- ",
        "1. ",
        "2) ",
        "  ",
        "   ",
        "# Title",
        "---",
        "<!--",
        "-->",
        "<div>",
        "[a]: /url",
        "* * *",
    ]
)
LINE = st.lists(PIECES, min_size=0, max_size=4).map("".join)


def over_indented(text: str) -> bool:
    """A fence indented 4+ spaces, at the line's start or past a container marker and its
    optional space (``>     ```python``): CommonMark reads indented code there, the
    scanner a fence (spec example 134, the documented leniency)."""
    return any(
        ("```" in line or "~~~" in line)
        and (
            line[: len(line) - len(line.lstrip())].count(" ") >= 4
            or AFTER_MARKER.search(line) is not None
        )
        for line in text.split("\n")
    )


# A block-quote or list marker, its one optional space, then four more before the fence.
AFTER_MARKER = re.compile(r"(?:[>*+-]|\d[.)]) {5,}(?:```|~~~)")


def test_where_the_two_oracles_differ_the_scanner_follows_commonmark_js() -> None:
    for text in ["[a]: /url\n2) ```python\n", "> [a]: /url\ntext here\n2) ```python\n"]:
        assert expected(text) != reference(text)
        assert found(text) == reference(text)
    text = "> ```python\nx = 1\n"  # and where they agree, all three do
    assert found(text) == expected(text) == reference(text) == [(1, "python", "")]


def test_the_leniency_is_only_an_over_indented_fence() -> None:
    assert over_indented(">     ```python\n") and over_indented("    ```\n")
    assert over_indented("-     ~~~\n") and over_indented("1.     ```\n")
    assert not over_indented(">    ```python\n") and not over_indented("   ```\n")
    assert not over_indented("- ```\n") and not over_indented("text    ```\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=12).map(lambda lines: "\n".join(lines) + "\n"))
def test_generated_markdown_fences_agree_with_markdown_it(text: str) -> None:
    if not over_indented(text):  # the one documented leniency
        got = found(text)
        # Where markdown-it-py and the reference implementation disagree (markdown-it ends
        # a link reference definition as a block of its own, so '[a]: /url' followed by
        # '2) ```python' opens a list there and a paragraph in commonmark.js), the scanner
        # must side with one of them.
        assert got == expected(text) or got == reference(text)
    assert list(fences(text)) == list(scan(text).fences)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="`~>-*1. \n\t<!#[]:|$ax", max_size=200))
def test_any_text_scans_and_the_fast_path_agrees(text: str) -> None:
    doc = scan(text)
    assert list(fences(text)) == list(doc.fences)
    for f in doc.fences:
        assert 1 <= f.line <= f.end


# -- hostile input: linear time (generous bounds; the old scanners took minutes) --------


def timed(fn: object, *args: object) -> float:
    """CPU seconds of one call: on a shared machine the wall clock times the neighbours."""
    start = time.process_time()
    fn(*args)  # type: ignore[operator]
    return time.process_time() - start


def backtick_runs(size: int) -> str:
    out, k, n = [], 1, 0
    while n < size:
        out.append("`" * k + "a")
        n += k + 1
        k += 1
    return "".join(out)[:size]


def test_backtick_runs_are_linear() -> None:
    assert timed(sentence_len, backtick_runs(40_000)) < 1.0  # was 99 s


def test_a_megabyte_of_quote_markers_is_linear() -> None:
    assert timed(sentence_len, ">" * 1_000_000) < 10.0  # was past 60 s
    assert timed(sentence_len, (">" * 1000 + " x\n") * 1000) < 10.0


def test_bare_fence_lines_and_many_blocks_are_linear() -> None:
    assert timed(code_runs, "```\n" * 1_000_000) < 20.0  # quadratic before: 8 s at 250,000
    assert timed(fences, "> ```\n" * 100_000) < 6.0
    assert timed(code_runs, "```python\nx = 1\n```\n" * 50_000) < 20.0


def test_nested_list_markers_over_blank_lines_are_linear() -> None:
    assert timed(scan, "- " * 50_000 + "x\n" + "\n" * 100_000) < 6.0
    assert timed(scan, "- " * 50_000 + "- - x") < 6.0


# -- one-step paths: runs of list markers on a line, runs of blank lines in a list -------

CONTAINER_PIECES = [
    *["- ", "* ", "+ ", "1. ", "10) ", "2.", "-", "*", " ", "  ", "x", "a b", "\n", "\n\n"],
    *["\t", "> ", ">", "---", "***", "- - -", "* * *", "```", "    ", "#", "=", "[^1]: "],
]


def scan_one_step_at_a_time(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """``scan(text)`` with every marker and blank line read on its own (the slow path)."""
    with monkeypatch.context() as patch:
        patch.setattr(_opening, "BULK_ITEMS", False)
        patch.setattr(_driver, "SKIP_BLANKS", False)
        scan.cache_clear()
        slow = scan(text)
    scan.cache_clear()
    return slow


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CONTAINER_PIECES), max_size=60).map("".join))
def test_one_step_paths_agree_with_reading_each_marker_and_line(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        slow = scan_one_step_at_a_time(text, monkeypatch)
    assert scan(text) == slow


def test_one_step_paths_keep_thematic_breaks_and_widths(monkeypatch: pytest.MonkeyPatch) -> None:
    for text in [
        "- - - x\n\n\n      y\n",
        "- * - * -\n",  # a thematic break? no: mixed marks; nested items
        "- - - -\n",  # the whole line is a thematic break
        "- x - - -\n",
        "* * * - - -\n",
        "1. 2) - + x\n   y\n\n\n  z\n",
        "- -  x\n",  # two spaces: the last item's content starts one column later
        "- -\tx\n",
        "> - - x\n\n\n> y\n",
        "- \n\n\n- x\n",  # an empty item ends at the blank line
        "- x\n\n\n\n```\ncode\n```\n",
        "[^1]: - - x\n\n\n    more\n",
    ]:
        assert scan(text) == scan_one_step_at_a_time(text, monkeypatch), text


def test_a_line_of_nested_markers_is_read_in_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = _opening._item
    monkeypatch.setattr(_opening, "_item", lambda *a: calls.append(1) or real(*a))
    scan.cache_clear()
    assert [u.text for u in scan("- " * 10_000 + "x\n").units] == ["- x"]
    assert len(calls) <= 2  # one per marker before (10,000 turns of the block-start loop)


def test_blank_lines_inside_a_list_are_skipped_in_one_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fed = []
    real = Scanner.feed
    monkeypatch.setattr(Scanner, "feed", lambda self, i, line: fed.append(i) or real(self, i, line))
    scan.cache_clear()
    doc = scan("- x\n" + "\n" * 10_000 + "  y\n")
    assert [u.text for u in doc.units] == ["- x", "y"]
    assert len(fed) <= 4  # every blank line was fed before


def test_a_megabyte_of_nested_markers_over_blank_lines_is_fast() -> None:
    text = "- " * 250_000 + "x\n" + "\n" * 500_000
    assert timed(sentence_len, text) < 1.5  # 1.8-2.3 s when read one marker at a time
