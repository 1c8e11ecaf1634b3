"""A key passed in code, in a shape no pattern knows, never leaves a call.

A gateway that echoes the key it refused (and the ``Authorization: Basic`` header it
got, base64 of ``user:key``) must not put the key into the JudgeError, its chained SDK
error (a printed traceback), the call records, an OpenTelemetry span or the history
database; a password in ``base_url`` must not reach the structured-form warning. The
real ``anthropic`` and ``openai`` clients talk to the emulators; the key is in no
environment variable, so only the client's own key tells the scrubber what to hide.
"""

from __future__ import annotations

import base64
import sqlite3
import traceback
import warnings
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from gradeloop import AnthropicJudge, Criterion, HistoryStore, Rubric, make_client, run_loop
from gradeloop.errors import JudgeError, StructuredFormWarning
from gradeloop.errors._redact import REDACTED, scrub_error
from gradeloop.models import OpenAICompatibleJudge
from tests.integrations.test_telemetry import spans  # noqa: F401 (a fixture)
from tests.models.test_structured_forms import LLAMA_CPP_PYTHON_500, NO_RETRY
from tests.support.emulator import Emulator, http_error
from tests.support.fakes import FakeGenerator
from tests.support.oai_emulator import OAIEmulator, OAIError, verdict_chat

RUBRIC = Rubric(criteria=[Criterion(key="cited", description="Cites a source.")])


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def leaks(key: str) -> tuple[str, ...]:
    """The key and the forms a gateway may echo it in."""
    return (key, b64(f"ops:{key}"), b64(key).rstrip("="))


def echo(key: str) -> str:
    return (
        f"invalid credential {key} for this gateway; got Authorization: Basic "
        f"{b64(f'ops:{key}')} (token {b64(key)})"
    )


def anthropic_judge(emulator: Emulator, key: str) -> AnthropicJudge:
    emulator.responder = lambda body: http_error(401, echo(key))
    client = make_client(api_key=key, base_url=emulator.base_url, max_retries=0)
    return AnthropicJudge(client=client)


def openai_judge(oai_emulator: OAIEmulator, key: str) -> OpenAICompatibleJudge:
    oai_emulator.responder = lambda body: OAIError(401, echo(key), headers=NO_RETRY)
    judge = OpenAICompatibleJudge(oai_emulator.base_url, "gemma", api_key=key)
    judge.client = judge.client.with_options(max_retries=0)
    judge.adapter.client = judge.client
    return judge


@pytest.fixture(params=["anthropic", "openai-compatible"])
def failing(request: Any, emulator: Emulator, oai_emulator: OAIEmulator) -> tuple[Any, str]:
    """A judge whose server refuses its key (a key of no known shape) and echoes it."""
    key = f"corp:{request.param[:4]}-7F3a9c2e11/zz-PRIV"
    if request.param == "anthropic":
        return anthropic_judge(emulator, key), key
    return openai_judge(oai_emulator, key), key


def assert_clean(text: str, key: str) -> None:
    for form in leaks(key):
        assert form not in text, (form, text)


def test_the_error_its_chained_cause_and_the_records_hold_no_key(failing: Any) -> None:
    judge, key = failing
    with pytest.raises(JudgeError) as info:
        judge.evaluate("t", "a draft", list(RUBRIC))
    err = info.value
    assert err.reason == "api_error" and REDACTED in str(err)
    assert_clean(str(err), key)
    assert err.__cause__ is not None  # still chained, so the status stays readable
    assert_clean("".join(traceback.format_exception(err)), key)
    assert judge.calls and all(c.error for c in judge.calls)
    for call in judge.calls:
        assert_clean(str(call.error), key)


def test_the_span_and_the_history_hold_no_key(
    failing: Any,
    spans: InMemorySpanExporter,  # noqa: F811
    tmp_path: Path,
) -> None:
    judge, key = failing
    with HistoryStore(tmp_path / "h.db") as store:
        run_loop("t", RUBRIC, generator=FakeGenerator(["d1", "d2"]), judge=judge, store=store,
                 max_rounds=2, max_judge_failures=1)  # fmt: skip
    texts = []
    for span in spans.get_finished_spans():
        texts.append(str(span.status.description))
        texts += [str(dict(e.attributes or {})) for e in span.events]
    assert any(REDACTED in t for t in texts)
    assert_clean("\n".join(texts), key)
    conn = sqlite3.connect(tmp_path / "h.db")
    stored = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f"SELECT * FROM {table}"):  # the table names read back
            stored += [str(v) for v in row]
    conn.close()
    assert any("invalid credential" in s for s in stored)  # the failure is recorded...
    assert_clean("\n".join(stored), key)  # ...without its key


def test_a_password_in_base_url_never_reaches_the_structured_form_warning(
    oai_emulator: OAIEmulator,
) -> None:
    password = "Pa55-w0rd-9c2e11"
    oai_emulator.enqueue(
        OAIError(500, f"{LLAMA_CPP_PYTHON_500} (seen http://ops:{password}@gw)", headers=NO_RETRY),
        verdict_chat(
            {"reasoning": "r", "criteria_met": {"cited": True}, "passed": True, "issues": []}
        ),
    )
    url = oai_emulator.base_url.replace("http://", f"http://ops:{password}@")
    judge = OpenAICompatibleJudge(url, "gemma", client=None)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert judge.evaluate("t", "d", list(RUBRIC)).passed
    [warning] = [w for w in seen if issubclass(w.category, StructuredFormWarning)]
    assert password not in str(warning.message) and "refused" in str(warning.message)


def test_a_key_too_short_to_be_one_is_left_in_ordinary_text() -> None:
    make_client(api_key="short-key", base_url="http://127.0.0.1:9")
    assert scrub_error("use a short-key here") == "use a short-key here"
