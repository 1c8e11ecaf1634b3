"""Worker threads for the blocking parts of async grading, and whose they are.

Async grading runs code checkers, sync judges and sync clients off the event loop.
Outside a batch that is :func:`asyncio.to_thread`, the running loop's default
executor, whoever owns the loop. A batch (:func:`gradeloop.agrade_many`) needs as many
threads as it has drafts in flight, and a library must not change the default
executor of a loop it did not create: so the batch owns a pool (:func:`worker_pool`),
its tasks send their blocking work there (:func:`in_thread`), and the pool is shut
down when the batch ends.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["in_thread", "worker_pool"]

_T = TypeVar("_T")
_POOL: ContextVar[ThreadPoolExecutor | None] = ContextVar("gradeloop_worker_pool", default=None)


@contextmanager
def worker_pool(size: int) -> Iterator[ThreadPoolExecutor]:
    """A pool of up to ``size`` threads for :func:`in_thread` calls made in this
    context (and the tasks it starts), shut down when the block ends."""
    pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="gradeloop-batch")
    token = _POOL.set(pool)
    try:
        yield pool
    finally:
        _POOL.reset(token)
        # Everything the batch awaited is done; after a cancellation a checker may
        # still run: its thread ends on its own, nobody waits for it here.
        pool.shutdown(wait=False, cancel_futures=True)


async def in_thread(fn: Callable[..., _T], /, *args: Any) -> _T:
    """``fn(*args)`` in a worker thread (the batch's pool, else the loop's default
    executor), with this context's variables, awaited."""
    pool = _POOL.get()
    if pool is None:
        return await asyncio.to_thread(fn, *args)
    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return await asyncio.get_running_loop().run_in_executor(pool, call)
