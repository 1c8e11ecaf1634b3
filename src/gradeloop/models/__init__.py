"""The model tier: the Anthropic and OpenAI-compatible judges and generators, the
client factory, token usage and cost, run fingerprints and request digests::

    from gradeloop.models import AnthropicJudge, OpenAICompatibleJudge, make_client, metered

    judge = AnthropicJudge(client=make_client(base_url="http://127.0.0.1:8080"))
    with metered() as meter:
        ...                                      # every model call inside is counted
    print(meter.usage.cost_usd)

Importing this package does not import the ``anthropic`` or ``openai`` SDK: the four
model classes are imported on first use (the SDK takes about two seconds of CPU to
import, and code-only grading never needs it). The model classes, ``first_text`` and
``make_client`` are also importable from :mod:`gradeloop` itself.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._client import DEFAULT_JUDGE_MODEL, DEFAULT_MODEL, make_client, model_configured
from ._digest import request_digest
from ._fingerprint import fingerprint_warnings, run_fingerprint
from ._reply import first_text
from ._usage import CallRecord, Meter, Usage, metered, record_call

if TYPE_CHECKING:
    from ._anthropic import AnthropicGenerator, AnthropicJudge
    from ._openai import OpenAICompatibleGenerator, OpenAICompatibleJudge

_LAZY = {
    "AnthropicGenerator": "gradeloop.models._anthropic",
    "AnthropicJudge": "gradeloop.models._anthropic",
    "OpenAICompatibleGenerator": "gradeloop.models._openai",
    "OpenAICompatibleJudge": "gradeloop.models._openai",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradeloop.models' has no attribute {name!r}")
    # not kept in globals(): gradeloop's own facade keeps it, and one cache is enough
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_MODEL",
    "AnthropicGenerator",
    "AnthropicJudge",
    "CallRecord",
    "Meter",
    "OpenAICompatibleGenerator",
    "OpenAICompatibleJudge",
    "Usage",
    "fingerprint_warnings",
    "first_text",
    "make_client",
    "metered",
    "model_configured",
    "record_call",
    "request_digest",
    "run_fingerprint",
]
