"""What the local_model tests share: the server they talk to, and its usage read off the wire."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MODEL = "gemma"  # the alias each server is started with
#: llama.cpp's own server, when given: the tests then run against it too.
LLAMA_SERVER = os.environ.get("GRADELOOP_LLAMA_SERVER", "").strip()
# Greedy, so a run reads the same twice; and a repeat penalty, because a model this small
# decoding greedily can loop inside a string until max_tokens (seen with Gemma 3 270M).
GREEDY = {"temperature": 0, "repeat_penalty": 1.3}


@dataclass
class LocalServer:
    """A running server: its API roots and what it takes."""

    name: str
    root: str  # the Messages-API base URL (no /v1)
    refuses_json_schema: bool  # llama-cpp-python takes json_object + schema instead
    messages_api: bool  # serves POST /v1/messages
    log: Path = field(default_factory=Path)

    @property
    def base_url(self) -> str:
        """The chat-completions base URL."""
        return self.root + "/v1"


class ServerUsage:
    """The usage blocks the server sent, read off the wire (not through gradeloop)."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.clients: list[Any] = []  # closed when the test ends

    def hook(self, response: Any) -> None:
        response.read()
        try:
            body = response.json()
        except ValueError:
            return
        if isinstance(body, dict) and isinstance(body.get("usage"), dict):
            self.blocks.append(body["usage"])

    def total(self, name: str) -> int:
        return sum(int(b.get(name) or 0) for b in self.blocks)


def openai_client(server: LocalServer, wire: ServerUsage, **kw: Any) -> Any:
    """A real ``openai.OpenAI`` for ``server`` whose answers ``wire`` also reads."""
    import httpx
    import openai

    http = httpx.Client(event_hooks={"response": [wire.hook]}, timeout=300)
    kw.setdefault("max_retries", 0)
    client = openai.OpenAI(base_url=server.base_url, api_key="local", http_client=http, **kw)
    wire.clients.append(client)
    return client
