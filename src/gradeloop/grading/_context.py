"""What a checker may see besides the draft: the task, a reference answer, metadata,
and, when the draft is an agent's transcript, the transcript itself.

A checker declares a keyword parameter named ``context`` to receive a
:class:`CheckContext`; a checker without one is called exactly as before, with
the draft and its options only. That keeps every existing plugin working and
makes the extra data an explicit request rather than a surprise argument. The
draft's text is always what text checkers read: a transcript's final assistant
text; the tool calls are on ``context.transcript``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ._transcript import Transcript, as_transcript

__all__ = ["CONTEXT_PARAM", "CheckContext", "make_context", "takes_context"]

#: The keyword parameter a checker declares to receive the context.
CONTEXT_PARAM = "context"


@dataclass(frozen=True, slots=True)
class CheckContext:
    """The task, the reference answer (if any) and the metadata of the draft being graded.

    ``transcript`` is the draft's :class:`~gradeloop.Transcript` when the draft is an
    agent's messages (None for a text draft); ``reference`` is then the reference's
    final text and ``reference_transcript`` the whole reference, when one was given
    as messages.

    >>> from gradeloop import CheckResult, checker
    >>> from gradeloop.grading import CheckContext
    >>> @checker("names_the_product")
    ... def names_the_product(text: str, *, context: CheckContext) -> CheckResult:
    ...     product = str(context.metadata.get("product", ""))
    ...     return CheckResult(bool(product) and product in text)
    """

    task: str = ""
    reference: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    transcript: Transcript | None = None
    reference_transcript: Transcript | None = None


def make_context(
    task: str = "",
    reference: Any = None,
    metadata: Mapping[str, Any] | None = None,
    transcript: Transcript | None = None,
) -> CheckContext:
    """A :class:`CheckContext` whose metadata is a read-only copy (a checker cannot
    change what the next checker sees). ``reference`` is a string, None, or a
    transcript (a :class:`~gradeloop.Transcript` or a list of message dicts)."""
    reference_transcript = None
    if isinstance(reference, Transcript):
        reference_transcript, reference = reference, reference.final_text
    elif reference is not None and not isinstance(reference, str):
        try:
            reference_transcript = as_transcript(reference, what="reference")
        except TypeError:
            raise TypeError(
                "reference must be a string, a Transcript, a list of message dicts or "
                f"None, not {type(reference).__name__}"
            ) from None
        assert reference_transcript is not None
        reference = reference_transcript.final_text
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping or None, not {type(metadata).__name__}")
    return CheckContext(
        task=task,
        reference=reference,
        metadata=MappingProxyType(dict(metadata or {})),
        transcript=transcript,
        reference_transcript=reference_transcript,
    )


def takes_context(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` declares a ``context`` parameter it can receive by keyword.

    A bare ``**kwargs`` does not count: only a checker that names the parameter
    gets the context.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(
        p.name == CONTEXT_PARAM and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in params[1:]  # the first parameter is the draft, whatever its name
    )
