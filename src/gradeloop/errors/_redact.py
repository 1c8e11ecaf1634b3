"""Secrets out of text that leaves gradeloop: the history, cassettes, error messages.

:func:`scrub_text` strips user-info from URLs (``https://user:pw@host`` ->
``https://host``) and replaces Anthropic keys (``sk-ant-...``) with ``[REDACTED]``; the
history store and cassettes pass every string they keep through it.

:func:`scrub_error` is for error messages, which can echo a request's credential (some
gateways quote the key they refused): :func:`scrub_text`, then the values of the
environment variables whose names look like credentials (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``, ...), and key-shaped words after ``Bearer`` or ``api-key:``.
Every message that leaves gradeloop - the CLI's stderr, a ``JudgeError``, an
OpenTelemetry span's status and exception event - goes through it.

Every pattern here is linear: a fixed prefix, then one character class.
"""

from __future__ import annotations

import os
import re

__all__ = ["REDACTED", "looks_secret", "scrub_error", "scrub_text"]

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


# Key-shaped words a message may quote: an OpenAI-style key, or the value after a
# "Bearer" or an api-key header or field. Words of 8+ characters only, so "Bearer
# token" in prose is left alone.
_QUOTED_KEYS = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?<=bearer )[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?i:(?<=api-key: )|(?<=api_key: )|(?<=api_key=)|(?<=api-key=))[^\s\"',;]{8,}"
)
_MIN_SECRET = 8  # shorter environment values ("1", "true") are not credentials


def scrub_error(text: str) -> str:
    """An error message fit to show or record: :func:`scrub_text`, then credentials
    from the environment and key-shaped words redacted."""
    text = _QUOTED_KEYS.sub(REDACTED, scrub_text(text))
    for value in _environment_secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def _environment_secrets() -> list[str]:
    """The values of environment variables that look like credentials, longest first
    (so a key that contains another is redacted whole)."""
    found = {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_SECRET and looks_secret(name)
    }
    return sorted(found, key=len, reverse=True)
