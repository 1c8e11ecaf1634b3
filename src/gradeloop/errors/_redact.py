"""Secrets out of text that leaves gradeloop: the history, cassettes, error messages.

One scrubber, in two strengths:

:func:`scrub_text` strips user-info from URLs (``https://user:pw@host`` ->
``https://host``), replaces Anthropic keys (``sk-ant-...``) with ``[REDACTED]``, and
every credential gradeloop knows by value: the values of environment variables whose
names look like credentials (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ...), and the
keys, tokens and URL passwords of the clients its judges and generators were handed
(:func:`remember_client`: a key passed in code, in any shape), with their base64
forms. The history store and cassettes pass every string they keep through it.

:func:`scrub_error` is for error messages, which can echo a request's credential (some
gateways quote the key they refused, or the ``Authorization: Basic ...`` header they
got): :func:`scrub_text`, then key-shaped words after ``Bearer``, ``Basic`` or
``api-key:``. Every message that leaves a model call goes through it before it leaves
- a ``JudgeError``, a call's record (and so the history), an OpenTelemetry span's
status and exception event, a :class:`~gradeloop.errors.StructuredFormWarning`, the
CLI's stderr - and :func:`scrub_chain` scrubs the SDK exception chained as a failure's
cause, so a printed traceback shows no key either.

Every pattern here is linear: a fixed prefix, then one character class.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = [
    "REDACTED",
    "looks_secret",
    "remember_client",
    "remember_secret",
    "scrub_chain",
    "scrub_error",
    "scrub_text",
]

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
    """``text`` with URL user-info stripped, Anthropic keys redacted, and the
    credentials of gradeloop's clients redacted by value (linear time)."""
    return _redact_values(_ANTHROPIC_KEY.sub(REDACTED, _strip_userinfo(text)), _client_secrets())


def _redact_values(text: str, values: list[str]) -> str:
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


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


# Key-shaped words a message may quote: an OpenAI-style key, or the value after a
# "Bearer" or "Basic" (an Authorization header echoed: Basic is base64 of user:password)
# or an api-key header or field. Words of 8+ characters only, so "Bearer token" in
# prose is left alone.
_QUOTED_KEYS = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?<=bearer )[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?<=Basic )[A-Za-z0-9+/=]{8,}"
    r"|(?<=basic )[A-Za-z0-9+/=]{8,}"
    r"|(?i:(?<=api-key: )|(?<=api_key: )|(?<=api_key=)|(?<=api-key=))[^\s\"',;]{8,}"
)
_MIN_SECRET = 8  # shorter values ("1", "true") are not credentials
# A client's key is redacted wherever it appears, even in a draft: one this short
# ("test-key") could be an ordinary word.
_MIN_CLIENT_SECRET = 12
# What gradeloop itself sends as a key to a local server that needs none: no secret.
_PLACEHOLDERS = frozenset({"gradeloop-local"})


def scrub_error(text: str) -> str:
    """An error message fit to show or record: :func:`scrub_text` (URL user-info, the
    clients' credentials), then the environment's credentials and key-shaped words."""
    return _QUOTED_KEYS.sub(REDACTED, _redact_values(scrub_text(text), _environment_secrets()))


def _environment_secrets() -> list[str]:
    """The values of environment variables that look like credentials, longest first
    (so a key that contains another is redacted whole)."""
    found = {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_SECRET and looks_secret(name)
    }
    return sorted(found, key=len, reverse=True)


# The credentials of the clients gradeloop was handed, with their base64 forms: a key
# passed in code is in no environment variable, and may have any shape. Only added
# to (a client's key stays a secret after the client is gone), under a lock.
_CLIENT_SECRETS: set[str] = set()
_LOCK = threading.Lock()
_sorted: list[str] = []  # _CLIENT_SECRETS longest first, remade when one is added


def remember_secret(value: object) -> None:
    """Treat ``value`` (a key, a token, a password) as a credential from now on: every
    scrub redacts it, and its base64 forms (an ``Authorization: Basic`` echo)."""
    if not isinstance(value, str) or len(value) < _MIN_CLIENT_SECRET or value in _PLACEHOLDERS:
        return
    forms = {value}
    for framed in (value, f":{value}", f"{value}:"):
        encoded = base64.b64encode(framed.encode("utf-8", "surrogatepass")).decode("ascii")
        forms.add(encoded.rstrip("="))
    global _sorted
    with _LOCK:
        if not forms <= _CLIENT_SECRETS:
            _CLIENT_SECRETS.update(forms)
            _sorted = sorted(_CLIENT_SECRETS, key=len, reverse=True)


def remember_client(client: object) -> None:
    """Remember the credentials ``client`` carries (an SDK client's ``api_key`` and
    ``auth_token``, and the password in its ``base_url``), whatever their shape."""
    for name in ("api_key", "auth_token"):
        remember_secret(getattr(client, name, None))
    base = getattr(client, "base_url", None)
    if base is not None:
        try:
            password = urlsplit(str(base)).password
        except ValueError:
            return
        if password:
            remember_secret(password)
            remember_secret(unquote(password))


def _client_secrets() -> list[str]:
    """The clients' credentials, longest first (so a key that contains another is
    redacted whole). The list is replaced, never changed, when one is added."""
    return _sorted


def scrub_chain(exc: BaseException) -> None:
    """Scrub ``exc`` and the exceptions it was raised from (``__cause__`` and
    ``__context__``) in place: their ``args`` and an API error's ``message`` and
    ``body``, so a traceback that prints the chain shows no credential."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 32:
        seen.add(id(current))
        current.args = tuple(_scrubbed(a) for a in current.args)
        for name in ("message", "body"):
            value = getattr(current, name, None)
            if value is not None:
                with contextlib.suppress(AttributeError, TypeError):  # read-only: as is
                    setattr(current, name, _scrubbed(value))
        current = current.__cause__ or current.__context__


def _scrubbed(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return scrub_error(value)
    if depth > 20:
        return value
    if isinstance(value, dict):
        return {k: _scrubbed(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, depth + 1) for v in value]
    return value
