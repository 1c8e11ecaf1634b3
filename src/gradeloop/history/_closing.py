"""``with obj:`` for objects that have a ``close()``: one ``__enter__``/``__exit__`` pair.

It lives in history, the lowest layer of the classes that use it (the history store,
the report's read-only reader, the tool runner, the CLI's checkpoint database).
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self

__all__ = ["Closing"]


class _Closable(Protocol):
    def close(self) -> None: ...


class Closing:
    """A mixin: ``with obj:`` gives ``obj`` and calls ``obj.close()`` on the way out,
    whether or not the block raised (the exception, if any, propagates)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self: _Closable,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
