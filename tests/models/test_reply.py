"""first_text: the stop reason is read before the content, and blocks are found by type."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from gradeloop import first_text
from gradeloop.errors import NotAnAnswer
from gradeloop.testing import refusal, text_reply, thinking_only, truncated


def block(kind: str, text: str | None = None) -> SimpleNamespace:
    b = SimpleNamespace(type=kind)
    if kind == "text":
        b.text = text  # other block kinds get no .text attribute at all
    return b


def reply(stop_reason: str | None, *blocks: Any, **extra: Any) -> SimpleNamespace:
    return SimpleNamespace(stop_reason=stop_reason, content=list(blocks), **extra)


def not_an_answer(r: Any) -> NotAnAnswer:
    with pytest.raises(NotAnAnswer) as info:
        first_text(r)
    return info.value


# -- finished replies -----------------------------------------------------------------


def test_a_plain_text_reply_is_read() -> None:
    assert first_text(reply("end_turn", block("text", "the draft"))) == "the draft"


def test_a_real_sdk_message_is_read() -> None:
    assert first_text(text_reply("from a Message")) == "from a Message"


def test_text_after_a_thinking_block_is_found_by_type_not_position() -> None:
    assert first_text(reply("end_turn", block("thinking"), block("text", "answer"))) == "answer"
    assert first_text(text_reply("answer", thinking="hmm")) == "answer"


def test_stop_sequence_and_a_missing_stop_reason_are_finished() -> None:
    assert first_text(reply("stop_sequence", block("text", "a"))) == "a"
    assert first_text(SimpleNamespace(content=[block("text", "b")])) == "b"


def test_an_empty_text_block_is_skipped_for_a_later_one() -> None:
    assert first_text(reply("end_turn", block("text", "  "), block("text", "real"))) == "real"


# -- refusal --------------------------------------------------------------------------


def test_refusal_with_empty_content_says_declined_with_the_details() -> None:
    err = not_an_answer(refusal(category="cyber", explanation="exploit development"))
    assert "declined" in str(err)
    assert "category: cyber" in str(err) and "explanation: exploit development" in str(err)
    assert err.reason == "refusal"
    assert err.stop_details is not None and err.stop_details.category == "cyber"


def test_refusal_details_may_be_a_dict_or_absent() -> None:
    err = not_an_answer(reply("refusal", stop_details={"category": "bio"}))
    assert "declined" in str(err) and "category: bio" in str(err)
    bare = not_an_answer(reply("refusal"))
    assert "declined" in str(bare) and "no stop_details" in str(bare)


def test_refusal_is_checked_before_the_content() -> None:
    # Text in a refused reply is not an answer either.
    err = not_an_answer(reply("refusal", block("text", "I can't help with that.")))
    assert "declined" in str(err)


# -- truncation -----------------------------------------------------------------------


def test_max_tokens_says_max_tokens_and_how_to_fix_it() -> None:
    err = not_an_answer(truncated("half a dra"))
    assert "max_tokens" in str(err)
    assert "raise max_tokens" in str(err) and "split the task" in str(err)
    assert err.reason == "max_tokens"


def test_context_window_exceeded_is_a_truncation() -> None:
    err = not_an_answer(reply("model_context_window_exceeded", block("text", "partial")))
    assert "model_context_window_exceeded" in str(err) and "max_tokens" in str(err)
    assert err.reason == "max_tokens"


# -- no text --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        [block("thinking")],
        [block("redacted_thinking")],
        [],
        [block("some_future_block")],
        [SimpleNamespace(type="mystery", text=None)],
        [block("text", "")],
    ],
)
def test_no_text_block_is_reported(content: list[Any]) -> None:
    err = not_an_answer(reply("end_turn", *content))
    assert "no text block" in str(err)
    assert err.reason == "no_text"


def test_a_real_thinking_only_message_has_no_text_block() -> None:
    err = not_an_answer(thinking_only())
    assert "no text block" in str(err) and "thinking" in str(err)


def test_a_reply_without_content_at_all_has_no_text_block() -> None:
    assert "no text block" in str(not_an_answer(SimpleNamespace(stop_reason="end_turn")))


@pytest.mark.parametrize(
    ("stop", "words"),
    [
        ("pause_turn", "pause_turn"),
        ("tool_use", "tool_use"),
        ("brand_new_reason", "brand_new_reason"),
    ],
)
def test_unfinished_turns_are_not_answers_even_with_text(stop: str, words: str) -> None:
    err = not_an_answer(reply(stop, block("text", "partial so far")))
    assert "no text block holds a finished answer" in str(err) and words in str(err)
    assert err.reason == "no_text"
