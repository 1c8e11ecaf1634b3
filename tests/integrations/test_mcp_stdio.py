"""Every MCP request that carries an id gets an answer, over a raw stdio pipe.

The mcp library's stdio transport drops a line it cannot validate as a JSON-RPC 2.0
message (it logs it at debug level), so these requests used to wait forever: a
message with no "method", "jsonrpc": "1.0", string "params", and a tools/call whose
arguments hold the escape \\ud800 (issue 11). gradeloop's server answers each with a
JSON-RPC error; valid requests (the twins) are answered by the library as before.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop.integrations.mcp_server import check_line
from tests.support import hostile
from tests.support.cli_helpers import ROOT

EVALUATE = {
    "name": "evaluate_output",
    "arguments": {
        "output": "a b",
        "criteria": [
            {
                "key": "short",
                "description": "At most 6 words.",
                "checker": "length",
                "options": {"max_words": 6},
            }
        ],
    },
}


class Pipe:
    """``python -m gradeloop mcp`` spoken to line by line, as a raw client would."""

    def __init__(self, home: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        # the module's own home: this fixture outlives the per-test one conftest sets,
        # and must never read or write the user's real history
        env["GRADELOOP_HOME"] = home
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gradeloop", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
        )
        self.pending = b""
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        self.initialized = self.receive(60)
        assert self.initialized["id"] == 0
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 15) -> dict[str, Any]:
        # Lines are split here, from raw reads: a buffered readline() may read two
        # answers at once, and select() would then wait for the second in vain.
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            assert ready, "no answer: the client would wait forever"
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert chunk, "the server closed its output"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def pipe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipe]:
    p = Pipe(str(tmp_path_factory.mktemp("mcp-home")))
    yield p
    p.close()


ISSUE_CASES = {
    "no method": ('{"jsonrpc": "2.0", "id": 10}', 10, 'no "method"'),
    "jsonrpc 1.0": ('{"jsonrpc": "1.0", "id": 11, "method": "tools/list"}', 11, '"2.0"'),
    "string params": (
        '{"jsonrpc": "2.0", "id": "twelve", "method": "tools/list", "params": "x"}',
        "twelve",
        '"params" must be an object',
    ),
    "lone surrogate": (
        json.dumps(
            {"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": EVALUATE}
        ).replace('"a b"', '"a \\ud800 b"'),
        13,
        "lone UTF-16 surrogate",
    ),
}


@pytest.mark.parametrize("case", list(ISSUE_CASES))
def test_a_malformed_request_with_an_id_gets_an_error_with_that_id(pipe: Pipe, case: str) -> None:
    line, request_id, fragment = ISSUE_CASES[case]
    pipe.send(line)
    answer = pipe.receive()
    assert answer["id"] == request_id
    assert answer["error"]["code"] == types.INVALID_REQUEST
    assert fragment in answer["error"]["message"]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("hello", types.PARSE_ERROR),
        ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', types.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', types.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', types.INVALID_REQUEST),
    ],
)
def test_a_request_whose_id_cannot_be_read_gets_an_error_with_a_null_id(
    pipe: Pipe, line: str, code: int
) -> None:
    pipe.send(line)
    answer = pipe.receive()
    assert answer["id"] is None and answer["error"]["code"] == code


def test_a_batch_gets_an_error_for_each_id(pipe: Pipe) -> None:
    batch = [{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in (30, 31)]
    pipe.send(json.dumps(batch))
    assert [pipe.receive()["id"] for _ in batch] == [30, 31]


def test_the_twins_valid_requests_are_answered_by_the_library(pipe: Pipe) -> None:
    pipe.send('{"jsonrpc": "2.0", "id": 40, "method": "tools/list"}')
    listed = pipe.receive()
    assert listed["id"] == 40 and len(listed["result"]["tools"]) == 4
    call = {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": EVALUATE}
    pipe.send(json.dumps(call))
    result = pipe.receive()
    assert result["id"] == 41 and result["result"]["structuredContent"]["passed"] is True
    pipe.send(b'{"jsonrpc": "2.0", "id": 42, "method": "tools/list", "x": "\xff"}')
    assert pipe.receive()["id"] == 42  # bad UTF-8 bytes are replaced, the request answered
    pipe.send('{"jsonrpc": "2.0", "id": 43, "method": "no/such"}')
    assert pipe.receive()["error"]["code"] == types.METHOD_NOT_FOUND


def test_a_notification_and_a_blank_line_get_no_answer(pipe: Pipe) -> None:
    pipe.send("")
    pipe.send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}')
    pipe.send('{"jsonrpc": "2.0", "id": 50, "method": "tools/list"}')
    assert pipe.receive()["id"] == 50  # the next answer is for the next request


# -- the check itself, over generated messages --------------------------------------------------

IDS = st.integers(-(2**31), 2**31) | st.text(max_size=8)
JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"id": draw(IDS)}
    if draw(st.booleans()):
        message["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2, None]))
    if draw(st.booleans()):
        message["method"] = draw(st.sampled_from(["tools/list", "tools/call", "x", 5, ""]))
    if draw(st.booleans()):
        message["params"] = draw(JUNK)
    return message


@settings(max_examples=hostile.examples(300), deadline=None)
@given(message=messages(), surrogate=st.booleans())
def test_no_request_with_an_id_is_left_unanswered(message: dict[str, Any], surrogate: bool) -> None:
    """Either the library takes the line as a request (and it answers every request), or
    the check answers it itself, with the same id."""
    line = json.dumps(message)
    if surrogate and isinstance(message["id"], int):
        line = line[:-1] + ', "note": "\\ud800"}'
    answers = check_line(line)
    if answers is None:
        parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        assert isinstance(parsed, types.JSONRPCRequest | types.JSONRPCResponse | types.JSONRPCError)
        return
    expected = message["id"]
    if isinstance(expected, str):
        try:
            expected.encode("utf-8")
        except UnicodeEncodeError:
            expected = None
    assert [a["id"] for a in answers] == [expected]
    assert all(types.JSONRPCError.model_validate(a) for a in answers)


def test_the_server_reports_its_name_and_version(pipe: Pipe) -> None:
    import gradeloop

    info = pipe.initialized["result"]["serverInfo"]
    assert info["name"] == "gradeloop" and info["version"] == gradeloop.__version__
