"""The Messages-API adapter: Anthropic's ``POST /v1/messages``, through the ``anthropic`` SDK.

Structured forms, in the order ``"auto"`` tries them: ``output_config`` (the API's
json_schema, enforced by constrained decoding), then JSON mode (the schema in the
system text). The system text of a judge request is one text block marked for prompt
caching (``Ask.cache_ttl``), byte-identical for the same criteria.

Sending. The SDK's own client (``anthropic.Anthropic`` / ``AsyncAnthropic``) is sent
the request through ``client.messages.with_raw_response.create``: the SDK's public
call, so its parameters, timeout rule, deprecation warnings, headers, retries, typed
errors, middleware (gradeloop's pacing, :mod:`._pacing`) and OpenTelemetry span are
all the SDK's; the raw response spares building the SDK's pydantic ``Message``, of
which the judge reads three fields: :func:`~._raw.read_message` reads the body's JSON
instead (about a fifth of a request's client CPU). Any other client (a fake, a
replaying cassette) is asked through ``messages.parse`` (the judge) or
``messages.create`` (the generator), as it is. Async calls use the client's async twin
(:mod:`._aclient`), or the sync client in a worker thread for a client gradeloop did
not build.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import NotAnAnswer
from ..errors._redact import remember_client
from ..grading._workers import in_thread
from ._aclient import AsyncTwin
from ._adapter import JSON_MODE, Ask, Reading
from ._failure import refuses_structure
from ._pacing import paced
from ._raw import raw_client, read_message
from ._reply import FINISHED, first_text

__all__ = ["MessagesAPI"]


class MessagesAPI:
    """The :class:`~._adapter.Adapter` for the Messages API (see the module docstring).

    ``method`` is how a client that is not the SDK's own is asked: ``"parse"`` (the
    judge: a fake may hand back a parsed value) or ``"create"`` (the generator).
    ``async_client`` and ``fan_out`` are the async twin's (:class:`~._aclient.AsyncTwin`).
    """

    forms: tuple[str, ...] = ("output_config", JSON_MODE)
    api = "Messages API"
    schema_field = "output_config"
    gen_ai_system = "anthropic"
    # The API enforces the schema by constrained decoding: an invalid reply means a
    # server that ignores output_config, which a repair in the same form cannot mend.
    repairs_structured = False

    def __init__(
        self,
        client: Any,
        *,
        method: Literal["parse", "create"] = "parse",
        async_client: Any = None,
        fan_out: int = 1,
    ) -> None:
        self.client = client
        # its key, in whatever shape, is scrubbed from everything that leaves a call
        remember_client(client)
        remember_client(async_client)
        self.method = method
        self.twin = AsyncTwin(client, async_client, fan_out=fan_out)

    def request(self, ask: Ask, form: str) -> dict[str, Any]:
        """``messages.create`` keyword arguments (``extra_body`` apart, as the SDK takes it)."""
        request: dict[str, Any] = {"model": ask.model, "max_tokens": ask.max_tokens}
        if ask.system is not None:
            request["system"] = (
                [
                    {
                        "type": "text",
                        "text": ask.system,
                        "cache_control": {"type": "ephemeral", "ttl": ask.cache_ttl},
                    }
                ]
                if ask.cache_ttl
                else ask.system
            )
        request["messages"] = ask.messages
        if ask.schema is not None and form == "output_config":
            request["output_config"] = {"format": {"type": "json_schema", "schema": ask.schema}}
        if ask.extra_body:
            request["extra_body"] = dict(ask.extra_body)
        return request

    def send(self, request: dict[str, Any]) -> Any:
        client = paced(self.client)  # a caller's client, as it is, plus a batch's pacing
        if raw_client(client):
            return read_message(client.messages.with_raw_response.create(**request).read())
        return getattr(client.messages, self.method)(**request)

    async def asend(self, request: dict[str, Any]) -> Any:
        aclient = self.twin.client()
        if aclient is None:  # a client gradeloop did not build: as is, off the loop
            return await in_thread(self.send, request)
        aclient = paced(aclient)
        if raw_client(aclient):
            raw = await aclient.messages.with_raw_response.create(**request)
            return read_message(await raw.read())
        return await getattr(aclient.messages, self.method)(**request)

    def read(self, reply: Any) -> Reading:
        parsed = getattr(reply, "parsed_output", None)
        finished = getattr(reply, "stop_reason", None) in FINISHED
        # With text in the reply, the text is read: a parse made on the client side may
        # have been lax (pydantic keeps a duplicated key's last value, for one).
        if parsed is not None and finished and _text_or_none(reply) is None:
            return Reading(reply, None, parsed)
        try:
            return Reading(reply, first_text(reply))
        except NotAnAnswer as exc:
            return Reading(reply, None, failure=exc)

    def api_error(self, exc: BaseException) -> bool:
        import anthropic  # only after a send raised: a replayed reply needs no SDK

        return isinstance(exc, anthropic.APIError)

    def refuses_form(self, exc: BaseException) -> bool:
        return refuses_structure(exc)

    async def aclose(self) -> None:
        await self.twin.aclose()


def _text_or_none(reply: Any) -> str | None:
    try:
        return first_text(reply)
    except NotAnAnswer:
        return None
