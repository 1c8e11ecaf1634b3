"""A raw control character inside a judge reply's JSON string (issue 40).

llama-cpp-python's grammar lets a small model write a raw newline or tab inside a
string; JSON wants it escaped. gradeloop reads such a reply as it stands, on every path
(first reply and repair): a control character can only sit inside a string, so it never
changes a key's boolean or score. Everything else stays strict: duplicate keys, types,
ranges, missing keys.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Criterion
from gradeloop.grading._strict import WireError, strict_json, strict_verdict
from gradeloop.models import OpenAICompatibleJudge
from tests.support.oai_emulator import OAIEmulator, chat

CITED = Criterion(key="api_cited", description="Every API claim cites a spec section.")
TONE = Criterion(key="tone", description="Polite.", scale="score", threshold=7)
CRITERIA = (CITED, TONE)
RAW = "".join(chr(c) for c in range(0x20) if chr(c) not in "\n")  # every C0 control but \n


def reply(reasoning: str, issue: str, met: bool = True, tone: int = 8) -> str:
    """A verdict's JSON text with ``reasoning`` and ``issue`` put in raw (unescaped)."""
    text = json.dumps(
        {"reasoning": "@R@", "scores": {"tone": tone}, "criteria_met": {"api_cited": met},
         "passed": met, "issues": ["@I@"]}
    )  # fmt: skip
    return text.replace("@R@", reasoning).replace("@I@", issue)


def test_a_raw_newline_and_tab_in_strings_is_a_verdict_on_the_first_reply(
    oai_emulator: OAIEmulator,
) -> None:
    oai_emulator.enqueue(chat(reply("line one\nline\ttwo", "api_cited: cite\n4.4", met=False)))
    judge = OpenAICompatibleJudge(client=oai_emulator.client(), model="gemma", structured="json")
    verdict = judge.evaluate("t", "d", CRITERIA)
    assert verdict.criteria_met == {"api_cited": False, "tone": True}
    assert verdict.reasoning == "line one\nline\ttwo" and verdict.issues == ["api_cited: cite\n4.4"]
    assert [c.kind for c in judge.calls] == ["evaluate"]  # no repair request was needed


@given(
    reasoning=st.text(alphabet=st.sampled_from([*RAW, "\n", "a", " "]), max_size=20),
    met=st.booleans(),
    tone=st.integers(1, 10),
)
def test_control_characters_in_strings_never_change_what_a_reply_decides(
    reasoning: str, met: bool, tone: int
) -> None:
    raw = strict_verdict(strict_json(reply(reasoning, reasoning, met, tone)), CRITERIA)
    escaped = json.loads(reply("", "", met, tone))
    clean = strict_verdict(escaped, CRITERIA)
    assert raw.criteria_met == clean.criteria_met and raw.scores == clean.scores
    assert raw.passed == clean.passed and raw.reasoning == reasoning


@pytest.mark.parametrize(
    "text, why",
    [
        ('{"a": 1, "a": 2}', "appears twice"),  # duplicates stay invalid, raw characters or not
        ('{"reasoning": "x\n", "reasoning": "y"}', "appears twice"),
        ("[1, NaN]", "NaN is not a JSON value"),
    ],
)
def test_the_rest_of_the_reading_stays_strict(text: str, why: str) -> None:
    with pytest.raises(WireError, match=why):
        strict_json(text)


@pytest.mark.parametrize(
    "doc",
    [
        # a key spelled with a control character matches no criterion: the key is missing
        reply("r", "i").replace('"api_cited": true', '"api\ncited": true'),
        # a boolean is never a string, with or without a raw character in it
        reply("r", "i").replace('"api_cited": true', '"api_cited": "true\n"'),
        reply("r", "i").replace('"tone": 8', '"tone": "8\t"'),
    ],
)
def test_a_control_character_cannot_smuggle_a_pass(doc: str) -> None:
    with pytest.raises(WireError):
        strict_verdict(strict_json(doc), CRITERIA)


def test_a_raw_escape_from_a_reply_is_shown_escaped_on_the_terminal(
    oai_emulator: OAIEmulator, tmp_path: Any
) -> None:
    from tests.support.cli_helpers import cli

    rubric = tmp_path / "rubric.toml"
    rubric.write_text('[[criteria]]\nkey = "api_cited"\ndescription = "Cites."\n')
    oai_emulator.enqueue(chat(reply("r", "api_cited: \x1b[31mno cite\x1b[0m", met=False)))
    ran = cli(
        "grade", "-", "--rubric", str(rubric), "--task", "t", "--provider", "openai-compatible",
        "--base-url", oai_emulator.base_url, "--judge-model", "m", "--structured", "json",
        "--no-cache", "--no-history", stdin="draft", tty=True,
    )  # fmt: skip
    assert ran.code == 1, ran.err
    assert "\x1b[31m" not in ran.out and "\\x1b[31mno cite" in ran.out
