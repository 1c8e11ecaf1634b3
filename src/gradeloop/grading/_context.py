"""What a checker may see besides the draft: the task, a reference answer, metadata.

A checker declares a keyword parameter named ``context`` to receive a
:class:`CheckContext`; a checker without one is called exactly as before, with
the draft and its options only. That keeps every existing plugin working and
makes the extra data an explicit request rather than a surprise argument.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["CONTEXT_PARAM", "CheckContext", "make_context", "takes_context"]

#: The keyword parameter a checker declares to receive the context.
CONTEXT_PARAM = "context"


@dataclass(frozen=True)
class CheckContext:
    """The task, the reference answer (if any) and the metadata of the draft being graded.

    >>> from gradeloop import CheckContext, CheckResult, checker
    >>> @checker("names_the_product")
    ... def names_the_product(text: str, *, context: CheckContext) -> CheckResult:
    ...     product = str(context.metadata.get("product", ""))
    ...     return CheckResult(bool(product) and product in text)
    """

    task: str = ""
    reference: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def make_context(
    task: str = "", reference: str | None = None, metadata: Mapping[str, Any] | None = None
) -> CheckContext:
    """A :class:`CheckContext` whose metadata is a read-only copy (a checker cannot
    change what the next checker sees)."""
    if reference is not None and not isinstance(reference, str):
        raise TypeError(f"reference must be a string or None, not {type(reference).__name__}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping or None, not {type(metadata).__name__}")
    return CheckContext(task, reference, MappingProxyType(dict(metadata or {})))


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
