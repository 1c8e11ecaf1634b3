"""The judge and generator for OpenAI-compatible chat-completions servers.

vLLM, Ollama, llama.cpp's server, LM Studio and LiteLLM all serve
``POST /v1/chat/completions``, and there enforce a JSON Schema given as
``response_format = {"type": "json_schema", "json_schema": {..., "strict": true}}``
by constrained decoding (see ``docs/models.md`` for which server does what). The
judge sends the same per-rubric wire schema the Anthropic judge sends and reads
the reply with the same validation (:mod:`gradeloop.models._wire`); failures are
typed the same way (refusal, length stop, empty content, invalid JSON), and an
invalid reply gets one repair request.

Both sit on the provider-neutral judge and generator (:mod:`._model_judge`,
:mod:`._generator`) with the chat-completions adapter (:mod:`._chat_api`), as the
Anthropic ones do with the Messages-API adapter: peers, neither built on the other.

Needs the optional extra: ``pip install 'gradeloop[openai]'``. Importing
:mod:`gradeloop` never imports ``openai``; these classes load it on first use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..errors._redact import remember_client
from ._chat_api import ChatCompletions
from ._generator import ModelGenerator
from ._model_judge import ModelJudge, ReplyCache, Resample, Structured, check_settings

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
    client = openai.OpenAI(api_key=key or LOCAL_SERVER_KEY, base_url=base, max_retries=retries)
    remember_client(client)  # its key and URL password are scrubbed from all that leaves
    return client


def _model(model: str | None, *envs: str) -> str:
    chosen = model or next((v for e in envs if (v := _env(e))), None)
    if not chosen:
        raise ConfigError(
            "name the model the server serves: model=... (or --judge-model / --model, "
            f"or set {' or '.join(envs)})"
        )
    return chosen


class OpenAICompatibleJudge(ModelJudge):
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
    judge's (both are the same provider-neutral judge), and so are ``samples`` /
    ``resample`` / ``margin`` (repeated judging), :meth:`prefer` and :meth:`ask`.
    :meth:`aevaluate` runs the same flow with the request in a worker thread.
    """

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
        # a bad setting is named before a client is built from the environment
        check_settings(
            max_tokens=max_tokens,
            structured=structured,
            samples=samples,
            resample=resample,
            margin=margin,
        )
        if client is None:
            client = make_openai_client(base_url=base_url, api_key=api_key)
        super().__init__(
            ChatCompletions(client),
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


class OpenAICompatibleGenerator(ModelGenerator):
    """Drafts through an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    The arguments are the judge's (``model`` defaults to ``GRADELOOP_MODEL``);
    ``system`` is an optional system message. A refusal, a length stop or an
    empty reply raises :class:`~gradeloop.errors.NotAnAnswer` (``declined``,
    ``max_tokens``, ``no text block``); transport failures (``openai.APIError``,
    after the client's retries) are recorded and re-raised unchanged.
    :meth:`agenerate` runs the request in a worker thread.
    """

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
        if max_tokens < 1:  # named before a client is built from the environment
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        client = client or make_openai_client(base_url=base_url, api_key=api_key)
        model_name = _model(model, "GRADELOOP_MODEL")
        adapter = ChatCompletions(client)
        super().__init__(adapter, model_name, max_tokens, system=system, extra_body=extra_body)
