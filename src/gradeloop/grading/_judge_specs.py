"""Naming judge models across providers: ``[PROVIDER:]MODEL[@BASE_URL]``.

``--judge-model`` (given once or several times) and a rubric's ``judge_models`` name
each judge this way::

    claude-sonnet-4-5                                  the --provider's API (default)
    anthropic:claude-sonnet-4-5                        the Messages API
    openai-compatible:qwen3-32b@http://localhost:8000/v1
                                                       a chat-completions server

The provider prefix is read only when it is a known provider, so an Ollama model id
with a colon (``qwen3:32b``) stays whole; a base URL is read only after the last
``@`` and only when it starts with ``http://`` or ``https://`` (Vertex model ids hold
an ``@`` too). Two or more judges make a jury; a rubric's ``jury`` table sets its
policy: ``jury = {policy = "majority", on = "all", quorum = 2, margin = 1}``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["JURY_FIELDS", "PROVIDERS", "JudgeSpec", "check_jury", "parse_judge_spec"]

PROVIDERS = ("anthropic", "openai-compatible")
JURY_FIELDS = ("policy", "on", "quorum", "margin")
_MAX = 2048


@dataclass(frozen=True)
class JudgeSpec:
    """One judge model: its provider (None: the command's ``--provider``), the model
    id, and a base URL of its own (None: the provider's default)."""

    provider: str | None
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        head = f"{self.provider}:" if self.provider else ""
        tail = f"@{self.base_url}" if self.base_url else ""
        return f"{head}{self.model}{tail}"


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def parse_judge_spec(text: object) -> JudgeSpec:
    """``[PROVIDER:]MODEL[@BASE_URL]`` read; a ValueError saying what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"a judge model is a string like 'anthropic:MODEL', not {text!r}")
    raw = text.strip()
    if not raw or len(raw) > _MAX:
        raise ValueError("a judge model needs a model id, e.g. 'anthropic:claude-sonnet-4-5'")
    base_url = None
    at = raw.rfind("@")
    if at != -1 and raw[at + 1 :].startswith(("http://", "https://")):
        raw, base_url = raw[:at], raw[at + 1 :]
    elif at != -1 and _SCHEME.match(raw[at + 1 :]):  # a URL, but not one a client speaks
        scheme = raw[at + 1 :].split("://", 1)[0]
        raise ValueError(
            f"the server URL in {text!r} is {scheme}://, not http(s); write e.g. "
            "'openai-compatible:qwen3-32b@http://localhost:8000/v1'"
        )
    provider = None
    head, colon, rest = raw.partition(":")
    if colon and head in PROVIDERS:
        provider, raw = head, rest
    elif (
        colon
        and head.replace("-", "").isalpha()
        and head.lower().startswith(("anthropic", "openai"))
    ):
        raise ValueError(
            f"unknown provider {head!r} in {text!r}; use one of: {', '.join(PROVIDERS)}"
        )
    if not raw or any(ch.isspace() for ch in raw):
        raise ValueError(
            f"{text!r} has no model id (or one with spaces); write e.g. "
            "'openai-compatible:qwen3-32b@http://localhost:8000/v1'"
        )
    return JudgeSpec(provider, raw, base_url)


def check_jury(table: object) -> dict[str, Any]:
    """A rubric's ``jury`` table checked (only ``policy``, ``on``, ``quorum``,
    ``margin``, each of the right kind); a ValueError naming the field and the fix."""
    if not isinstance(table, Mapping):
        raise ValueError('jury is a table: jury = {policy = "majority", on = "all", quorum = 2}')
    out: dict[str, Any] = {}
    for name, value in table.items():
        if name not in JURY_FIELDS:
            raise ValueError(f"unknown jury field {name!r}; fields: {', '.join(JURY_FIELDS)}")
        if name == "policy" and value not in ("majority", "median"):
            raise ValueError(f"jury policy must be 'majority' or 'median', not {value!r}")
        if name == "on" and value not in ("all", "doubtful"):
            raise ValueError(f"jury on must be 'all' or 'doubtful', not {value!r}")
        if name == "quorum" and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ValueError(f"jury quorum must be a whole number >= 1, not {value!r}")
        if name == "margin" and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"jury margin must be a number >= 0, not {value!r}")
        out[name] = value
    return out
