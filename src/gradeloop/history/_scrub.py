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
import re
from collections.abc import Mapping, Set
from typing import Any

__all__ = ["REDACTED", "scrub_rubric", "scrub_settings", "scrub_text", "scrub_values"]

REDACTED = "[REDACTED]"

_ANTHROPIC_KEY = re.compile(r"sk-ant-[A-Za-z0-9_\-]+")
# URL user-info is ``scheme://userinfo@``: the scheme a letter at a word boundary,
# then letters, digits, '+', '.' or '-'; userinfo anything but '/', '@' or whitespace.
# As one regex (``\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@``) the engine would try
# every word boundary and run the scheme class to its end from each: quadratic on
# text like "ab-ab-ab-...". So candidates are found from their "://" forwards, and
# only then is the scheme looked for backwards: each character is read a bounded
# number of times.
_CANDIDATE = re.compile(r"://[^/\s@]+@")
_SCHEME_CHARS = re.compile(r"[A-Za-z0-9+.\-]*")  # matched on the reversed text
_SCHEME_START = re.compile(r"[+.\-](?=[A-Za-z])")  # a word boundary inside a scheme run
_SECRET_WORDS = ("secret", "password", "passwd", "authorization", "credential", "cookie")


def looks_secret(name: str) -> bool:
    """True when a setting called ``name`` probably holds a credential."""
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    if any(word in flat for word in _SECRET_WORDS):
        return True
    # Suffix tests, not substring tests: "max_tokens" and "keys" are not credentials.
    return flat.endswith(("key", "token")) or flat in {"auth", "bearer"}


def scrub_text(text: str) -> str:
    """``text`` with URL user-info stripped and Anthropic keys redacted (linear time)."""
    return _ANTHROPIC_KEY.sub(REDACTED, _strip_userinfo(text))


def _strip_userinfo(text: str) -> str:
    """``text`` without the ``userinfo@`` of any ``scheme://userinfo@`` in it.

    A candidate ``://userinfo@`` never holds another "://" (its run stops at '/'),
    so skipping a candidate without a scheme skips no match.
    """
    pieces: list[str] = []
    done = 0  # text[:done] is settled (copied to pieces, or cut)
    backwards = ""  # the reversed text, made once a candidate is found
    for found in _CANDIDATE.finditer(text):
        sep = found.start()
        backwards = backwards or text[::-1]
        if _has_scheme(text, backwards, sep):
            pieces.append(text[done : sep + 3])
            done = found.end()
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _run_end(chars: re.Pattern[str], text: str, pos: int) -> int:
    """The end of the run of ``chars`` (a ``[...]*`` pattern) starting at ``pos``."""
    found = chars.match(text, pos)
    return found.end() if found is not None else pos


def _has_scheme(text: str, backwards: str, sep: int) -> bool:
    """True when a scheme ends at ``sep``, where a "://" starts.

    The run of scheme characters before ``sep`` must hold a letter at a word
    boundary: at the run's start after a non-word character (or the text's start),
    or after a '+', '.' or '-' inside the run.
    """
    run = _run_end(_SCHEME_CHARS, backwards, len(text) - sep) - (len(text) - sep)
    start = sep - run
    if run and text[start].isalpha():
        before = text[start - 1] if start > 0 else ""
        if not (before.isalnum() or before == "_"):
            return True
    return _SCHEME_START.search(text, start, sep) is not None


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
