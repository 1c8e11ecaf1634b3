"""Transcripts as users hold them after a tool loop: the SDKs' own objects (anthropic,
openai chat and Responses, langchain-core), built here with the installed SDKs'
types, and the dict shapes of the Vercel AI SDK (recorded from its type definitions,
vercel/ai packages/provider-utils/src/types/content-part.ts and
packages/ai/src/ui/ui-messages.ts; v4's from tag ai@4.3.9).

Every call shape is read, or refused by name: none is skipped, so a trajectory
checker never passes on a call it could not see.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import Message
from anthropic.types.beta import BetaMessage
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from gradeloop import Rubric, Transcript, grade
from gradeloop.errors import InputError, TranscriptError
from gradeloop.grading import ToolCall

NO_DELETES = Rubric.from_dict(
    {
        "criteria": [
            {
                "key": "no_deletes",
                "description": "Deletes nothing.",
                "checker": "tool_not_called",
                "options": {"names": ["delete_db"]},
            }
        ]
    }
)


def deletes(messages: Any) -> bool:
    """Whether grading sees the agent delete: tool_not_called fails."""
    return not grade(messages, NO_DELETES, skip_judge=True)["no_deletes"].passed


# -- Anthropic: the SDK's own tool loop ---------------------------------------------------


def anthropic_response(*blocks: dict[str, Any], **extra: Any) -> Message:
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": list(blocks),
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            **extra,
        }
    )


USE = {"type": "tool_use", "id": "toolu_1", "name": "delete_db", "input": {"db": "prod"}}


def test_anthropics_tool_loop_appending_response_content_is_read() -> None:
    response = anthropic_response({"type": "text", "text": "Deleting."}, USE)
    messages: list[Any] = [{"role": "user", "content": "clean up"}]
    messages.append({"role": "assistant", "content": response.content})  # SDK blocks
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "dropped"}
    messages.append({"role": "user", "content": [result]})
    t = Transcript.from_messages(messages)
    assert t.tool_calls == [ToolCall("delete_db", {"db": "prod"}, 1, "toolu_1")]
    assert t.tool_results[0].name == "delete_db"
    dumped = {"role": "assistant", "content": [b.model_dump(mode="json") for b in response.content]}
    assert t == Transcript.from_messages([messages[0], dumped, messages[2]])  # as model_dump
    assert deletes(messages)


def test_anthropic_message_object_with_a_code_execution_container_is_a_message() -> None:
    response = anthropic_response(
        {"type": "text", "text": "Done."},
        container={"id": "container_1", "expires_at": "2026-12-05T10:00:00Z", "skills": None},
    )
    assert not isinstance(response.model_dump()["container"]["expires_at"], str)  # a datetime
    t = Transcript.from_messages([{"role": "user", "content": "hi"}, response])
    assert t.final_text == "Done."
    assert t.messages[1]["container"]["expires_at"].startswith("2026-12-05T10:00:00")


def test_a_plain_dict_message_with_sdk_blocks_keeps_them_as_json() -> None:
    response = anthropic_response(USE)
    t = Transcript.from_messages([{"role": "assistant", "content": response.content}])
    assert t.messages == [{"role": "assistant", "content": [response.content[0].model_dump()]}]


def test_server_tool_results_reach_the_judge_with_their_content() -> None:
    reply = BetaMessage.model_validate(
        {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srv_1",
                    "name": "web_search",
                    "input": {"query": "refund policy"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srv_1",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://example.com/refunds",
                            "title": "Refunds in 30 days",
                            "encrypted_content": "E" * 500,
                            "page_age": None,
                        },
                    ],
                },
                {
                    "type": "mcp_tool_use",
                    "id": "mcp_1",
                    "name": "crm_lookup",
                    "server_name": "crm",
                    "input": {"customer": "A1"},
                },
                {
                    "type": "mcp_tool_result",
                    "tool_use_id": "mcp_1",
                    "is_error": False,
                    "content": [{"type": "text", "text": "customer A1: gold tier"}],
                },
                {"type": "text", "text": "Refunds take 30 days."},
            ],
        }
    )
    shown = Transcript.from_messages([reply]).render()
    assert '    result of web_search: {"type": "web_search_result", ' in shown
    assert '"title": "Refunds in 30 days", "url": "https://example.com/refunds"}' in shown
    assert "EEEE" not in shown  # the opaque token is not for the judge
    assert "    result of crm_lookup: customer A1: gold tier" in shown
    assert "[web_search_tool_result]" not in shown and "[mcp_tool_result]" not in shown


def test_a_server_tools_error_result_is_an_error() -> None:
    block = {
        "type": "web_search_tool_result",
        "tool_use_id": "s",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    }
    t = Transcript.from_messages([{"role": "assistant", "content": [block]}])
    assert t.tool_results[0].is_error
    assert "max_uses_exceeded" in t.tool_results[0].content


# -- OpenAI chat: the cookbook's loop -----------------------------------------------------


def completion(*calls: dict[str, Any], content: str | None = None) -> ChatCompletion:
    message = {"role": "assistant", "content": content, "tool_calls": list(calls) or None}
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-x",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        }
    )


DELETE_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "delete_db", "arguments": '{"db": "prod"}'},
}


def test_openais_cookbook_loop_appending_the_message_object_is_read() -> None:
    done = completion(DELETE_CALL)
    messages: list[Any] = [{"role": "user", "content": "clean up"}]
    messages.append(done.choices[0].message)  # a ChatCompletionMessage
    messages.append({"role": "tool", "tool_call_id": "call_1", "content": "dropped"})
    messages.append(completion(content="All clean.").choices[0].message)
    t = Transcript.from_messages(messages)
    assert t.tool_calls == [ToolCall("delete_db", {"db": "prod"}, 1, "call_1")]
    assert t.final_text == "All clean."
    assert deletes(messages)


def test_an_assistants_tool_calls_as_sdk_objects_in_a_dict_are_read() -> None:
    message = completion(DELETE_CALL).choices[0].message
    t = Transcript.from_messages([{"role": "assistant", "tool_calls": message.tool_calls}])
    assert [c.name for c in t.tool_calls] == ["delete_db"]


def test_a_custom_tool_call_is_read_with_its_text_as_input() -> None:
    custom = {"id": "call_2", "type": "custom", "custom": {"name": "run_sql", "input": "DROP x"}}
    t = Transcript.from_messages([completion(custom).choices[0].message])
    assert t.tool_calls == [ToolCall("run_sql", {"input": "DROP x"}, 0, "call_2")]


def test_a_whole_completion_is_refused_with_the_part_to_give() -> None:
    with pytest.raises(TranscriptError, match=r"give completion\.choices\[0\]\.message"):
        Transcript.from_messages([completion(content="hi")])


def test_a_refusal_is_the_assistants_text() -> None:
    message = completion().choices[0].message.model_copy(update={"refusal": "I can't help."})
    assert Transcript.from_messages([message]).final_text == "I can't help."


# -- OpenAI Responses ---------------------------------------------------------------------


def response(*output: dict[str, Any]) -> Response:
    return Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-x",
            "output": list(output),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )


def fcall(name: str, args: str, call_id: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": args,
        "status": "completed",
    }


FIRST = response(
    {"type": "reasoning", "id": "rs_1", "summary": []},
    fcall("lookup_order", '{"id": "A1"}', "call_a"),
    fcall("delete_db", '{"db": "prod"}', "call_b"),
)
LAST = response(
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
    },
)


def responses_run(as_dicts: bool) -> list[Any]:
    items: list[Any] = [{"role": "user", "content": "Where is A1?"}, *FIRST.output]
    items += [
        {"type": "function_call_output", "call_id": "call_a", "output": '{"status": "shipped"}'},
        {"type": "function_call_output", "call_id": "call_b", "output": "dropped"},
        *LAST.output,
    ]
    return (
        [i.model_dump(mode="json") if hasattr(i, "model_dump") else i for i in items]
        if as_dicts
        else items
    )


@pytest.mark.parametrize("as_dicts", [False, True], ids=["objects", "dicts"])
def test_responses_items_are_a_first_class_transcript(as_dicts: bool) -> None:
    t = Transcript.from_messages(responses_run(as_dicts))
    assert t.tool_calls == [
        ToolCall("lookup_order", {"id": "A1"}, 1, "call_a"),
        ToolCall("delete_db", {"db": "prod"}, 1, "call_b"),  # one response: one turn
    ]
    assert [(r.name, r.content) for r in t.tool_results] == [
        ("lookup_order", '{"status": "shipped"}'),
        ("delete_db", "dropped"),
    ]
    assert t.assistant_turns == 2 and t.final_text == "Done."
    assert [turn.index for turn in t.turns] == [0, 1, 4, 5, 6]
    assert t.turns[1].other == ("reasoning",)
    assert deletes(responses_run(as_dicts))


def test_built_in_tool_calls_are_named_for_their_tool() -> None:
    out = response(
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "refunds"},
        },
        {
            "type": "mcp_call",
            "id": "mcp_1",
            "name": "delete_db",
            "server_label": "ops",
            "arguments": '{"db": "prod"}',
            "output": "dropped",
        },
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "code": "print(1)",
            "container_id": "c",
            "status": "completed",
            "outputs": [{"type": "logs", "logs": "1\n"}],
        },
    ).output
    t = Transcript.from_messages(out)
    assert [(c.name, c.args) for c in t.tool_calls] == [
        ("web_search", {"type": "search", "query": "refunds"}),
        ("delete_db", {"db": "prod"}),
        ("code_interpreter", {"code": "print(1)"}),
    ]
    assert [(r.name, r.content) for r in t.tool_results] == [
        ("delete_db", "dropped"),
        ("code_interpreter", "1\n"),
    ]
    assert deletes(out)


def test_a_function_call_part_in_a_content_list_is_a_call() -> None:
    part = fcall("delete_db", "{}", "call_9")
    assert deletes([{"role": "assistant", "content": [part]}])


def test_an_item_reference_and_a_whole_response_are_refused_with_the_fix() -> None:
    with pytest.raises(TranscriptError, match=r"item_reference.*response\.output"):
        Transcript.from_messages([{"type": "item_reference", "id": "fc_1"}])
    with pytest.raises(TranscriptError, match=r"give its items \(response\.output\)"):
        Transcript.from_messages([FIRST])


# -- LangChain, read directly -------------------------------------------------------------


def langchain_run() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    return [
        HumanMessage("Clean up the test data."),
        AIMessage(
            "",
            tool_calls=[{"name": "lookup_order", "args": {"id": "A1"}, "id": "c1"}],
            invalid_tool_calls=[
                {
                    "name": "delete_db",
                    "args": '{"db": prod}',
                    "id": "c2",
                    "error": "Function delete_db arguments are not valid JSON.",
                }
            ],
        ),
        ToolMessage("no such order", tool_call_id="c1", status="error"),
        AIMessage("I could not clean up."),
    ]


def langchain_forms() -> dict[str, list[Any]]:
    from langchain_core.load import dumpd
    from langchain_core.messages import messages_to_dict

    run = langchain_run()
    return {
        "objects": run,
        "model_dump": [m.model_dump(mode="json") for m in run],
        "messages_to_dict": messages_to_dict(run),
        "dumpd": [dumpd(m) for m in run],
    }


@pytest.mark.parametrize("form", ["objects", "model_dump", "messages_to_dict", "dumpd"])
def test_langchain_messages_are_read_with_their_invalid_calls(form: str) -> None:
    messages = langchain_forms()[form]
    t = Transcript.from_messages(messages)
    assert [(turn.role, turn.index) for turn in t.turns] == [
        ("user", 0),
        ("assistant", 1),
        ("tool", 2),
        ("assistant", 3),
    ]
    valid, invalid = t.tool_calls
    assert valid == ToolCall("lookup_order", {"id": "A1"}, 1, "c1")
    assert (invalid.name, invalid.args, invalid.id) == ("delete_db", {}, "c2")
    assert invalid.error is not None and "not valid JSON" in invalid.error
    assert t.tool_results[0].is_error and t.tool_results[0].name == "lookup_order"
    assert t.final_text == "I could not clean up."
    assert deletes(messages)
    assert "calls delete_db(<invalid arguments" in t.render()


def test_langchains_documented_converter_drops_the_invalid_call() -> None:
    """Why LangChain messages are read directly: through the converter, the
    malformed delete_db call is gone and tool_not_called would pass."""
    from langchain_core.messages import convert_to_openai_messages

    converted = convert_to_openai_messages(langchain_run())
    assert not deletes(converted)
    assert deletes(langchain_run())


def test_a_langchain_message_holding_its_calls_twice_has_each_call_once() -> None:
    from langchain_core.messages import AIMessage

    use = {"type": "tool_use", "id": "t1", "name": "lookup_order", "input": {"id": "A1"}}
    message = AIMessage(
        [{"type": "text", "text": "Looking."}, use],
        tool_calls=[{"name": "lookup_order", "args": {"id": "A1"}, "id": "t1"}],
    )
    v1 = AIMessage(content_blocks=message.content_blocks, tool_calls=message.tool_calls)
    for m in (message, v1):
        t = Transcript.from_messages([m])
        assert t.tool_calls == [ToolCall("lookup_order", {"id": "A1"}, 0, "t1")]
        assert t.final_text == "Looking."


def test_a_json_file_of_langchain_dicts_is_a_transcript_in_the_cli(tmp_path: Path) -> None:
    from langchain_core.messages import messages_to_dict

    from gradeloop.cli._io import read_draft

    path = tmp_path / "run.json"
    path.write_text(json.dumps(messages_to_dict(langchain_run())), encoding="utf-8")
    draft = read_draft(str(path), "draft")
    assert isinstance(draft, Transcript) and len(draft.tool_calls) == 2


# -- the Vercel AI SDK --------------------------------------------------------------------

V5_MODEL = [
    {"role": "user", "content": "clean up"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Deleting."},
            {
                "type": "tool-call",
                "toolCallId": "c1",
                "toolName": "delete_db",
                "input": {"db": "prod"},
            },
        ],
    },
    {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "delete_db",
                "output": {"type": "text", "value": "dropped"},
            },
        ],
    },
]
V4_UI = [
    {
        "id": "m1",
        "role": "user",
        "content": "clean up",
        "parts": [{"type": "text", "text": "clean up"}],
    },
    {
        "id": "m2",
        "role": "assistant",
        "content": "Deleting.",
        "toolInvocations": [
            {
                "state": "result",
                "toolCallId": "c1",
                "toolName": "delete_db",
                "args": {"db": "prod"},
                "result": "dropped",
            }
        ],
        "parts": [
            {"type": "text", "text": "Deleting."},
            {
                "type": "tool-invocation",
                "toolInvocation": {
                    "state": "result",
                    "toolCallId": "c1",
                    "toolName": "delete_db",
                    "args": {"db": "prod"},
                    "result": "dropped",
                },
            },
        ],
    },
]
V5_UI = [
    {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "clean up"}]},
    {
        "id": "m2",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-delete_db",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"db": "prod"},
                "output": {"rows": 0},
            },
            {"type": "text", "text": "Deleting."},
        ],
    },
]
V4_UI_KEY_ONLY = [
    {
        "id": "m2",
        "role": "assistant",
        "content": "Deleting.",
        "toolInvocations": [
            {"state": "call", "toolCallId": "c1", "toolName": "delete_db", "args": {"db": "prod"}}
        ],
    },
]


@pytest.mark.parametrize(
    "messages",
    [V5_MODEL, V4_UI, V5_UI, V4_UI_KEY_ONLY],
    ids=["v5 model messages", "v4 UI messages", "v5 UI messages", "v4 toolInvocations"],
)
def test_vercel_ai_sdk_calls_are_read_once_with_their_results(messages: Any) -> None:
    t = Transcript.from_messages(messages)
    assert [(c.name, c.args, c.id) for c in t.tool_calls] == [("delete_db", {"db": "prod"}, "c1")]
    assert t.final_text == "Deleting."
    assert deletes(messages)
    if messages is not V4_UI_KEY_ONLY:
        assert t.tool_results[0].name == "delete_db"


def test_a_vercel_v4_tool_call_part_with_args_is_read() -> None:
    part = {"type": "tool-call", "toolCallId": "c", "toolName": "delete_db", "args": {}}
    assert deletes([{"role": "assistant", "content": [part]}])


def test_a_langchain_standard_tool_call_block_is_a_call() -> None:
    part = {"type": "tool_call", "id": "c", "name": "delete_db", "args": {}}
    assert deletes([{"role": "assistant", "content": [part]}])


# -- what is refused, by name -------------------------------------------------------------

REFUSED = [
    (
        [{"role": "assistant", "content": [{"type": "toolCall", "name": "delete_db"}]}],
        "content block 0 has type 'toolCall', which looks like a tool call",
    ),
    (
        [{"role": "assistant", "content": [{"type": "function", "name": "delete_db"}]}],
        "type 'function', which looks like a tool call",
    ),
    (
        [{"role": "assistant", "toolCalls": [{"name": "delete_db"}]}],
        "has a key 'toolCalls' that looks like tool calls and is not read",
    ),
    (
        [{"type": "ai", "content": "", "function_calls": []}],
        "has a key 'function_calls' that looks like tool calls",
    ),
    (
        [{"type": "future_tool_call", "name": "delete_db"}],
        "has type 'future_tool_call', which looks like a tool call",
    ),
    (
        [{"role": "user", "function_call": {"name": "delete_db", "arguments": "{}"}}],
        "is a 'user' message with 'function_call'; only assistants call",
    ),
    (
        [{"role": "tool", "function_call": {"name": "delete_db", "arguments": "{}"}}],
        "is a 'tool' message with 'function_call'",
    ),
    ([{"role": "system", "toolInvocations": []}], "is a 'system' message with 'toolInvocations'"),
    (
        [{"type": "human", "content": "x", "tool_calls": [{"name": "f", "args": {}}]}],
        "only AI messages call",
    ),
    (
        [{"type": "ai", "content": "", "invalid_tool_calls": [{"name": None, "args": "{"}]}],
        "a call without a tool name",
    ),
    (
        [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "x", "name": "a", "input": {}}],
                "tool_calls": [{"id": "x", "function": {"name": "b", "arguments": "{}"}}],
            }
        ],
        "gives the call id 'x' to two tools, a and b",
    ),
    (
        [{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c"}]}],
        "tool-call block 0 has no tool 'toolName'",
    ),
]


@pytest.mark.parametrize(("messages", "said"), REFUSED, ids=[r[1][:40] for r in REFUSED])
def test_a_call_shape_that_is_not_read_is_refused_by_name(messages: Any, said: str) -> None:
    with pytest.raises(TranscriptError) as info:
        Transcript.from_messages(messages)
    assert said in str(info.value)
    assert info.value.index == 0


def test_the_hint_for_an_object_names_what_it_is_not_langchain() -> None:
    class Note:
        content = "x"
        type = "note"

    with pytest.raises(TranscriptError) as info:
        Transcript.from_messages([Note()])
    assert "Note is not JSON data" in str(info.value)
    assert "LangChain" not in str(info.value)


def test_shapes_that_look_alike_but_are_not_calls_are_kept_as_other() -> None:
    t = Transcript.from_messages(
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"},
                    {"type": "mcp_tool_listing", "tools": []},
                    {"type": "step-start"},
                ],
            }
        ]
    )
    assert t.tool_calls == [] and t.turns[0].other == (
        "tool-approval-request",
        "mcp_tool_listing",
        "step-start",
    )


# -- files: a key written twice -----------------------------------------------------------


DUPLICATED = (
    '[{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", '
    '"name": "delete_db", "name": "lookup_order", "input": {}}]}]'
)


def test_a_key_written_twice_in_a_transcript_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(DUPLICATED, encoding="utf-8")
    with pytest.raises(InputError, match=r"run.json is ambiguous: the key 'name' appears twice"):
        Transcript.load(path)
    path.write_text(DUPLICATED.replace('"name": "delete_db", ', ""), encoding="utf-8")
    assert Transcript.load(path).tool_calls[0].name == "lookup_order"


def test_a_key_written_twice_on_a_jsonl_line_is_refused(tmp_path: Path) -> None:
    from gradeloop.migration import read_drafts

    path = tmp_path / "drafts.jsonl"
    line = {
        "id": "a",
        "task": "t",
        "messages": json.loads(DUPLICATED.replace('"name": "delete_db", ', "")),
    }
    text = json.dumps(line).replace(
        '"name": "lookup_order"', '"name": "delete_db", "name": "lookup_order"'
    )
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"drafts.jsonl:1: .*the key 'name' appears twice"):
        read_drafts(path)
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert read_drafts(path)[0].draft.tool_calls[0].name == "lookup_order"  # type: ignore[union-attr]


def test_a_cli_json_transcript_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    from gradeloop.cli._io import read_draft

    path = tmp_path / "run.json"
    path.write_text(DUPLICATED, encoding="utf-8")
    with pytest.raises(InputError, match="the key 'name' appears twice"):
        read_draft(str(path), "draft")
