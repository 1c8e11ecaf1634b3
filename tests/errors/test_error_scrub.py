"""Error messages that leave gradeloop carry no credential: the CLI's stderr, a
JudgeError's message and OpenTelemetry spans (status and exception event), even when
the API error quotes the key it refused (some gateways do)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from gradeloop import AnthropicJudge, grade, run_loop
from gradeloop.errors import JudgeError
from gradeloop.errors._redact import REDACTED, scrub_error
from tests.integrations.test_telemetry import RUBRIC, spans  # noqa: F401 (a fixture)
from tests.support.cli_helpers import EXAMPLE, cli
from tests.support.emulator import Emulator, http_error
from tests.support.fakes import FakeJudge

ANTHROPIC_KEY = "sk-ant-api03-SECRETSECRETSECRET"
GATEWAY_KEY = "gw-7f3a9c2e5b1d8f4a"  # no known shape: found as the environment's value


def test_scrub_error_redacts_keys_and_the_environments_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_GATEWAY_TOKEN", GATEWAY_KEY)
    monkeypatch.setenv("SHORT_KEY", "abc")  # too short to be a credential
    text = (
        f"401: key {GATEWAY_KEY} refused; Authorization: Bearer tok_ABCDEFGH12345; "
        f"x-api-key: {ANTHROPIC_KEY}; openai sk-proj-ABCDEFGHIJKLMNOPQRST; api_key=hunter2hunter2; "
        "https://user:pw@proxy.example/v1"
    )
    out = scrub_error(text)
    for secret in (GATEWAY_KEY, "tok_ABCDEFGH12345", ANTHROPIC_KEY, "sk-proj-ABCDEFGHIJKLMNOPQRST",
                   "hunter2hunter2", "user:pw"):  # fmt: skip
        assert secret not in out
    assert out.count(REDACTED) == 5 and "https://proxy.example/v1" in out


def test_scrub_error_leaves_ordinary_messages_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHORT_KEY", "abc")
    plain = (
        "Bearer token missing; max_tokens=2048; the judge's verdict is invalid: abc; "
        "sk-short; use --api-key"
    )
    assert scrub_error(plain) == plain


@pytest.mark.parametrize(
    "text",
    ["Bearer " + "a" * 400_000, "sk-" * 130_000, ("api_key=" + "x" * 7 + " ") * 25_000],
)
def test_scrub_error_is_linear_on_hostile_text(text: str) -> None:
    start = time.process_time()
    scrub_error(text)
    assert time.process_time() - start < 1.0  # generous: linear code takes ~10 ms


def test_the_cli_never_prints_the_credential_an_api_error_echoes(emulator: Emulator) -> None:
    emulator.enqueue(http_error(401, f"invalid x-api-key {GATEWAY_KEY} (gateway)"))
    ran = cli(
        "grade", str(EXAMPLE / "draft.md"), "--rubric", str(EXAMPLE / "rubric.toml"),
        "--base-url", emulator.base_url, "--task", "t",
        env={"ANTHROPIC_API_KEY": GATEWAY_KEY},
    )  # fmt: skip
    assert ran.code == 2
    assert GATEWAY_KEY not in ran.err and f"invalid x-api-key {REDACTED}" in ran.err


def test_a_cli_error_without_a_secret_is_printed_as_it_was(emulator: Emulator) -> None:
    emulator.enqueue(http_error(401, "invalid x-api-key (gateway)"))
    ran = cli(
        "grade", str(EXAMPLE / "draft.md"), "--rubric", str(EXAMPLE / "rubric.toml"),
        "--base-url", emulator.base_url, "--task", "t",
    )  # fmt: skip
    assert ran.code == 2 and "invalid x-api-key (gateway)" in ran.err


def test_a_judge_error_message_is_scrubbed() -> None:
    error = JudgeError(f"the judge failed: refused {ANTHROPIC_KEY}", reason="api_error")
    assert ANTHROPIC_KEY not in str(error) and REDACTED in str(error)
    assert str(JudgeError("no JSON", reason="invalid")) == "no JSON"


def test_spans_carry_no_credential(
    spans: InMemorySpanExporter,  # noqa: F811
    emulator: Emulator,
) -> None:
    emulator.enqueue(http_error(400, f"bad key {ANTHROPIC_KEY}"))
    judge = AnthropicJudge(client=emulator.client(max_retries=0), model="claude-judge")
    with pytest.raises(JudgeError) as raised:
        grade("hi", RUBRIC, judge=judge)
    assert ANTHROPIC_KEY not in str(raised.value)
    texts = _span_texts(spans)
    assert texts and not any(ANTHROPIC_KEY in t for t in texts)
    assert any(REDACTED in t for t in texts)
    [graded] = [s for s in spans.get_finished_spans() if s.name == "gradeloop.grade"]
    assert graded.status.status_code is StatusCode.ERROR


def test_an_exception_leaving_a_span_is_scrubbed_too(
    spans: InMemorySpanExporter,  # noqa: F811
) -> None:
    class Broken:
        def generate(self, task: str, draft: str = "", issues: Any = None) -> str:
            raise ValueError(f"upstream said: {ANTHROPIC_KEY}")

    with pytest.raises(ValueError):
        run_loop("t", RUBRIC, generator=Broken(), judge=FakeJudge())
    [loop] = [s for s in spans.get_finished_spans() if s.name == "gradeloop.loop"]
    assert loop.status.status_code is StatusCode.ERROR
    texts = _span_texts(spans)
    assert not any(ANTHROPIC_KEY in t for t in texts)
    assert any("upstream said: " + REDACTED in t for t in texts)


def _span_texts(exporter: InMemorySpanExporter) -> list[str]:
    out = []
    for span in exporter.get_finished_spans():
        out.append(span.status.description or "")
        for event in span.events:
            out.extend(str(v) for v in (event.attributes or {}).values())
    return [t for t in out if t]
