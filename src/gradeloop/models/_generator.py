"""The generators: a first draft, then revisions against the judge's issues, on any API.

:class:`ModelGenerator` writes the request and reads the reply once, over an adapter
(:mod:`._adapter`), as a generator :func:`~._exchange.drive` and
:func:`~._exchange.adrive` run blocking or awaited; :class:`AnthropicGenerator` is it on
the Messages API, :class:`~gradeloop.OpenAICompatibleGenerator` on chat completions.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping, Sequence
from typing import Any

from ..errors import NotAnAnswer
from ..errors._redact import scrub_chain
from ._adapter import JSON_MODE, Adapter, Ask
from ._client import generator_model, make_client
from ._exchange import adrive, drive
from ._failure import describe_api_error
from ._messages_api import MessagesAPI
from ._prompts import revision_prompt
from ._reply import UNREADABLE, unreadable
from ._usage import Metered

__all__ = ["AnthropicGenerator", "ModelGenerator"]


class ModelGenerator(Metered):
    """Drafts through one model API, given as its ``adapter``.

    A refusal, a truncated reply or a reply without text raises
    :class:`~gradeloop.errors.NotAnAnswer`; the API's own failures (after the client's
    retries) are recorded and re-raised unchanged, so they are never mistaken for a
    draft problem. Every request is recorded in ``.calls``; ``.usage`` adds them up.
    """

    def __init__(
        self,
        adapter: Adapter,
        model: str,
        max_tokens: int = 8192,
        *,
        system: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        self.adapter = adapter
        self.client = adapter.client
        self.model = model
        self.max_tokens = max_tokens
        self.system = system
        self.extra_body = dict(extra_body) if extra_body else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, max_tokens={self.max_tokens})"

    @property
    def gen_ai_system(self) -> str:
        """The provider its OpenTelemetry spans name."""
        return self.adapter.gen_ai_system

    def generate(self, task: str, draft: str = "", issues: Sequence[str] | None = None) -> str:
        """A first draft of ``task``; or, given ``draft``, a revision resolving ``issues``.

        Raises :class:`~gradeloop.errors.NotAnAnswer` for a refusal, a truncated
        reply or a reply without text.
        """
        return drive(self._generation(task, draft, issues), self.adapter.send)

    async def agenerate(
        self, task: str, draft: str = "", issues: Sequence[str] | None = None
    ) -> str:
        """:meth:`generate`, awaiting the request instead of blocking on it."""
        return await adrive(self._generation(task, draft, issues), self.adapter.asend)

    async def aclose(self) -> None:
        """Close the async client built for the running event loop (if one was)."""
        await self.adapter.aclose()

    def _generation(
        self, task: str, draft: str, issues: Sequence[str] | None
    ) -> Generator[dict[str, Any], Any, str]:
        """The one request (yielded to be sent) and its reply read and recorded."""
        prompt = revision_prompt(task, draft, issues) if draft else task
        ask = Ask(
            self.model,
            self.max_tokens,
            self.system or None,
            [{"role": "user", "content": prompt}],
            extra_body=self.extra_body,
        )
        started = time.perf_counter()
        try:
            reply = yield self.adapter.request(ask, JSON_MODE)
        except Exception as exc:
            scrub_chain(exc)  # re-raised, or chained: it may quote the key
            if self.adapter.api_error(exc):
                detail = describe_api_error(exc, api=self.adapter.api)
                self._record("generate", self.model, started, error=detail)
                raise
            if isinstance(exc, UNREADABLE):  # the server answered, but not with an API response
                failure = unreadable(exc, api=self.adapter.api)
                self._record("generate", self.model, started, error=str(failure))
                raise failure from exc
            raise
        reading = self.adapter.read(reply)
        if reading.failure is not None:
            failure = cut_off(reading.failure, self.max_tokens)
            self._record("generate", self.model, started, reading.seen, error=str(failure))
            raise failure
        self._record("generate", self.model, started, reading.seen)
        assert reading.text is not None  # a draft request carries no schema to parse by
        return reading.text


def cut_off(failure: NotAnAnswer, max_tokens: int) -> NotAnAnswer:
    """A draft cut off at ``max_tokens``, said with the ceiling and how the text began
    and ended (a small model that echoes the prompt, or loops, shows it here); the
    whole text rides on the error as ``.text``. Other failures are returned as they are.
    """
    if not str(failure).startswith("the reply was cut off at max_tokens"):
        return failure
    text = failure.text
    seen = (
        "it wrote nothing"
        if not text
        else f"it began {glimpse(text, head=True)} and ended {glimpse(text, head=False)}"
    )
    return NotAnAnswer(
        f"the draft was cut off at max_tokens={max_tokens} before it was finished (a draft "
        f"that reaches {max_tokens} tokens fails the loop); {seen}; raise --max-tokens (or "
        "[generator] max_tokens), or use a model that stops by itself",
        reason="max_tokens",
        stop_details=failure.stop_details,
        text=text,
    )


def glimpse(text: str, *, head: bool, limit: int = 60) -> str:
    """The first (or last) ``limit`` characters of ``text`` on one line, quoted."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return repr(flat)
    return repr(flat[:limit] + "…") if head else repr("…" + flat[-limit:])


class AnthropicGenerator(ModelGenerator):
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
        if max_tokens < 1:  # named before a client is built from the environment
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        adapter = MessagesAPI(
            client if client is not None else make_client(),
            method="create",
            async_client=async_client,
        )
        super().__init__(
            adapter, generator_model(model), max_tokens, system=system, extra_body=extra_body
        )
        self._async = adapter.twin  # the async client per event loop
