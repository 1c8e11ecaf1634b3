"""The built-in text checkers: behaviour, load-time option checks, grading, robustness."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradeloop
import gradeloop.grading
from gradeloop import CheckResult, Rubric, RubricError, grade
from gradeloop_checkers.json_checks import CHECKERS as JSON_CHECKERS
from gradeloop_checkers.text import (
    CHECKERS,
    contains,
    ends_with,
    length,
    no_placeholders,
    not_contains,
    regex,
    required_sections,
    starts_with,
)


def load(checker: str, options: dict[str, Any], key: str = "k") -> Rubric:
    return Rubric.from_dict(
        {"criteria": [{"key": key, "description": "d", "checker": checker, "options": options}]}
    )


def rejected(checker: str, options: dict[str, Any], option: str) -> str:
    """Load a one-criterion rubric that must fail; the message names the key and option."""
    with pytest.raises(RubricError) as info:
        load(checker, options, key="crit_under_test")
    message = str(info.value)
    assert "crit_under_test" in message
    assert option in message
    return message


# -- registration ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_every_text_checker_is_registered_through_the_plugin(name: str) -> None:
    assert gradeloop.get_checker(name) is CHECKERS[name]


def test_annotated_option_constraints_reach_the_options_model() -> None:
    # Load-time checks below rely on gradeloop keeping Annotated metadata
    # (typing.get_type_hints(..., include_extras=True) in gradeloop.grading._checks).
    rejected("regex", {"pattern": "("}, "pattern")
    load("regex", {"pattern": "(a)"})


# -- regex ----------------------------------------------------------------------------------


def test_regex_must_match() -> None:
    assert regex("Total: 42", pattern=r"\d+").passed
    result = regex("Total: none", pattern=r"\d+")
    assert not result.passed
    assert r"`\d+`" in result.issues[0]


def test_regex_must_not_match_quotes_the_match_and_its_line() -> None:
    assert regex("all good\nhere", pattern=r"(?i)as an ai", must_match=False).passed
    result = regex("fine\nAs an AI, I cannot", pattern=r"(?i)as an ai", must_match=False)
    assert not result.passed
    assert '"As an AI" on line 2: "As an AI, I cannot"' in result.issues[0]


def test_regex_lists_five_matches_and_counts_the_rest() -> None:
    result = regex("x " * 8, pattern="x", must_match=False)
    assert len(result.issues) == 6
    assert "3 more" in result.issues[-1]


@pytest.mark.parametrize(
    ("text", "pattern", "flag"),
    [("HELLO", "hello", "ignore_case"), ("a\nb", "^b$", "multiline"), ("a\nb", "a.b", "dotall")],
)
def test_regex_flags(text: str, pattern: str, flag: str) -> None:
    assert not regex(text, pattern=pattern).passed
    assert regex(text, pattern=pattern, **{flag: True}).passed


def test_regex_with_a_bad_pattern_called_directly_fails_instead_of_raising() -> None:
    result = regex("text", pattern="(")
    assert not result.passed
    assert "not a valid regular expression" in result.issues[0]


def test_regex_options_are_checked_at_load() -> None:
    assert "valid regular expression" in rejected("regex", {"pattern": "[a-"}, "pattern")
    rejected("regex", {}, "pattern")
    rejected("regex", {"pattern": ""}, "pattern")
    rejected("regex", {"pattern": "a", "must_mach": False}, "must_mach")
    rejected("regex", {"pattern": "a", "ignore_case": "sometimes"}, "ignore_case")
    assert load("regex", {"pattern": "a", "must_match": False})["k"].options == {
        "pattern": "a",
        "must_match": False,
    }


# -- contains / not_contains ----------------------------------------------------------------


def test_contains_all_names_each_missing_value() -> None:
    assert contains("alpha beta gamma", values=("alpha", "gamma")).passed
    result = contains("alpha", values=("alpha", "beta", "gamma"))
    assert not result.passed
    assert len(result.issues) == 2
    assert "'beta'" in result.issues[0]
    assert "'gamma'" in result.issues[1]


def test_contains_any() -> None:
    assert contains("only beta", values=("alpha", "beta"), mode="any").passed
    result = contains("neither", values=("alpha", "beta"), mode="any")
    assert not result.passed
    assert "'alpha', 'beta'" in result.issues[0]


def test_contains_ignore_case_and_whole_word() -> None:
    assert not contains("Python", values=("python",)).passed
    assert contains("Python", values=("python",), ignore_case=True).passed
    assert contains("concatenate", values=("cat",)).passed
    assert not contains("concatenate", values=("cat",), whole_word=True).passed
    assert contains("a cat.", values=("cat",), whole_word=True).passed
    assert contains("use C++ here", values=("C++",), whole_word=True).passed


def test_not_contains_any_value_fails_and_is_quoted_with_its_line() -> None:
    assert not_contains("clean text", values=("delve", "tapestry")).passed
    result = not_contains("one\nLet us delve in", values=("delve", "tapestry"))
    assert not result.passed
    assert "'delve'" in result.issues[0]
    assert 'line 2: "Let us delve in"' in result.issues[0]


def test_line_numbers_count_a_lone_carriage_return_as_a_line_end() -> None:
    result = not_contains("one\rtwo delve", values=("delve",))
    assert 'line 2: "two delve"' in result.issues[0]


def test_not_contains_all_mode_fails_only_when_every_value_appears() -> None:
    assert not_contains("foo only", values=("foo", "bar"), mode="all").passed
    result = not_contains("foo and bar", values=("foo", "bar"), mode="all")
    assert not result.passed
    assert len(result.issues) == 3


def test_not_contains_whole_word_and_ignore_case() -> None:
    assert not_contains("concatenate", values=("cat",), whole_word=True).passed
    assert not not_contains("a cat", values=("cat",), whole_word=True).passed
    assert not_contains("DELVE", values=("delve",)).passed
    assert not not_contains("DELVE", values=("delve",), ignore_case=True).passed


def test_contains_with_no_values_called_directly_fails() -> None:
    assert not contains("x", values=()).passed
    assert not not_contains("x", values=()).passed


@pytest.mark.parametrize("checker", ["contains", "not_contains"])
def test_contains_options_are_checked_at_load(checker: str) -> None:
    rejected(checker, {"values": []}, "values")
    rejected(checker, {"values": [""]}, "values")
    rejected(checker, {"values": ["a"], "mode": "some"}, "mode")
    rejected(checker, {}, "values")
    rejected(checker, {"values": "refund"}, "values")  # a string is not a list of strings
    assert load(checker, {"values": ["a"], "mode": "any"})["k"].options["values"] == ("a",)


# -- starts_with / ends_with ----------------------------------------------------------------


def test_starts_with() -> None:
    assert starts_with("  Dear Sam,\nhello", value="Dear").passed
    result = starts_with("Hi Sam", value="Dear")
    assert not result.passed
    assert '"Hi Sam"' in result.issues[0]
    assert starts_with("dear Sam", value="Dear", ignore_case=True).passed


def test_ends_with() -> None:
    assert ends_with("Thanks,\nAda\n\n", value="Ada").passed
    result = ends_with("Thanks, Bob", value="Ada")
    assert not result.passed
    assert "'Ada'" in result.issues[0]
    assert ends_with("Thanks, ADA", value="ada", ignore_case=True).passed


def test_edge_options_are_checked_at_load() -> None:
    rejected("starts_with", {"value": ""}, "value")
    rejected("ends_with", {}, "value")


# -- length ---------------------------------------------------------------------------------


def test_length_words_reports_the_measured_figure() -> None:
    assert length("one two three", max_words=3).passed
    result = length("one two three four", max_words=3)
    assert not result.passed
    assert "4 words" in result.issues[0]
    assert "maximum is 3" in result.issues[0]
    assert "at least 5" in length("one two", min_words=5).issues[0]


def test_length_chars_ignore_surrounding_whitespace() -> None:
    assert length("  abcde \n", max_chars=5).passed
    assert "6 chars" in length("abcdef", max_chars=5).issues[0]
    assert not length("abc", min_chars=4).passed


def test_length_lines_skip_blank_lines() -> None:
    assert length("a\n\n\nb\n", max_lines=2).passed
    assert not length("a\nb\nc", max_lines=2).passed
    assert not length("a", min_lines=2).passed


def test_length_reports_every_broken_bound() -> None:
    result = length("one two three", max_words=1, max_chars=3)
    assert len(result.issues) == 2


def test_length_without_a_bound_called_directly_fails() -> None:
    result = length("anything")
    assert not result.passed
    assert "at least one of" in result.issues[0]


def test_length_options_are_checked_at_load() -> None:
    assert "at least one of" in rejected("length", {}, "min_words")
    assert "below min_words" in rejected("length", {"min_words": 5, "max_words": 3}, "max_words")
    rejected("length", {"min_chars": 9, "max_chars": 2}, "max_chars")
    rejected("length", {"min_lines": 9, "max_lines": 2}, "max_lines")
    rejected("length", {"max_words": -1}, "max_words")
    rejected("length", {"max_words": "40"}, "max_words")
    rejected("length", {"max_chars": 40.5}, "max_chars")
    rejected("length", {"max_word": 10}, "max_word")
    for options in ({"min_words": 3, "max_words": 3}, {"max_chars": 0}, {"min_lines": 1}):
        assert load("length", options)["k"].options == options


# -- no_placeholders --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dirty", "clean"),
    [
        ("Ship it. TODO: pricing", "Ship it. Pricing is $5."),
        ("FIXME later", "Fixed later"),
        ("Lorem ipsum dolor sit amet", "Real words here"),
        ("Hello [insert customer name],", "Hello [Ada](https://example.com),"),
        ("Regards, [Your Name]", "Regards, Ada"),
        ("Signed <your name>", "Signed <b>Ada</b>"),
        ("Dear {{ first_name }},", "Dear Ada,"),
        ("Intro\n...\nOutro", "Intro... and more\nOutro"),
        (
            "```python\ndef f():\n    # ... rest of the code\n```",
            "```python\ndef f():\n    pass\n```",
        ),
        ("```js\n// ...\n```", "```js\n// done\n```"),
        ("[...]", "as she said [sic]"),
        ("def f():\n    pass  # existing code here", "def f():\n    return 1"),
        ("```go\n// rest of the handler\n```", "The rest of the function runs in O(n)."),
        ("Details omitted for brevity.", "Other code paths are unaffected."),
        ("# remaining logic unchanged", "Keep the existing code style."),
    ],
)
def test_no_placeholders_flags_each_kind(dirty: str, clean: str) -> None:
    assert no_placeholders(clean).passed
    result = no_placeholders(dirty)
    assert not result.passed
    assert "line" in result.issues[0]


def test_no_placeholders_quotes_the_placeholder_and_its_line() -> None:
    result = no_placeholders("Title\nCall us at [insert phone].")
    assert '"[insert phone]" on line 2: "Call us at [insert phone]."' in result.issues[0]


def test_no_placeholders_names_every_placeholder_on_a_line() -> None:
    result = no_placeholders("Hi [insert name], TODO: sign")
    assert len(result.issues) == 1
    assert '"TODO"' in result.issues[0]
    assert '"[insert name]"' in result.issues[0]


def test_a_fence_inside_a_list_item_is_code() -> None:
    text = "1. Run:\n   ```bash\n   # TODO tune\n   ```\n2. Done"
    assert not no_placeholders(text).passed
    assert no_placeholders(text, ignore_code=True).passed
    listed = "- ```python\n  # Usage\n  ```\n"
    assert not required_sections(listed, sections=("Usage",)).passed
    assert required_sections(listed + "## Usage\n", sections=("Usage",)).passed


def test_no_placeholders_ignore_code() -> None:
    text = "Prose is done.\n```python\n# TODO: handle errors\n```"
    assert not no_placeholders(text).passed
    assert no_placeholders(text, ignore_code=True).passed
    assert not no_placeholders("TBD\n```\nx\n```", ignore_code=True).passed


def test_no_placeholders_disable_a_kind() -> None:
    text = "Template: {{ name }}"
    assert not no_placeholders(text).passed
    assert no_placeholders(text, disable=("template",)).passed


def test_no_placeholders_extra_patterns() -> None:
    assert no_placeholders("Price: $X.XX").passed
    result = no_placeholders("Price: $X.XX", extra=(r"\$X\.XX",))
    assert not result.passed
    assert "extra pattern" in result.issues[0]
    assert not no_placeholders("x", extra=("(",)).passed


def test_no_placeholders_caps_the_list() -> None:
    result = no_placeholders("TODO\n" * 14)
    assert len(result.issues) == 11
    assert "4 more" in result.issues[-1]


def test_no_placeholders_options_are_checked_at_load() -> None:
    rejected("no_placeholders", {"extra": ["[unclosed"]}, "extra")
    rejected("no_placeholders", {"disable": ["todos"]}, "disable")
    assert load("no_placeholders", {"disable": ["todo"], "extra": ["XX"]})["k"].options


# -- required_sections -----------------------------------------------------------------------

DOC = """# Guide

## 1. Installation
pip install it

Usage:
------

```bash
# Troubleshooting
```

### **FAQ**
"""


def test_required_sections_present_at_any_level_and_normalized() -> None:
    assert required_sections(DOC, sections=("installation", "Usage", "faq")).passed


def test_required_sections_names_the_missing_ones() -> None:
    result = required_sections(DOC, sections=("Installation", "License"))
    assert not result.passed
    assert "'License'" in result.issues[0]
    assert "headings found" in result.issues[-1]
    assert "Installation" not in result.issues[0]


def test_a_comment_in_a_code_block_is_not_a_heading() -> None:
    assert not required_sections(DOC, sections=("Troubleshooting",)).passed
    assert required_sections(DOC + "\n## Troubleshooting\n", sections=("Troubleshooting",)).passed


def test_setext_headings_need_a_paragraph_line_above() -> None:
    assert required_sections("Usage\n=====\n", sections=("Usage",)).passed
    assert not required_sections("- Usage\n---\n", sections=("Usage",)).passed
    assert not required_sections("\n---\nUsage\n", sections=("Usage",)).passed


def test_an_unclosed_fence_hides_the_rest_of_the_document() -> None:
    assert required_sections("```\ncode\n```\n## Usage", sections=("Usage",)).passed
    assert not required_sections("```\ncode\n## Usage", sections=("Usage",)).passed


def test_required_sections_ordered() -> None:
    assert required_sections(DOC, sections=("Installation", "FAQ"), ordered=True).passed
    assert required_sections(DOC, sections=("FAQ", "Installation")).passed
    result = required_sections(DOC, sections=("FAQ", "Installation"), ordered=True)
    assert not result.passed
    assert "'Installation' (line 3) must come after 'FAQ'" in result.issues[0]


def test_required_sections_options_are_checked_at_load() -> None:
    rejected("required_sections", {"sections": []}, "sections")
    rejected("required_sections", {"sections": ["A", ""]}, "sections")
    assert not required_sections("# A", sections=()).passed


# -- end to end -------------------------------------------------------------------------------

RUBRIC_TOML = """
[[criteria]]
key = "has_total"
description = "States the total as a number."
checker = "regex"
options = { pattern = 'Total: \\d+' }

[[criteria]]
key = "mentions_refund"
description = "Mentions the refund policy."
checker = "contains"
options = { values = ["refund"], ignore_case = true }

[[criteria]]
key = "short"
description = "At most 30 words."
checker = "length"
options = { max_words = 30 }

[[criteria]]
key = "finished"
description = "No placeholders are left."
checker = "no_placeholders"

[[criteria]]
key = "structure"
description = "Has Summary and Details sections."
checker = "required_sections"
options = { sections = ["Summary", "Details"], ordered = true }
"""


def test_grade_with_a_code_only_rubric_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "rubric.toml"
    path.write_text(RUBRIC_TOML, encoding="utf-8")
    rubric = Rubric.load(path)
    good = "# Summary\nTotal: 12\n\n# Details\nRefunds within 30 days."
    result = grade(good, rubric)
    assert result.accepted
    assert result.overall_score == 10
    bad = "# Details\nTotal: TBD. Refund policy applies.\n\n# Summary\n"
    result = grade(bad, rubric)
    assert not result.accepted
    assert set(result.failed_keys) == {"has_total", "finished", "structure"}
    assert any(i.startswith("finished: a TODO/TBD") for i in result.issues)


def test_a_typo_in_a_toml_rubric_names_the_file_and_criterion(tmp_path: Path) -> None:
    path = tmp_path / "rubric.toml"
    path.write_text(RUBRIC_TOML.replace("ignore_case", "ignore_cas"), encoding="utf-8")
    with pytest.raises(RubricError, match=r"rubric\.toml.*'mentions_refund'.*ignore_cas"):
        Rubric.load(path)


def test_a_misspelt_length_bound_points_at_the_real_names() -> None:
    message = rejected("length", {"max_wrds": 10}, "max_words")
    assert "max_chars" in message


# -- robustness -------------------------------------------------------------------------------

FRAGMENTS = [
    "```",
    "~~~",
    "```json",
    "#",
    "## ",
    "---",
    "===",
    "\n",
    "\r\n",
    "\r",
    " ",
    "...",
    "…",
    "TODO",
    "[insert x]",
    "{{a}}",
    "<your name>",
    "Summary",
    "é",
    "\x00",
    "\t",
]
texts = st.one_of(
    st.text(), st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5)).map("".join)
)

CASES: list[tuple[str, dict[str, Any]]] = [
    ("regex", {"pattern": r"^\w+$", "multiline": True}),
    ("regex", {"pattern": r"a|b", "must_match": False, "ignore_case": True}),
    ("regex", {"pattern": r"x*", "must_match": False}),
    ("contains", {"values": ("a", "Summary"), "whole_word": True, "ignore_case": True}),
    ("contains", {"values": ("a", "b"), "mode": "any"}),
    ("not_contains", {"values": ("é", "..."), "whole_word": True}),
    ("not_contains", {"values": ("a", "b"), "mode": "all"}),
    ("starts_with", {"value": "#", "ignore_case": True}),
    ("ends_with", {"value": "…"}),
    (
        "length",
        {
            "min_words": 1,
            "max_words": 5,
            "min_chars": 2,
            "max_chars": 50,
            "min_lines": 1,
            "max_lines": 3,
        },
    ),
    ("no_placeholders", {}),
    ("no_placeholders", {"ignore_code": True, "extra": (r"\d+",), "disable": ("todo",)}),
    ("required_sections", {"sections": ("Summary", "2. Usage"), "ordered": True}),
]


@pytest.mark.parametrize(("name", "options"), CASES)
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_no_text_makes_a_checker_raise(name: str, options: dict[str, Any], text: str) -> None:
    result = CHECKERS[name](text, **options)
    assert isinstance(result, CheckResult)
    assert result.passed or result.issues


# -- the reference page -----------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checkers.md"


def _doc_criteria() -> list[dict[str, Any]]:
    blocks = re.findall(r"^```toml\n(.*?)^```", DOCS.read_text(encoding="utf-8"), re.M | re.S)
    return [c for block in blocks for c in tomllib.loads(block)["criteria"]]


def test_every_registered_builtin_checker_has_a_section_in_the_docs() -> None:
    titles = re.findall(r"^## (.+)$", DOCS.read_text(encoding="utf-8"), re.M)
    documented = {name.strip() for t in titles for name in t.split("/")}
    registry = gradeloop.grading.Registry()
    builtin = {c.name for c in registry if c.plugin == "builtin"}
    assert builtin >= set(CHECKERS) | set(JSON_CHECKERS)
    assert builtin <= documented


def test_the_docs_examples_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a rubric with no file reads relative paths from the working directory
    (tmp_path / "reply.schema.json").write_text('{"type": "object"}', "utf-8")
    monkeypatch.chdir(tmp_path)
    builtin = {c.name for c in gradeloop.grading.Registry() if c.plugin == "builtin"}
    examples = [c for c in _doc_criteria() if c["checker"] in builtin]
    assert {c["checker"] for c in examples} == builtin  # every checker has an example
    for criterion in examples:
        Rubric.from_dict({"criteria": [criterion]})


# -- one notion of code: no_placeholders(ignore_code) reads the prose sentence_len reads --

CODE_PIECES = [
    "```\nx = 1  # TODO\n```",  # fenced
    "    x = 1  # TODO",  # indented code (after a blank line)
    "Call `todo(TODO)` first.",  # inline code
    "Press <kbd>TODO</kbd> now.",  # inline code as HTML
    "$$\nTODO\n$$",  # math
    "<!-- TODO -->",  # an HTML comment
]
PROSE_PIECES = ["The rest is TODO.", "- an item, TODO", "| a | TODO |\n|---|---|", "# TODO"]


@pytest.mark.parametrize("piece", CODE_PIECES)
def test_ignore_code_skips_what_sentence_len_treats_as_code(piece: str) -> None:
    from gradeloop_checkers.sentence_len import sentences

    text = f"Intro.\n\n{piece}\n\nOutro."
    assert no_placeholders(text, ignore_code=True).passed
    # sentence_len's prose holds no TODO outside its inline code either
    assert not any("TODO" in re.sub(r"`[^`]*`", "", s.text) for s in sentences(text))
    assert not no_placeholders(text).passed  # checked by default, code included


@pytest.mark.parametrize("piece", PROSE_PIECES)
def test_ignore_code_still_reads_prose(piece: str) -> None:
    from gradeloop_checkers.sentence_len import sentences

    text = f"Intro.\n\n{piece}\n\nOutro."
    assert not no_placeholders(text, ignore_code=True).passed
    assert any("TODO" in s.text for s in sentences(text))


@given(st.lists(st.sampled_from(CODE_PIECES + PROSE_PIECES + ["Plain words."]), max_size=6))
def test_no_placeholders_flags_a_line_exactly_when_its_prose_says_todo(pieces: list[str]) -> None:
    from gradeloop_checkers.markdown._lines import prose_lines

    text = "\n\n".join(pieces)
    flagged = {
        int(issue.split(" on line ")[1].split(":")[0])
        for issue in no_placeholders(text, ignore_code=True, disable=("ellipsis",)).issues
        if " on line " in issue
    }
    expected = {n + 1 for n, line in prose_lines(text).items() if "TODO" in line}
    assert flagged == expected
