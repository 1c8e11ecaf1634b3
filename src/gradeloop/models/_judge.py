"""AnthropicJudge: one fresh-context request per draft, read against a per-rubric schema."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anthropic

from ..errors import JudgeError, NotAnAnswer
from ..grading._rubric import Criterion
from ..grading._verdict import Verdict
from ._client import describe_api_error, judge_model, make_client
from ._prompts import judge_system, judge_user, repair_request
from ._reply import FINISHED, first_text
from ._usage import CallKind, Metered
from ._wire import WireError, WireSpec, looks_like_json, wire_spec

__all__ = ["AnthropicJudge", "Structured"]

Structured = Literal["auto", "native", "json"]
_TTLS = ("5m", "1h")
_MODES = ("auto", "native", "json")


@dataclass
class _Answer:
    """One reply, with its text (or the client's own parsed value) and start time."""

    reply: Any
    text: str | None
    parsed: Any
    started: float


class AnthropicJudge(Metered):
    """Judges a draft against judge-filled criteria through ``client.messages.parse``.

    Each evaluation is a fresh context: one user message holding only the task and
    the draft (tagged as data); the instructions and criteria are one system text
    block, byte-identical for the same criteria and marked for prompt caching with
    ``cache_ttl`` (``"5m"`` or ``"1h"``).

    ``structured`` picks how the verdict's shape is enforced:

    * ``"native"`` - ``output_config`` with the per-rubric JSON Schema
      (constrained decoding on the Anthropic API);
    * ``"json"`` - for servers that silently drop ``output_config`` (Ollama,
      llama.cpp): the schema goes in the system text, the reply's JSON is
      validated, and one repair request is made before giving up;
    * ``"auto"`` (default) - native, switching to JSON mode for good when a reply
      is plain prose, the sign of a server that ignored ``output_config``.

    Failures raise :class:`~gradeloop.errors.JudgeError` (``reason`` ``"refusal"``,
    ``"max_tokens"``, ``"no_text"``, ``"invalid"`` or ``"api_error"``); none is ever
    a pass. Every request is recorded in ``.calls``.
    """

    def __init__(
        self,
        client: Any = None,
        model: str | None = None,
        max_tokens: int = 2048,
        *,
        cache_ttl: str = "5m",
        structured: Structured = "auto",
        feedback: bool = False,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if cache_ttl not in _TTLS:
            raise ValueError(f"cache_ttl must be '5m' or '1h', not {cache_ttl!r}")
        if structured not in _MODES:
            raise ValueError(f"structured must be 'auto', 'native' or 'json', not {structured!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        self.client = client if client is not None else make_client()
        self.model = judge_model(model)
        self.max_tokens = max_tokens
        self.cache_ttl = cache_ttl
        self.structured: Structured = structured
        self.feedback = feedback
        self.extra_body = dict(extra_body) if extra_body else None
        self._json_mode = structured == "json"

    def __repr__(self) -> str:
        return (
            f"AnthropicJudge(model={self.model!r}, max_tokens={self.max_tokens}, "
            f"structured={self.structured!r}, mode={self.mode!r})"
        )

    @property
    def mode(self) -> Literal["native", "json"]:
        """How the next request is made; ``"auto"`` starts native and may switch once."""
        return "json" if self._json_mode else "native"

    def system_prompt(self, criteria: Sequence[Criterion]) -> str:
        """The system text the next evaluation of ``criteria`` would send."""
        spec = wire_spec(_judged(criteria), feedback=self.feedback)
        return judge_system(spec.criteria, spec.schema_text() if self._json_mode else None)

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """Judge ``draft`` against the judge-filled keys of ``criteria``.

        Code-filled criteria in ``criteria`` are left out of the request. The
        Verdict's ``criteria_met`` holds every judged key; scored keys are met when
        their clamped score reaches the criterion's threshold.
        """
        spec = wire_spec(_judged(criteria), feedback=self.feedback)
        user = {"role": "user", "content": judge_user(task, draft)}
        start = len(self.calls)
        try:
            if not self._json_mode:
                verdict = self._native(spec, user)
                if verdict is not None:
                    return verdict
                self._json_mode = True
            return self._json(spec, user)
        except JudgeError as exc:
            exc.attempts = len(self.calls) - start
            exc.usage = self.usage_since(start)
            raise

    # -- the two modes ----------------------------------------------------------------

    def _native(self, spec: WireSpec, user: dict[str, str]) -> Verdict | None:
        answer = self._ask("evaluate", judge_system(spec.criteria), [user], spec.output_config())
        try:
            verdict = _read(spec, answer)
        except WireError as err:
            text = answer.text
            if self.structured == "auto" and text is not None and not looks_like_json(text):
                self._settle(
                    "evaluate",
                    answer,
                    "prose instead of JSON: the server seems to "
                    "ignore output_config; switching to JSON mode",
                )
                return None
            self._settle("evaluate", answer, f"invalid verdict: {err}")
            raise JudgeError(
                f"the judge's reply does not match the rubric's schema: {err}. If the server "
                "does not support structured output, use structured='json'",
                reason="invalid",
            ) from None
        self._settle("evaluate", answer)
        return verdict

    def _json(self, spec: WireSpec, user: dict[str, str]) -> Verdict:
        system = judge_system(spec.criteria, spec.schema_text())
        answer = self._ask("evaluate", system, [user], None)
        try:
            verdict = _read(spec, answer)
        except WireError as err:
            self._settle("evaluate", answer, f"invalid verdict: {err}")
            first_error = err
        else:
            self._settle("evaluate", answer)
            return verdict
        bad = answer.text if answer.text is not None else repr(answer.parsed)
        messages = [
            user,
            {"role": "assistant", "content": bad},
            {"role": "user", "content": repair_request(str(first_error))},
        ]
        repaired = self._ask("repair", system, messages, None)
        try:
            verdict = _read(spec, repaired)
        except WireError as err:
            self._settle("repair", repaired, f"invalid verdict: {err}")
            raise JudgeError(
                f"the judge's reply is still invalid after one repair attempt: {err} "
                f"(first reply: {first_error})",
                reason="invalid",
            ) from None
        self._settle("repair", repaired)
        return verdict

    # -- one request ------------------------------------------------------------------

    def _ask(
        self,
        kind: CallKind,
        system: str,
        messages: list[dict[str, str]],
        output_config: dict[str, Any] | None,
    ) -> _Answer:
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": [
                {
                    "type": "text",
                    "text": system,
                    "cache_control": {"type": "ephemeral", "ttl": self.cache_ttl},
                }
            ],
            "messages": messages,
        }
        if output_config is not None:
            request["output_config"] = output_config
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        started = time.perf_counter()
        try:
            reply = self.client.messages.parse(**request)
        except anthropic.APIError as exc:
            detail = describe_api_error(exc)
            self._record(kind, self.model, started, error=detail)
            raise JudgeError(
                f"the judge's API call failed after the client's retries: {detail}",
                reason="api_error",
            ) from exc
        parsed = getattr(reply, "parsed_output", None)
        if parsed is not None and getattr(reply, "stop_reason", None) in FINISHED:
            return _Answer(reply, None, parsed, started)
        try:
            text = first_text(reply)
        except NotAnAnswer as exc:
            self._record(kind, self.model, started, reply, error=str(exc))
            raise JudgeError(f"the judge gave no verdict: {exc}", reason=exc.reason) from exc
        return _Answer(reply, text, None, started)

    def _settle(self, kind: CallKind, answer: _Answer, error: str | None = None) -> None:
        self._record(kind, self.model, answer.started, answer.reply, error=error)


def _judged(criteria: Sequence[Criterion]) -> tuple[Criterion, ...]:
    judged = tuple(c for c in criteria if c.source == "judge")
    if not judged:
        raise ValueError("no judge-filled criteria to evaluate; every key given has a checker")
    return judged


def _read(spec: WireSpec, answer: _Answer) -> Verdict:
    if answer.text is None:
        return spec.parse_object(answer.parsed)
    return spec.parse_text(answer.text)
