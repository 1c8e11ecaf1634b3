"""One line for a model server's failure: the status, its message cut to a sentence, the fix.

A server's error body is written for its own developers: llama-cpp-python wraps a
validation error in a Python traceback with its file paths, ``python3 -m http.server``
answers with a 13-line HTML page, a proxy with its own. None of that is for the
person running ``gradeloop grade``. :func:`describe_api_error` turns an SDK's
``APIError`` (``anthropic`` or ``openai``) into one line::

    HTTP 500 InternalServerError: body.response_format.type: Input should be 'text'
    or 'json_object'; the server refused the request: check the model name and ...

and :func:`refuses_structure` tells a refusal of a structured-output form (which a
judge in ``structured="auto"`` answers by stepping down to the next form) from any
other failure.

Every scan here is linear: the body is cut to :data:`_SCAN` characters first and
the patterns have no nested or adjacent unbounded repeats.
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__ = [
    "describe_api_error",
    "failure_line",
    "refuses_structure",
    "sdk_failure",
    "server_message",
]

#: How much of an error body is read (a sentence is all that is kept of it).
_SCAN = 16_384
#: The longest server message kept in the line.
_KEEP = 200

# Python traceback lines and what follows them: never shown.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|(?:^|\s)File \"")
# A pydantic/FastAPI validation error printed as a dict: its location and message.
_LOC = re.compile(r"'loc': \(([^)]{0,300})\)")
_MSG = re.compile(r"'msg': (?:\"([^\"]{0,300})\"|'([^']{0,300})')")
# An absolute path of two parts or more (a server's files are none of the user's
# business); each part stops at the next slash, so no two repeats can trade characters.
_PATH = re.compile(r"(?:/[\w.\-]+){2,}")
_TAG = re.compile(r"<[^<>]{0,2000}>")
_TITLE = re.compile(r"<title>([^<]{0,200})</title>", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_SPACES = re.compile(r"\s+")
_CODE_PREFIX = re.compile(r"^(?:Error code: )?\d{3}(?: - |\s+)?")

#: The words whose presence in a refusal's body marks it as a refusal of the
#: structured form (the request's field names, and the schema they carry).
_STRUCTURE_WORDS = ("response_format", "json_schema", "output_config", "output_format", "schema")
_REFUSAL_STATUSES = frozenset({400, 422, 500})


def _body_text(exc: BaseException) -> str:
    """The error's body as text (a JSON body's message fields, else the raw text)."""
    body = getattr(exc, "body", None)
    text = _message_of(body)
    if text is None:
        text = str(getattr(exc, "message", None) or exc)
    return text[:_SCAN]


def _message_of(body: Any) -> str | None:
    if isinstance(body, str):
        return body
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    if isinstance(inner, str):
        return inner
    if isinstance(inner, dict):
        for name in ("message", "detail", "msg"):
            value = inner.get(name)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, list) and value:  # FastAPI's list of validation errors
                return _validation_list(value)
    detail = body.get("detail")
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list) and detail:
        return _validation_list(detail)
    return None


def _validation_list(items: list[Any]) -> str:
    first = items[0]
    if isinstance(first, dict):
        loc = first.get("loc")
        where = ".".join(str(p) for p in loc) if isinstance(loc, list | tuple) else ""
        msg = str(first.get("msg") or "")
        return f"{where}: {msg}" if where else msg
    return str(first)


def _looks_html(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body")) or "<html" in head


def _html_message(text: str) -> str:
    title = _TITLE.search(text)
    named = f" ({_SPACES.sub(' ', title.group(1)).strip()!r})" if title else ""
    return f"the answer is an HTML page{named}, not an API error"


def _validation_message(text: str) -> str | None:
    """``body.response_format.type: Input should be ...`` from a printed validation error."""
    msg = _MSG.search(text)
    if msg is None:
        return None
    said = msg.group(1) if msg.group(1) is not None else msg.group(2)
    loc = _LOC.search(text)
    if loc is None:
        return said
    parts = [p.strip().strip("'\"") for p in loc.group(1).split(",")]
    where = ".".join(p for p in parts if p)
    return f"{where}: {said}" if where else said


def _first_sentence(text: str) -> str:
    end = _SENTENCE_END.search(text)
    sentence = text[: end.start() + 1] if end else text
    if len(sentence) > _KEEP:
        sentence = sentence[: _KEEP - 1].rstrip() + "…"
    return sentence


def server_message(exc: BaseException) -> str:
    """The server's own message in ``exc``, cut to one sentence with no traceback, no
    file paths and no line breaks (an HTML page is named, never quoted whole)."""
    text = _body_text(exc)
    if _looks_html(text) or _looks_html(_CODE_PREFIX.sub("", text.lstrip(), count=1)):
        return _html_message(text)
    cut = _TRACEBACK.search(text)
    if cut is not None:
        text = text[: cut.start()]
    validation = _validation_message(text)
    if validation is not None:
        text = validation
    text = _CODE_PREFIX.sub("", _SPACES.sub(" ", _TAG.sub(" ", text)).strip(), count=1)
    text = _PATH.sub(_hide_path, text).strip(" :-")
    return _first_sentence(text) if text else "no message"


def refuses_structure(exc: BaseException) -> bool:
    """Whether ``exc`` is a server refusing a structured-output form: HTTP 400, 422 or
    500 whose body names ``response_format``, ``json_schema``, ``output_config`` or the
    schema. Any other failure (a connection error, a 429, a 500 about something else)
    is not: it is a failure, never a reason to change the request's shape."""
    if getattr(exc, "status_code", None) not in _REFUSAL_STATUSES:
        return False
    text = _body_text(exc).lower()
    return any(word in text for word in _STRUCTURE_WORDS)


def _fix(exc: BaseException, status: int | None, html: bool, api: str) -> str:
    """What to do about it, in words a library caller and a CLI user can both act on."""
    name = type(exc).__name__
    root = "e.g. http://localhost:8080/v1" if api == "chat completions" else "without /v1"
    if html or status in (404, 405, 501):
        return f"is the base URL a {api} server? (its API root, {root}; and the model name)"
    if status in (401, 403):
        return "check the API key (ANTHROPIC_API_KEY or OPENAI_API_KEY)"
    if refuses_structure(exc):
        return (
            "the server does not take this structured-output form: use --structured auto "
            "(steps down to a form it takes) or --structured json (structured='auto' or "
            "'json' in Python)"
        )
    if status in (400, 413, 422):
        return "the server refused the request: check the model name, and the server's log"
    if status == 429:
        return "the server is rate-limiting: wait, or send fewer requests at once"
    if status is not None and status >= 500:
        return "the server failed: see its log, or try again"
    if "Timeout" in name:
        return "the server did not answer in time: check that it is running and not overloaded"
    return "check the base URL and that the server is running"


def describe_api_error(exc: BaseException, *, api: str = "Messages API") -> str:
    """One line for an SDK ``APIError``: ``HTTP <status> <class>: <the server's message,
    one sentence>; <the fix>``. ``api`` names what the server should speak."""
    status = getattr(exc, "status_code", None)
    prefix = f"HTTP {status} " if isinstance(status, int) else ""
    html = _looks_html(_body_text(exc)) or _looks_html(
        _CODE_PREFIX.sub("", _body_text(exc).lstrip(), count=1)
    )
    message = server_message(exc) if status is not None else _connection_message(exc)
    return f"{prefix}{type(exc).__name__}: {message}; {_fix(exc, status, html, api)}"


def _connection_message(exc: BaseException) -> str:
    text = _SPACES.sub(" ", str(getattr(exc, "message", None) or exc)).strip()
    return _first_sentence(_PATH.sub(_hide_path, text[:_SCAN])).rstrip(".") or "no message"


def _hide_path(match: re.Match[str]) -> str:
    """A file's path becomes ``<path>``; an API route (``/v1/chat/completions``) stays."""
    path = match.group(0)
    last = path.rsplit("/", 1)[-1]
    return "<path>" if path.count("/") >= 4 or "." in last else path


def sdk_failure(exc: BaseException) -> str | None:
    """:func:`describe_api_error` for an ``anthropic`` or ``openai`` ``APIError``; None
    for anything else. The SDKs are looked up, never imported: a failure from one
    means it is loaded."""
    for name, api in (("anthropic", "Messages API"), ("openai", "chat completions")):
        error_type = getattr(sys.modules.get(name), "APIError", None)
        if isinstance(error_type, type) and isinstance(exc, error_type):
            return describe_api_error(exc, api=api)
    return None


def failure_line(exc: BaseException) -> str:
    """Any exception in one line: an SDK's API error as :func:`describe_api_error`
    puts it, anything else as its class and the first line of its message."""
    line = sdk_failure(exc)
    if line is not None:
        return line
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first[: _KEEP * 2]}" if first else type(exc).__name__
