"""A server's error reaches the user as one line (issues 29 and 34).

Status, the server's message cut to a sentence, the fix; never its traceback, its file
paths or a whole HTML page. The servers here are real sockets on 127.0.0.1, among them
the standard library's own ``http.server`` (which answers POST with a 501 HTML page,
exactly what ``python3 -m http.server`` does), on both the Anthropic and the
OpenAI-compatible paths.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop.models._failure import (
    describe_api_error,
    failure_line,
    refuses_structure,
    server_message,
)
from tests.models.test_structured_forms import LLAMA_CPP_PYTHON_500
from tests.support.cli_helpers import EXAMPLE, cli

RUBRIC = str(EXAMPLE / "rubric.toml")
DRAFT = str(EXAMPLE / "draft.md")
TASK = str(EXAMPLE / "task.md")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """``python3 -m http.server``: a file server, not an API (POST gets a 501 page)."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0),
        lambda *a: _Quiet(*a, directory=str(tmp_path)),  # type: ignore[misc]
    )
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _status_error(sdk: Any, status: int, body: Any, text: str | None = None) -> Any:
    import httpx

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    content = text if text is not None else ""
    response = httpx.Response(status, request=request, text=content)
    cls = sdk.InternalServerError if status >= 500 else sdk.BadRequestError
    return cls(f"Error code: {status} - {content or body}", response=response, body=body)


def one_line(text: str) -> None:
    assert "\n" not in text and "\r" not in text
    assert "Traceback" not in text and 'File "' not in text
    assert "<html" not in text.lower() and "<!doctype" not in text.lower()


# -- the describer ----------------------------------------------------------------------


@pytest.mark.parametrize("sdk", [openai, anthropic])
def test_a_wrapped_validation_error_is_cut_to_its_location_and_message(sdk: Any) -> None:
    exc = _status_error(sdk, 500, {"error": {"message": LLAMA_CPP_PYTHON_500}})
    line = describe_api_error(exc, api="chat completions")
    one_line(line)
    assert line.startswith("HTTP 500 InternalServerError: body.response_format.type: ")
    assert "Input should be 'text' or 'json_object'" in line
    assert "site-packages" not in line and "/srv/" not in line
    assert "structured='auto'" in line  # the fix for a refused structured form
    assert refuses_structure(exc)


def test_an_html_page_is_named_never_quoted() -> None:
    page = (
        '<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n'
        "<body><h1>Error response</h1><p>Error code: 501</p></body></html>\n"
    )
    exc = _status_error(openai, 501, page, text=page)
    line = describe_api_error(exc, api="chat completions")
    one_line(line)
    assert "HTML page ('Error response')" in line
    assert "is the base URL a chat completions server?" in line


def test_fastapi_detail_lists_and_plain_messages() -> None:
    detail = {"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}
    assert server_message(_status_error(openai, 422, detail)) == "body.messages: field required"
    plain = {"error": {"message": "model 'x' not found. Pull it first. Then retry."}}
    assert server_message(_status_error(openai, 400, plain)) == "model 'x' not found."


def test_a_message_is_cut_to_one_bounded_sentence() -> None:
    long = {"error": {"message": "word " * 500}}
    said = server_message(_status_error(openai, 400, long))
    assert len(said) <= 200 and said.endswith("…")


def test_a_server_file_path_is_hidden_an_api_route_is_kept() -> None:
    body = {"error": {"message": "failed in /opt/srv/lib/app/handler.py at POST /v1/messages"}}
    said = server_message(_status_error(openai, 500, body))
    assert "/opt/" not in said and "<path>" in said and "/v1/messages" in said


def test_refusal_words_must_come_with_a_refusal_status() -> None:
    body = {"error": {"message": "response_format json_schema is not supported"}}
    assert refuses_structure(_status_error(openai, 400, body))
    assert not refuses_structure(_status_error(openai, 503, body))
    other = {"error": {"message": "max_tokens is too large"}}
    assert not refuses_structure(_status_error(openai, 400, other))


def test_failure_line_is_one_line_for_anything() -> None:
    assert failure_line(RuntimeError("first\nsecond")) == "RuntimeError: first"
    assert failure_line(ValueError()) == "ValueError"


def test_a_hostile_body_is_read_in_linear_time() -> None:
    bodies = [
        "/a" * 200_000,
        "'msg': '" + "x" * 200_000,
        "<" * 200_000,
        "'loc': (" + "a," * 100_000,
        "." * 200_000,
        'File "' * 50_000,
    ]
    start = time.perf_counter()
    for text in bodies:
        one_line(describe_api_error(_status_error(openai, 500, {"error": {"message": text}})))
    assert time.perf_counter() - start < 5  # a quadratic scan would take minutes


@given(st.text(max_size=2000), st.sampled_from([400, 404, 422, 429, 500, 501]))
def test_any_body_gives_one_bounded_line(text: str, status: int) -> None:
    line = describe_api_error(_status_error(openai, status, {"error": {"message": text}}))
    assert "\n" not in line and "\r" not in line and len(line) < 600
    assert line.startswith(f"HTTP {status} ")
    assert not re.search(r"(?:/[\w.\-]+){4,}", line)  # no long path survives


# -- the CLI, against a server that is not an API ----------------------------------------


@pytest.mark.parametrize(
    ("command", "provider"),
    [
        ("grade", "anthropic"),
        ("grade", "openai-compatible"),
        ("optimize", "anthropic"),
        ("optimize", "openai-compatible"),
    ],
)
def test_http_server_is_one_line_with_the_fix_everywhere(
    http_server: str, command: str, provider: str
) -> None:
    base = http_server + ("/v1" if provider == "openai-compatible" else "")
    model = ["--provider", provider, "--base-url", base, "--judge-model", "m"]
    if command == "grade":
        args = ["grade", DRAFT, "--rubric", RUBRIC, "--task-file", TASK, "--no-history"]
    else:
        args = ["optimize", "--rubric", RUBRIC, "--task-file", TASK, "--model", "m"]
        args.append("--no-history")
    ran = cli(*args, *model)
    assert ran.code == 2, ran.err
    errors = [line for line in ran.err.splitlines() if line.startswith("gradeloop: error:")]
    assert len(errors) == 1 and len(ran.err.strip().splitlines()) == 1, ran.err
    one_line(errors[0])
    assert "HTTP 501" in errors[0] and "HTML page" in errors[0]
    assert "is the base URL a" in errors[0]  # the fix


def test_a_tool_call_reports_a_server_page_in_one_line(tmp_path: Path) -> None:
    from gradeloop import HistoryStore
    from gradeloop.tools import ToolRunner

    page = "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head></html>\n"

    class Failing:
        def generate(self, task: str, draft: str = "", issues: Any = None) -> str:
            raise _status_error(anthropic, 501, page, text=page)

    with HistoryStore(tmp_path / "h.db") as store:
        runner = ToolRunner(Failing(), None, store)
        out = runner.call(
            "generate_initial_output",
            {"task": "t", "criteria": [{"key": "a", "description": "A."}]},
        )
    message = out["error"]["message"]
    one_line(message)
    assert out["error"]["type"] == "generation_failed" and "HTML page" in message
