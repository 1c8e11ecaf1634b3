"""The provider seam against a real server (issue 38): what worked only on the Messages
API works on llama-cpp-python's chat completions, which refuses json_schema with an
HTTP 500 (marker local_model).

Each is tried as a user would: a second identical ``gradeloop grade`` answers from the
verdict cache, ``propose``'s model step and ``align``'s rewrite request step down to the
server's own json_object form as the judge does. The model's answers are noise: the
tests check the plumbing, never what it proposes.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from gradeloop import Criterion
from gradeloop.errors import JudgeError, StructuredFormWarning
from gradeloop.migration import propose_checkers
from gradeloop.migration._rewrite import Case, ask_rewrites
from gradeloop.models._openai import OpenAICompatibleJudge
from tests.local_model.helpers import GREEDY, MODEL, LocalServer, ServerUsage, openai_client
from tests.support.cli_helpers import cli
from tests.support.propose_helpers import length_rule, rubric

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.parametrize("local_server", ["llama-cpp-python"], indirect=True),
]

RUBRIC = """
[[criteria]]
key = "short"
description = "At most 40 words."
checker = "length"
options = { max_words = 40 }

[[criteria]]
key = "polite"
description = "The reply is polite."
"""


def requests_served(server: LocalServer) -> int:
    """The chat-completions requests the server has answered so far (from its log)."""
    return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.1" \d{3}', server.log.read_text()))


def judge_on(server: LocalServer, wire: ServerUsage) -> OpenAICompatibleJudge:
    return OpenAICompatibleJudge(
        client=openai_client(server, wire), model=MODEL, max_tokens=256, extra_body=GREEDY
    )


def test_a_second_identical_cli_run_answers_from_the_verdict_cache(
    local_server: LocalServer, tmp_path: Path
) -> None:
    (tmp_path / "r.toml").write_text(RUBRIC)
    (tmp_path / "d.md").write_text("Thanks for writing. Your refund is on its way.")
    args = (
        "grade", str(tmp_path / "d.md"), "--rubric", str(tmp_path / "r.toml"),
        "--task", "Reply to a refund request.", "--provider", "openai-compatible",
        "--base-url", local_server.base_url, "--judge-model", MODEL, "--no-history",
    )  # fmt: skip
    before = requests_served(local_server)
    first = cli(*args)
    asked = requests_served(local_server) - before
    assert first.code in (0, 1), first.err  # the judge answered (the grammar holds its shape)
    assert asked >= 2  # the refused json_schema (and the client's retries), then json_object
    second = cli(*args)
    assert second.code == first.code, second.err
    assert requests_served(local_server) - before == asked  # the re-run asked nothing
    assert "answered from the verdict cache (no request, $0)" in second.out
    assert "warning" not in second.err  # no refusal to report: nothing was sent


def test_propose_asks_the_local_model_in_the_form_it_takes(
    local_server: LocalServer, wire: ServerUsage
) -> None:
    judge = judge_on(local_server, wire)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", StructuredFormWarning)
        p = propose_checkers(rubric(), "short", length_rule(), judge=judge, seed=1)
    assert p.model is not None
    assert p.model.error is None or "max_tokens" in p.model.error, p.model.error
    news = [str(w.message) for w in said if w.category is StructuredFormWarning]
    assert len(news) == 1 and "json_object with the schema" in news[0]
    assert judge.calls[0].ok is False  # the refusal, recorded, never the answer
    assert p.model.usage is not None and p.model.usage.output_tokens > 0


def test_the_rewrite_request_steps_down_instead_of_failing_with_http_500(
    local_server: LocalServer, wire: ServerUsage
) -> None:
    judge = judge_on(local_server, wire)
    cases = [
        Case("Reply to a refund request.", "Whatever. Refunded.", False, True, "it answers"),
        Case("Reply to a refund request.", "Thanks! It is refunded.", True, True, "polite"),
    ]
    outcome: Any
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StructuredFormWarning)
        try:
            outcome = ask_rewrites(judge, Criterion(key="polite", description="Polite."), cases, 1)
        except JudgeError as exc:
            outcome = exc
    if isinstance(outcome, JudgeError):  # a run-on string, or a proposal that is not one
        assert outcome.reason in ("invalid", "max_tokens") and "\n" not in str(outcome)
    else:
        found, dropped = outcome  # read strictly: whatever the model proposed, in shape
        assert all(r.description for r in found) and all(isinstance(d, str) for d in dropped)
    assert judge.form == "json_object"
    assert judge.calls[0].ok is False and "refused" in (judge.calls[0].error or "")
