"""Test helpers: assert a draft is accepted, replay recorded judge replies, script a client.

* :func:`assert_graded` grades a draft and raises ``AssertionError`` with a per-key
  table (who filled each key, met, score/threshold, issues) and the judge's
  reasoning when it is not accepted.
* The pytest plugin (installed with gradeloop, entry point ``gradeloop``) adds the
  ``gradeloop_judge`` fixture, which replays the judge's replies from
  ``cassettes/<module>.json`` (:class:`Cassette`), the ``gradeloop`` marker and
  ``--gradeloop-record=none|new|all``. See docs/pytest.md.
* :class:`ScriptedClient` is a fake ``anthropic.Anthropic`` with queued replies
  (``text_reply``, ``verdict_reply``, ``refusal``, ``truncated``, ``thinking_only``,
  ``api_error``) for testing code built on the model classes without a key::

    from gradeloop import AnthropicGenerator
    from gradeloop.testing import ScriptedClient, refusal, text_reply

    client = ScriptedClient(text_reply("first draft"), refusal(category="cyber"))
    gen = AnthropicGenerator(client=client)
    assert gen.generate("write it") == "first draft"

The scripted client needs the ``anthropic`` SDK, so its names are imported on
first use: the pytest plugin, loaded into every pytest session, stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._assert import assert_graded
from ._cassette import Cassette, CassetteMiss

if TYPE_CHECKING:
    from ._scripted import (
        ScriptedClient,
        api_error,
        refusal,
        text_reply,
        thinking_only,
        truncated,
        verdict_reply,
    )

__all__ = [
    "Cassette",
    "CassetteMiss",
    "ScriptedClient",
    "api_error",
    "assert_graded",
    "refusal",
    "text_reply",
    "thinking_only",
    "truncated",
    "verdict_reply",
]

_SCRIPTED = {
    "PLACEHOLDER_MODEL",
    "ScriptedClient",
    "api_error",
    "refusal",
    "text_reply",
    "thinking_only",
    "truncated",
    "verdict_reply",
}


def __getattr__(name: str) -> Any:
    if name in _SCRIPTED:
        value = getattr(importlib.import_module("gradeloop.testing._scripted"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gradeloop.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SCRIPTED})
