"""The provider seam: what the judge and generator flows need of one model API.

Everything a judge does that is not about one API is written once, over an
:class:`Adapter`: the strict per-rubric schema, the one repair, stepping down through
structured-output forms (:mod:`._forms`), samples, the verdict cache, usage and cost,
call records (:mod:`._model_judge`, :mod:`._evaluation`, :mod:`._exchange`), and so is
the generator's request (:mod:`._generator`). An adapter knows one API and does four
things:

1. **build** the request for a prompt in a structured-output *form*
   (:meth:`Adapter.request`): an :class:`Ask` says what to ask, provider-neutrally;
2. **send** it, blocking and awaited (:meth:`Adapter.send`, :meth:`Adapter.asend`),
   with the provider's own client (its retries, timeouts, proxies, typed errors);
3. **read** the reply (:meth:`Adapter.read`): its text, why it stopped, its usage, and
   a refusal or a cut-off reply as a :class:`~gradeloop.errors.NotAnAnswer`;
4. say whether an error the send raised is the API's (:meth:`Adapter.api_error`) and
   whether it means "this form is not supported" (:meth:`Adapter.refuses_form`), so the
   flow steps down to the next form instead of failing.

The Messages API (:mod:`._messages_api`) and chat completions (:mod:`._chat_api`) are
two adapters, peers. ``docs/architecture.md`` shows a third one added; a test adds a
toy provider the same way and grades with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import NotAnAnswer

__all__ = ["JSON_MODE", "Adapter", "Ask", "Reading"]

#: The form every adapter ends with: no structured field at all, the schema in the
#: system text (the flow writes it there) and the reply's JSON validated.
JSON_MODE = "json"


@dataclass(frozen=True)
class Ask:
    """One request, said provider-neutrally: what :meth:`Adapter.request` builds from.

    ``schema`` is the JSON Schema the reply must match, for a structured form to carry
    (None: a free-text request, such as a draft). ``schema_name`` names it for the APIs
    that want a name. ``cache_ttl`` marks the system text for prompt caching where the
    API has it (None: not marked). ``extra_body`` holds body fields the caller adds
    (sampling settings), sent as they are.
    """

    model: str
    max_tokens: int
    system: str | None
    messages: Sequence[Mapping[str, str]]
    schema: Mapping[str, Any] | None = None
    schema_name: str = "judge_verdict"
    extra_body: Mapping[str, Any] | None = None
    cache_ttl: str | None = None


@dataclass(frozen=True)
class Reading:
    """What a reply says, read by an adapter.

    ``seen`` is what the call's record reads: an object with ``model``, ``stop_reason``,
    ``usage`` (the Messages API's field names: ``input_tokens``, ``output_tokens``,
    ``cache_creation_input_tokens``, ``cache_read_input_tokens``) and optionally ``id``.
    ``text`` is the answer's text; ``parsed`` a value the client already parsed, when it
    gave no text. ``failure`` is set when the reply is not an answer (a refusal, a
    reply cut off at ``max_tokens``, no text): then the call is recorded as failed.
    """

    seen: Any
    text: str | None
    parsed: Any = None
    failure: NotAnAnswer | None = None


class Adapter(Protocol):
    """One model API, as the judge and generator flows use it (see the module docstring).

    ``client`` is the provider's client (a step down is remembered per client).
    ``forms`` are the structured-output forms ``structured="auto"`` tries, in order,
    the last always :data:`JSON_MODE`. ``api`` names the API in error lines,
    ``schema_field`` the request field that carries the schema (named when a server
    answers in prose, ignoring it), ``gen_ai_system`` the provider in OpenTelemetry
    spans. ``repairs_structured``: whether a reply that fails validation although a
    structured form carried the schema gets the one repair request (an API that
    enforces the schema itself answers invalid JSON only when something else is wrong).
    """

    client: Any
    forms: tuple[str, ...]
    api: str
    schema_field: str
    gen_ai_system: str
    repairs_structured: bool

    def request(self, ask: Ask, form: str) -> dict[str, Any]:
        """The request for ``ask`` in ``form`` (in :data:`JSON_MODE`, or with no
        ``ask.schema``, without a structured field). It is what the verdict cache keys
        replies by, so it must hold everything that can change the reply."""
        ...

    def send(self, request: dict[str, Any]) -> Any:
        """Send ``request`` and return the reply, blocking; the client's errors propagate."""
        ...

    async def asend(self, request: dict[str, Any]) -> Any:
        """:meth:`send`, awaited."""
        ...

    def read(self, reply: Any) -> Reading:
        """Read ``reply``: why it stopped first, then its text and usage. Never raises."""
        ...

    def api_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the API's own failure (after the client's retries): it is
        recorded and named in one line, never mistaken for a reply."""
        ...

    def refuses_form(self, exc: BaseException) -> bool:
        """Whether the API error ``exc`` says the request's structured form is not
        supported (the flow then steps down to the next form and asks again)."""
        ...

    async def aclose(self) -> None:
        """Close what :meth:`asend` opened for the running event loop, if anything."""
        ...
