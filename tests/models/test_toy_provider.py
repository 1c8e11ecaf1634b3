"""A third provider added through the seam, as docs/architecture.md shows: a toy API.

The toy API is an in-process fake with its own request shape (``prompt``, ``limit``),
its own structured form (``toy_schema``), its own reply shape and its own errors. Its
adapter is the only code written for it; grading with it gets the whole judge flow:
the step down on a refused form, the one repair, the strict reading, the verdict
cache, usage and call records, sync and async.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from types import SimpleNamespace
from typing import Any

import pytest

from gradeloop import JudgeCache, Rubric, agrade, grade
from gradeloop.errors import JudgeError, NotAnAnswer, StructuredFormWarning
from gradeloop.models._adapter import JSON_MODE, Ask, Reading
from gradeloop.models._model_judge import ModelJudge

RUBRIC = Rubric.from_dict(
    {
        "criteria": [
            {"key": "cites", "description": "Cites a spec section."},
            {"key": "short", "description": "At most 20 words.", "checker": "length",
             "options": {"max_words": 20}},
        ]
    }
)  # fmt: skip
DRAFT = "Charges are created with POST /v1/charges (section 4.2)."
MET = {"reasoning": "4.2", "criteria_met": {"cites": True}, "passed": True, "issues": []}


class ToyError(Exception):
    """What the toy API raises for a failed call."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


class ToyServer:
    """The toy API, in process: answers ``complete(**request)`` from a queue."""

    def __init__(self, *answers: Any) -> None:
        self.answers = deque(answers)
        self.requests: list[dict[str, Any]] = []

    def complete(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        answer = self.answers.popleft()
        if isinstance(answer, Exception):
            raise answer
        return {"model": request["model"], "finish": "done", "out": answer, "cost": [7, 3]}


class ToyAdapter:
    """The toy API's adapter: all the code a new provider needs."""

    forms = ("toy_schema", JSON_MODE)
    api = "toy API"
    schema_field = "toy_schema"
    gen_ai_system = "toy"
    repairs_structured = True

    def __init__(self, client: ToyServer) -> None:
        self.client = client

    def request(self, ask: Ask, form: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": ask.model,
            "limit": ask.max_tokens,
            "prompt": [{"role": "system", "content": ask.system}, *ask.messages],
        }
        if ask.schema is not None and form == "toy_schema":
            request["toy_schema"] = ask.schema
        return request

    def send(self, request: dict[str, Any]) -> Any:
        return self.client.complete(**request)

    async def asend(self, request: dict[str, Any]) -> Any:
        return self.send(request)

    def read(self, reply: Any) -> Reading:
        usage = {"input_tokens": reply["cost"][0], "output_tokens": reply["cost"][1]}
        seen = SimpleNamespace(model=reply["model"], stop_reason=reply["finish"], usage=usage)
        if not reply["out"].strip():
            return Reading(seen, None, failure=NotAnAnswer("no text", reason="no_text"))
        return Reading(seen, reply["out"])

    def api_error(self, exc: BaseException) -> bool:
        return isinstance(exc, ToyError)

    def refuses_form(self, exc: BaseException) -> bool:
        return isinstance(exc, ToyError) and exc.status == 400 and "toy_schema" in exc.message

    async def aclose(self) -> None:
        pass


class ToyJudge(ModelJudge):
    """A judge on the toy API."""

    def __init__(self, server: ToyServer, **settings: Any) -> None:
        super().__init__(ToyAdapter(server), "toy-1", **settings)


def test_grading_with_a_toy_provider_steps_down_and_repairs() -> None:
    server = ToyServer(ToyError(400, "toy_schema is not supported"), "{not json", json.dumps(MET))
    judge = ToyJudge(server)
    with pytest.warns(StructuredFormWarning, match="toy_schema"):
        ev = grade(DRAFT, RUBRIC, task="t", judge=judge)
    assert ev.accepted and ev.verdict.criteria_met == {"cites": True, "short": True}
    refused, first, repair = server.requests
    assert "toy_schema" in refused and refused["toy_schema"]["required"][0] == "reasoning"
    assert "toy_schema" not in first and "<schema>" in first["prompt"][0]["content"]
    assert repair["prompt"][2] == {"role": "assistant", "content": "{not json"}
    assert [(c.kind, c.ok) for c in judge.calls] == [
        ("evaluate", False),
        ("evaluate", False),
        ("repair", True),
    ]
    assert "refused the toy_schema form" in (judge.calls[0].error or "")
    assert judge.usage.input_tokens == 14 and judge.usage.output_tokens == 6
    assert judge.form == "json" and repr(judge).startswith("ToyJudge(model='toy-1'")


def test_a_native_toy_judge_fails_closed_on_a_refusal() -> None:
    judge = ToyJudge(ToyServer(ToyError(400, "toy_schema is not supported")), structured="native")
    with pytest.raises(JudgeError) as info:
        judge.evaluate("t", DRAFT, RUBRIC.judge_criteria)
    assert info.value.reason == "api_error" and "ToyError: toy_schema is not" in str(info.value)
    assert info.value.attempts == 1


def test_a_toy_reply_that_is_still_invalid_after_the_repair_is_never_a_pass() -> None:
    judge = ToyJudge(ToyServer("{}", '{"passed": true}'))
    with pytest.raises(JudgeError, match="after one repair attempt") as info:
        judge.evaluate("t", DRAFT, RUBRIC.judge_criteria)
    assert info.value.reason == "invalid"


def test_the_verdict_cache_and_the_async_driver_work_on_the_toy_provider(
    tmp_path: Any,
) -> None:
    server = ToyServer(json.dumps(MET))
    with JudgeCache(tmp_path / "cache.db") as cache:
        judge = ToyJudge(server, cache=cache)
        first = asyncio.run(agrade(DRAFT, RUBRIC, task="t", judge=judge))
        again = grade(DRAFT, RUBRIC, task="t", judge=judge)
    assert first.accepted and again.accepted and again.judge_cached
    assert len(server.requests) == 1
    assert [c.cached for c in judge.calls] == [False, True]
