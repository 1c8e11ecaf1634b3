"""Which structured-output form a server takes, remembered per client.

Servers differ in how they take a JSON Schema. On chat completions, OpenAI, vLLM,
LM Studio and llama.cpp's ``llama-server`` take ``response_format`` ``json_schema``
(strict); llama-cpp-python's server refuses it (HTTP 500, "Input should be 'text'
or 'json_object'") and takes its own ``{"type": "json_object", "schema": ...}``;
others take neither. On the Messages API, ``output_config`` is taken, dropped or
refused. A judge in ``structured="auto"`` starts with the first form and, when the
server *refuses* one (see :func:`~._failure.refuses_structure`), steps down once to
the next, remembering it for that client, so the next request, and every other
judge on the same client, starts there. Each step down is said once, as one
:class:`~gradeloop.errors.StructuredFormWarning` naming the form.

A refusal is not an answer: it is never a verdict, and it does not spend the one
repair attempt an invalid reply gets.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any

from ..errors import StructuredFormWarning
from ..errors._redact import scrub_error

__all__ = ["FORM_NAMES", "Form", "FormMemory"]

#: A structured-output form's name: each adapter (:mod:`._adapter`) lists the ones it
#: sends, in the order ``"auto"`` tries them, ending with ``"json"`` (JSON mode).
Form = str

#: How each built-in form is named in the line that says a server was stepped down to
#: it (another provider's form is named as it is).
FORM_NAMES: dict[Form, str] = {
    "output_config": "output_config json_schema",
    "json_schema": "response_format json_schema (strict)",
    "json_object": "response_format json_object with the schema",
    "json": "JSON mode (the schema in the system text, no response_format)",
}

# client -> the index of the form it takes. Weak keys: a client that is gone takes
# its entry with it. One lock for all: a step down is rare, a read is a dict lookup.
_LOCK = threading.Lock()
_BY_CLIENT: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


class FormMemory:
    """The form a judge sends on ``client`` now: the first of ``forms`` unless the
    client was stepped down (``structured="auto"``), always the first (``"native"``),
    or always JSON mode (``"json"``)."""

    def __init__(self, client: Any, forms: tuple[Form, ...], structured: str) -> None:
        self.forms = forms
        self.structured = structured
        self._client_ref: Any = None
        self._own = 0  # used when the client cannot be weakly referenced
        try:
            self._client_ref = weakref.ref(client)
        except TypeError:
            self._client_ref = None

    def current(self) -> Form:
        """The form the next request is sent in."""
        if self.structured == "json":
            return "json"
        if self.structured == "native":
            return self.forms[0]
        return self.forms[min(self._index(), len(self.forms) - 1)]

    def _index(self) -> int:
        client = self._client_ref() if self._client_ref is not None else None
        if client is None:
            return self._own
        return _BY_CLIENT.get(client, 0)

    def step_down(self, refused: Form, why: str, server: str) -> bool:
        """After the server refused ``refused``: move on to the next form if the judge
        may (``"auto"``, and a form is left). True when the request should be sent
        again in :meth:`current`'s form; the first caller to move a client says so."""
        if self.structured != "auto" or refused not in self.forms:
            return False
        nxt = self.forms.index(refused) + 1
        if nxt >= len(self.forms):
            return False
        with _LOCK:
            client = self._client_ref() if self._client_ref is not None else None
            before = self._own if client is None else _BY_CLIENT.get(client, 0)
            moved = before < nxt
            if moved:
                if client is None:
                    self._own = nxt
                else:
                    _BY_CLIENT[client] = nxt
        if moved:
            warnings.warn(
                # the server's address may hold a password, its message the key
                scrub_error(
                    f"{server} refused {FORM_NAMES.get(refused, refused)} ({why}); gradeloop "
                    f"sends {FORM_NAMES.get(self.forms[nxt], self.forms[nxt])} to it from now on"
                ),
                StructuredFormWarning,
                stacklevel=2,
            )
        return True
