"""Keep secrets out of the history database.

Loop settings can carry credentials (a client's API key, a base URL with a password
in it, an auth header), and a task or draft can quote one. The history file is plain
SQLite that outlives the run, so everything is scrubbed on the way in:

* in **settings** (the loop config, checker options) any entry whose *name* looks like
  a credential is dropped: ``api_key``, ``key``, ``*_key``, ``token``, ``*_token``,
  ``secret``, ``password``, ``authorization``, ``credentials``, ``cookie`` ... (case
  and separators ignored). ``max_tokens`` or ``input_tokens`` are counts, not
  credentials, and are kept;
* in **every** string stored, user-info is stripped from URLs
  (``https://user:pw@host`` -> ``https://host``) and Anthropic keys (``sk-ant-...``)
  are replaced by ``[REDACTED]``.

Names are not used to drop entries from records and rubric criteria: there the names
are the user's own criterion keys, and a criterion called ``secret_sauce`` is not a
secret.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Set
from typing import Any

from ..errors._redact import REDACTED, looks_secret, scrub_text

__all__ = ["REDACTED", "scrub_rubric", "scrub_settings", "scrub_text", "scrub_values"]


def scrub_values(value: Any) -> Any:
    """A JSON-ready copy of ``value`` with every string passed through :func:`scrub_text`.

    Mappings become dicts with string keys, other containers become lists, and any
    other object becomes its (scrubbed) ``str()`` so that storing never fails on it.
    """
    return _scrub(value, drop_names=False)


def scrub_settings(value: Any) -> Any:
    """Like :func:`scrub_values`, and also drops entries whose names look secret."""
    return _scrub(value, drop_names=True)


def scrub_rubric(rubric: Mapping[str, Any]) -> dict[str, Any]:
    """A scrubbed copy of ``Rubric.to_dict()``.

    A criterion's own fields are kept (its ``key`` field is its name, not a
    credential); its checker ``options`` are settings and are scrubbed as such.
    """
    out: dict[str, Any] = scrub_values(rubric)
    criteria = rubric.get("criteria")
    if isinstance(criteria, list | tuple):
        cleaned = []
        for raw, done in zip(criteria, out["criteria"], strict=True):
            if isinstance(raw, Mapping) and isinstance(raw.get("options"), Mapping):
                done["options"] = scrub_settings(raw["options"])
            cleaned.append(done)
        out["criteria"] = cleaned
    return out


def _scrub(value: Any, *, drop_names: bool) -> Any:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        # JSON has no NaN or infinity; store them as null rather than non-standard JSON.
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, Mapping):
        return {
            scrub_text(str(k)): _scrub(v, drop_names=drop_names)
            for k, v in value.items()
            if not (drop_names and looks_secret(str(k)))
        }
    if isinstance(value, list | tuple | Set):
        return [_scrub(v, drop_names=drop_names) for v in value]
    return scrub_text(str(value))
