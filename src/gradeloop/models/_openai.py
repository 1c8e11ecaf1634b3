"""The judge and generator for OpenAI-compatible chat-completions servers.

vLLM, Ollama, llama.cpp's server, LM Studio and LiteLLM all serve
``POST /v1/chat/completions``, and there enforce a JSON Schema given as
``response_format = {"type": "json_schema", "json_schema": {..., "strict": true}}``
by constrained decoding (see ``docs/models.md`` for which server does what). The
judge sends the same per-rubric wire schema the Anthropic judge sends and reads
the reply with the same validation (:mod:`gradeloop.models._wire`); failures are
typed the same way (refusal, length stop, empty content, invalid JSON), and an
invalid reply gets one repair request.

Needs the optional extra: ``pip install 'gradeloop[openai]'``. Importing
:mod:`gradeloop` never imports ``openai``; these classes load it on first use.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError, JudgeError, NotAnAnswer
from ..grading._rubric import Criterion
from ..grading._verdict import Verdict
from ..grading._workers import in_thread
from ._failure import describe_api_error
from ._forms import OPENAI_FORMS, Form
from ._judge import (
    AnthropicJudge,
    ReplyCache,
    Resample,
    Structured,
    _Answer,
    _Flow,
    _read,
    _Step,
    _Trace,
)
from ._judge import _judged as judged_criteria
from ._oai_reply import chat_reply, chat_text
from ._prompts import judge_system, judge_user, revision_prompt
from ._reply import UNREADABLE, unreadable
from ._steps import prose_note
from ._usage import CallKind, Metered
from ._wire import WireError, wire_spec

try:
    import openai
except ImportError:  # pragma: no cover - exercised by a test that blocks openai
    raise ImportError(
        "the OpenAI-compatible judge and generator need the openai package: "
        "pip install 'gradeloop[openai]'"
    ) from None

__all__ = [
    "SCHEMA_NAME",
    "OpenAICompatibleGenerator",
    "OpenAICompatibleJudge",
    "make_openai_client",
]

#: The ``json_schema.name`` sent with the verdict schema.
SCHEMA_NAME = "judge_verdict"

#: Sent as the key when none is set: local servers ignore it, the SDK needs one.
LOCAL_SERVER_KEY = "gradeloop-local"


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def make_openai_client(
    *, base_url: str | None = None, api_key: str | None = None, max_retries: int | None = None
) -> openai.OpenAI:
    """An ``openai.OpenAI`` for a chat-completions server.

    ``base_url`` defaults to ``OPENAI_BASE_URL`` and ``api_key`` to
    ``OPENAI_API_KEY``; a server given by URL with no key gets a placeholder key
    (local servers need none). With neither, :class:`~gradeloop.errors.ConfigError`.
    """
    base = base_url or _env("OPENAI_BASE_URL")
    key = api_key or _env("OPENAI_API_KEY")
    if base is None and key is None:
        raise ConfigError(
            "no OpenAI-compatible server is configured: give base_url (or set "
            "OPENAI_BASE_URL), e.g. http://localhost:8000/v1 for vLLM"
        )
    retries = openai.DEFAULT_MAX_RETRIES if max_retries is None else max_retries
    return openai.OpenAI(api_key=key or LOCAL_SERVER_KEY, base_url=base, max_retries=retries)


def _model(model: str | None, *envs: str) -> str:
    chosen = model or next((v for e in envs if (v := _env(e))), None)
    if not chosen:
        raise ConfigError(
            "name the model the server serves: model=... (or --judge-model / --model, "
            f"or set {' or '.join(envs)})"
        )
    return chosen


class OpenAICompatibleJudge(AnthropicJudge):
    """Judges drafts through an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    ``base_url`` is the server's API root (``http://localhost:8000/v1`` for vLLM,
    ``http://localhost:11434/v1`` for Ollama); ``api_key`` defaults to
    ``OPENAI_API_KEY`` (local servers need none). ``model`` defaults to
    ``GRADELOOP_JUDGE_MODEL`` then ``GRADELOOP_MODEL``; there is no default model.

    ``structured="native"`` (and ``"auto"``, the default) sends the per-rubric
    schema as ``response_format`` json_schema with ``strict: true``. ``"auto"``
    steps down when the server *refuses* that form (HTTP 400/422/500 naming
    ``response_format``, ``json_schema`` or the schema): to ``{"type":
    "json_object", "schema": ...}`` (llama-cpp-python's own form), then to JSON mode
    (the schema in the system text), remembering the form per client and saying so
    once (:class:`~gradeloop.errors.StructuredFormWarning`); a refusal is never a
    verdict and spends no repair attempt. ``"auto"`` also switches to JSON mode for
    good when a server answers in prose, ignoring the schema; ``"json"`` starts
    there. An invalid reply gets one repair request in every mode. The prompt text, the
    validation, the failure reasons, ``cache`` and ``.calls`` are the Anthropic
    judge's, and so are ``samples`` / ``resample`` / ``margin`` (repeated
    judging). :meth:`aevaluate` runs the same flow with the request in a worker
    thread.
    """

    _api_name = "chat completions"
    _form_order: tuple[Form, ...] = OPENAI_FORMS

    gen_ai_system = "openai"  # what its OpenTelemetry spans name as the provider

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 2048,
        *,
        client: Any = None,
        structured: Structured = "auto",
        feedback: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        cache: ReplyCache | None = None,
        samples: int = 1,
        resample: Resample = "all",
        margin: float = 1,
    ) -> None:
        if client is None:
            client = make_openai_client(base_url=base_url, api_key=api_key)
        super().__init__(
            client,
            _model(model, "GRADELOOP_JUDGE_MODEL", "GRADELOOP_MODEL"),
            max_tokens,
            structured=structured,
            feedback=feedback,
            extra_body=extra_body,
            cache=cache,
            samples=samples,
            resample=resample,
            margin=margin,
        )

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleJudge(model={self.model!r}, max_tokens={self.max_tokens}, "
            f"structured={self.structured!r}, mode={self.mode!r})"
        )

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """Judge ``draft`` against the judge-filled keys of ``criteria`` (see the class)."""
        return super().evaluate(task, draft, criteria)

    # -- the flow: native with one repair, or JSON mode -------------------------------

    def _flow(self, task: str, draft: str, criteria: Sequence[Criterion], trace: _Trace) -> _Flow:
        spec = wire_spec(judged_criteria(criteria), feedback=self.feedback)
        user = {"role": "user", "content": judge_user(task, draft)}
        if self._in_json():
            return (yield from self._json_flow(spec, user, trace))
        system = judge_system(spec.criteria)
        answer = yield _Step("evaluate", system, [user], spec.output_config(), spec)
        if answer.form == "json":  # the server refused the structured forms: stepped down
            return (yield from self._json_flow(spec, user, trace, answer))
        try:
            verdict = _read(spec, answer)
        except WireError as err:
            note = prose_note(self.structured, answer, "response_format")
            if note is not None:
                self._settle("evaluate", answer, trace, note)
                self._json_mode = True
                return (yield from self._json_flow(spec, user, trace))
            self._settle("evaluate", answer, trace, f"invalid verdict: {err}")
            return (yield from self._repair(spec, system, user, answer, err, trace, native=True))
        self._settle("evaluate", answer, trace)
        return verdict

    # -- sending one request ----------------------------------------------------------

    def _request(self, step: _Step, form: Form | None = None) -> dict[str, Any]:
        system, output_config = self._shape(step, form or self.form)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "system", "content": system}, *step.messages],
        }
        if output_config is not None:
            schema = output_config["format"]["schema"]
            if (form or self.form) == "json_object":  # llama-cpp-python's own form
                request["response_format"] = {"type": "json_object", "schema": schema}
            else:
                request["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": schema},
                }
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        return request

    def _send(self, step: _Step, trace: _Trace) -> _Answer:
        form = self.form
        request = self._request(step, form)
        key, hit = self._lookup(step, request, form)
        if hit is not None:
            return hit
        started = time.perf_counter()
        client: Any = self.client
        try:
            reply = client.chat.completions.create(**request)
        except openai.APIError as exc:
            if self._refused(step, form, exc, started, trace):
                return self._send(step, trace)  # in the next form (two more at most)
            raise self._api_failure(step.kind, self._describe(exc), started, trace) from exc
        except UNREADABLE as exc:  # the server answered, but not with an API response
            raise self._unreadable(step.kind, exc, started, trace) from exc
        answer = self._answer(step.kind, reply, started, key, trace)
        answer.form = form
        return answer

    async def _asend(self, step: _Step, trace: _Trace) -> _Answer:
        return await in_thread(self._send, step, trace)

    def _answer(
        self, kind: CallKind, reply: Any, started: float, key: str | None, trace: _Trace
    ) -> _Answer:
        seen = chat_reply(reply)
        try:
            text = chat_text(reply)
        except NotAnAnswer as exc:
            trace.records.append(self._record(kind, self.model, started, seen, error=str(exc)))
            raise JudgeError(f"the judge gave no verdict: {exc}", reason=exc.reason) from exc
        return _Answer(seen, text, None, started, key)


class OpenAICompatibleGenerator(Metered):
    """Drafts through an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    The arguments are the judge's (``model`` defaults to ``GRADELOOP_MODEL``);
    ``system`` is an optional system message. A refusal, a length stop or an
    empty reply raises :class:`~gradeloop.errors.NotAnAnswer` (``declined``,
    ``max_tokens``, ``no text block``); transport failures (``openai.APIError``,
    after the client's retries) are recorded and re-raised unchanged.
    """

    gen_ai_system = "openai"  # what its OpenTelemetry spans name as the provider

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 8192,
        *,
        client: Any = None,
        system: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        self.client = client or make_openai_client(base_url=base_url, api_key=api_key)
        self.model = _model(model, "GRADELOOP_MODEL")
        self.max_tokens = max_tokens
        self.system = system
        self.extra_body = dict(extra_body) if extra_body else None

    def __repr__(self) -> str:
        return f"OpenAICompatibleGenerator(model={self.model!r}, max_tokens={self.max_tokens})"

    def generate(self, task: str, draft: str = "", issues: Sequence[str] | None = None) -> str:
        """A first draft of ``task``; or, given ``draft``, a revision resolving ``issues``."""
        prompt = revision_prompt(task, draft, issues) if draft else task
        messages = [{"role": "user", "content": prompt}]
        if self.system:
            messages.insert(0, {"role": "system", "content": self.system})
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
        }
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        started = time.perf_counter()
        try:
            reply = self.client.chat.completions.create(**request)
        except openai.APIError as exc:
            detail = describe_api_error(exc, api="chat completions")
            self._record("generate", self.model, started, error=detail)
            raise
        except UNREADABLE as exc:  # the server answered, but not with an API response
            failure = unreadable(exc, api="chat completions")
            self._record("generate", self.model, started, error=str(failure))
            raise failure from exc
        seen = chat_reply(reply)
        try:
            text = chat_text(reply)
        except NotAnAnswer as exc:
            self._record("generate", self.model, started, seen, error=str(exc))
            raise
        self._record("generate", self.model, started, seen)
        return text

    async def agenerate(
        self, task: str, draft: str = "", issues: Sequence[str] | None = None
    ) -> str:
        """:meth:`generate` with the request in a worker thread."""
        return await in_thread(self.generate, task, draft, issues)
