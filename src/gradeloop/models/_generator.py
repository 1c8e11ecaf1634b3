"""AnthropicGenerator: writes a first draft, then revisions against the judge's issues."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import anthropic

from ..errors import NotAnAnswer
from ..grading._workers import in_thread
from ._aclient import AsyncTwin
from ._client import generator_model, make_client
from ._failure import describe_api_error
from ._prompts import revision_prompt
from ._reply import UNREADABLE, first_text, unreadable
from ._usage import Metered

__all__ = ["AnthropicGenerator"]


class AnthropicGenerator(Metered):
    """Drafts with an Anthropic model through ``client.messages.create``.

    ``client`` is an :class:`anthropic.Anthropic` or anything shaped like it (see
    :mod:`gradeloop.testing`); by default one is built from the environment with
    :func:`gradeloop.make_client`. ``model`` defaults to ``GRADELOOP_MODEL``, then
    a current Claude model. ``max_tokens`` is a truncation ceiling, not a budget:
    a draft that reaches it raises :class:`~gradeloop.errors.NotAnAnswer`.
    Sampling settings the SDK no longer takes as arguments (``temperature``,
    ``top_p``, ``top_k``) go in ``extra_body``.

    Every request is recorded in ``.calls``; ``.usage`` adds them up. Transport
    failures (``anthropic.APIError``, after the client's own retries) are recorded
    and re-raised unchanged, so they are never mistaken for a draft problem.

    :meth:`agenerate` is the async twin, on an ``anthropic.AsyncAnthropic`` built
    lazily with the sync client's settings (or ``async_client``, if given; a client
    that is not the SDK's is run in a worker thread).
    """

    def __init__(
        self,
        client: Any = None,
        model: str | None = None,
        max_tokens: int = 8192,
        *,
        system: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        async_client: Any = None,
    ) -> None:
        super().__init__()
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        self.client = client if client is not None else make_client()
        self.model = generator_model(model)
        self.max_tokens = max_tokens
        self.system = system
        self.extra_body = dict(extra_body) if extra_body else None
        self._async = AsyncTwin(self.client, async_client)

    def __repr__(self) -> str:
        return f"AnthropicGenerator(model={self.model!r}, max_tokens={self.max_tokens})"

    def generate(self, task: str, draft: str = "", issues: Sequence[str] | None = None) -> str:
        """A first draft of ``task``; or, given ``draft``, a revision resolving ``issues``.

        Raises :class:`~gradeloop.errors.NotAnAnswer` for a refusal, a truncated
        reply or a reply without text.
        """
        request = self._request(task, draft, issues)
        started = time.perf_counter()
        try:
            reply = self.client.messages.create(**request)
        except anthropic.APIError as exc:
            self._record("generate", self.model, started, error=describe_api_error(exc))
            raise
        except UNREADABLE as exc:  # the server answered, but not with an API response
            raise self._unreadable(exc, started) from exc
        return self._text(reply, started)

    async def agenerate(
        self, task: str, draft: str = "", issues: Sequence[str] | None = None
    ) -> str:
        """:meth:`generate`, awaiting the request instead of blocking on it."""
        request = self._request(task, draft, issues)
        started = time.perf_counter()
        aclient = self._async.client()
        try:
            if aclient is None:  # a client gradeloop did not build: as is, off the loop
                reply = await in_thread(lambda: self.client.messages.create(**request))
            else:
                reply = await aclient.messages.create(**request)
        except anthropic.APIError as exc:
            self._record("generate", self.model, started, error=describe_api_error(exc))
            raise
        except UNREADABLE as exc:
            raise self._unreadable(exc, started) from exc
        return self._text(reply, started)

    async def aclose(self) -> None:
        """Close the async client built for the running event loop (if one was)."""
        await self._async.aclose()

    def _request(self, task: str, draft: str, issues: Sequence[str] | None) -> dict[str, Any]:
        prompt = revision_prompt(task, draft, issues) if draft else task
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if self.system:
            request["system"] = self.system
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        return request

    def _unreadable(self, exc: BaseException, started: float) -> NotAnAnswer:
        failure = unreadable(exc)
        self._record("generate", self.model, started, error=str(failure))
        return failure

    def _text(self, reply: Any, started: float) -> str:
        try:
            text = first_text(reply)
        except NotAnAnswer as exc:
            self._record("generate", self.model, started, reply, error=str(exc))
            raise
        self._record("generate", self.model, started, reply)
        return text
