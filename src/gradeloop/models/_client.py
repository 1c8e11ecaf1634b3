"""Building the Anthropic client and choosing models from arguments or the environment.

Precedence for models: an explicit ``model=`` argument, then ``GRADELOOP_JUDGE_MODEL``
(judge only), then ``GRADELOOP_MODEL``, then the defaults below. The defaults are
current models from the SDK's model list that the SDK does not flag as deprecated
(a deprecated name makes every call emit a ``DeprecationWarning``).
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..errors._redact import remember_client
from ._pacing import pace

if TYPE_CHECKING:  # the SDK is imported when a client is built: replaying needs none
    import anthropic

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_MODEL",
    "LOCAL_SERVER_KEY",
    "built_here",
    "generator_model",
    "judge_model",
    "make_client",
    "model_configured",
]

DEFAULT_MODEL = "claude-opus-5-5"
DEFAULT_JUDGE_MODEL = "claude-opus-5-5"

#: Sent as the key to a server given by base URL when no key is set: local servers
#: (Ollama, llama.cpp, vLLM) ignore it, but the SDK refuses to build without one.
LOCAL_SERVER_KEY = "gradeloop-local"

# A library message: it names the environment and the argument, never a CLI flag.
_NO_CREDENTIALS = (
    "no model is configured: set ANTHROPIC_API_KEY, or give a local server's address "
    "(ANTHROPIC_BASE_URL, or make_client(base_url=...))"
)


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def model_configured() -> bool:
    """Whether a client can be built from the environment alone.

    True when ``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN`` or
    ``ANTHROPIC_BASE_URL`` is set. Makes no network call.
    """
    return any(_env(v) for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"))


def make_client(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    max_retries: int | None = None,
    timeout: float | None = None,
) -> anthropic.Anthropic:
    """An :class:`anthropic.Anthropic` client from the arguments, else the environment.

    A base URL (argument or ``ANTHROPIC_BASE_URL``) with no key gets a placeholder
    key, because local servers need none. With neither a key nor a base URL this
    raises :class:`~gradeloop.errors.ConfigError` saying how to fix it. ``max_retries``
    and ``timeout`` (seconds) are the SDK's own settings (its defaults when None).

    HTTP is the SDK's own: its default httpx client, so proxies (``HTTPS_PROXY``,
    ``NO_PROXY``), ``SSL_CERT_FILE`` and timeouts work as the SDK documents. The client
    carries one addition, gradeloop's pacing middleware (SDK middleware; a pass-through
    outside :func:`gradeloop.grade_many`). Async calls on a judge or generator holding
    this client use an ``anthropic.AsyncAnthropic`` twin with the same settings
    (:mod:`._aclient`).
    """
    base = base_url or _env("ANTHROPIC_BASE_URL")
    key = api_key or _env("ANTHROPIC_API_KEY")
    token = None if key else _env("ANTHROPIC_AUTH_TOKEN")
    if key is None and token is None:
        if base is None:
            raise ConfigError(_NO_CREDENTIALS)
        key = LOCAL_SERVER_KEY
    import anthropic

    retries = anthropic.DEFAULT_MAX_RETRIES if max_retries is None else max_retries
    settings: dict[str, Any] = {"auth_token": token} if token is not None else {"api_key": key}
    if timeout is not None:
        settings["timeout"] = timeout
    # The pacing middleware lets grade_many slow a whole batch down on 429/529.
    client = anthropic.Anthropic(**settings, base_url=base, max_retries=retries, middleware=[pace])
    remember_client(client)  # its key and URL password are scrubbed from all that leaves
    _BUILT.add(client)
    return client


_BUILT: weakref.WeakSet[Any] = weakref.WeakSet()


def built_here(client: object) -> bool:
    """Whether :func:`make_client` built ``client``: its settings are all the SDK's
    defaults but for the ones :func:`make_client` sets, so an async twin with the same
    settings is the same client. A client a caller built is used as it is."""
    try:
        return client in _BUILT
    except TypeError:  # not hashable: not ours
        return False


def generator_model(model: str | None = None) -> str:
    """The generator's model: ``model``, else ``GRADELOOP_MODEL``, else the default."""
    return model or _env("GRADELOOP_MODEL") or DEFAULT_MODEL


def judge_model(model: str | None = None) -> str:
    """The judge's model: ``model``, else ``GRADELOOP_JUDGE_MODEL``, else
    ``GRADELOOP_MODEL``, else the default."""
    return model or _env("GRADELOOP_JUDGE_MODEL") or _env("GRADELOOP_MODEL") or DEFAULT_JUDGE_MODEL
