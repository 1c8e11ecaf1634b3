"""The chat-completions adapter: ``POST /v1/chat/completions``, through the ``openai`` SDK.

vLLM, Ollama, llama.cpp's server, LM Studio and LiteLLM serve it. Structured forms, in
the order ``"auto"`` tries them: ``response_format`` json_schema (``strict: true``
when the schema is in strict mode's subset, as every judge schema is), then
``{"type": "json_object", "schema": ...}`` (llama-cpp-python's own form, which refuses
json_schema with HTTP 500), then JSON mode (the schema in the system text). The
system text is the first message. Replies are read by :mod:`._oai_reply` (a refusal,
a content-filter or length stop, empty content each typed as on the Messages API).

Async calls run the sync client in a worker thread.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotAnAnswer
from ..errors._redact import remember_client
from ..grading._workers import in_thread
from ._adapter import JSON_MODE, Ask, Reading
from ._failure import refuses_structure
from ._oai_reply import chat_reply, chat_text

__all__ = ["ChatCompletions"]

_CHAT_FORMS: tuple[str, ...] = ("json_schema", "json_object", JSON_MODE)


class ChatCompletions:
    """The :class:`~._adapter.Adapter` for chat completions (see the module docstring)."""

    forms = _CHAT_FORMS
    api = "chat completions"
    schema_field = "response_format"
    gen_ai_system = "openai"
    # Servers enforce the schema unevenly (some accept it and only nudge the model):
    # an invalid reply gets the one repair, with the schema again.
    repairs_structured = True

    def __init__(self, client: Any) -> None:
        self.client = client
        remember_client(client)  # its key, in whatever shape, is scrubbed from what leaves

    def request(self, ask: Ask, form: str) -> dict[str, Any]:
        """``chat.completions.create`` keyword arguments (``extra_body`` kept apart)."""
        messages = [*ask.messages]
        if ask.system is not None:
            messages.insert(0, {"role": "system", "content": ask.system})
        request: dict[str, Any] = {
            "model": ask.model,
            "max_tokens": ask.max_tokens,
            "messages": messages,
        }
        if ask.schema is not None and form == "json_object":
            request["response_format"] = {"type": "json_object", "schema": ask.schema}
        elif ask.schema is not None and form == "json_schema":
            strict = _strict_ready(ask.schema)
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": ask.schema_name, "strict": strict, "schema": ask.schema},
            }
        if ask.extra_body:
            request["extra_body"] = dict(ask.extra_body)
        return request

    def send(self, request: dict[str, Any]) -> Any:
        return self.client.chat.completions.create(**request)

    async def asend(self, request: dict[str, Any]) -> Any:
        return await in_thread(self.send, request)

    def read(self, reply: Any) -> Reading:
        seen = chat_reply(reply)
        try:
            return Reading(seen, chat_text(reply))
        except NotAnAnswer as exc:
            return Reading(seen, None, failure=exc)

    def api_error(self, exc: BaseException) -> bool:
        import openai  # loaded already: the client that raised is openai's

        return isinstance(exc, openai.APIError)

    def refuses_form(self, exc: BaseException) -> bool:
        return refuses_structure(exc)

    async def aclose(self) -> None:
        """Nothing to close: async calls borrow the sync client."""


def _strict_ready(schema: Any) -> bool:
    """Whether ``schema`` is in the subset ``strict: true`` takes on chat completions:
    every object closed (``additionalProperties: false``) with every property required.
    The judge's schemas are; a schema with optional properties (``propose``'s checker
    options) is sent with ``strict: false``, as a strict server would refuse it."""
    if isinstance(schema, list):
        return all(_strict_ready(v) for v in schema)
    if not isinstance(schema, dict):
        return True
    props = schema.get("properties")
    if schema.get("type") == "object" or isinstance(props, dict):
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or ()) != set(props or ()):
            return False
    for key, value in schema.items():
        # a mapping of names to schemas: each value is a schema, the mapping is not
        named = key in ("properties", "$defs") and isinstance(value, dict)
        if not all(_strict_ready(v) for v in (value.values() if named else [value])):
            return False
    return True
