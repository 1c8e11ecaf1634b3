"""How a flow written once runs both blocking and awaited, and how sync code runs a loop.

A flow is a generator that holds a computation's decisions: it yields what it needs
done (a step), is sent the answer, and returns the result. It never blocks and never
awaits, so one flow serves a sync function and its async twin: :func:`drive` performs
its steps blocking, :func:`adrive` awaiting, and a step that raises has its exception
thrown into the flow at the ``yield`` that asked (the flow decides what a failure
means). The loop's rounds, a jury's questions and a draft selection are flows.

:func:`blocking` is the one rule for a sync entry point that runs an event loop of
its own (``grade_many``, ``compare_many``): it works wherever it is called. In a
thread with no running loop it is :func:`asyncio.run`; inside a running loop (asyncio
code, Jupyter), where a second loop cannot start in the same thread, the new loop runs
in a worker thread while the caller waits, as it waits on any blocking call.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Awaitable, Callable, Coroutine, Generator
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["LoopThread", "adrive", "blocking", "drive"]

S = TypeVar("S")  # a step the flow yields
A = TypeVar("A")  # the answer it is sent
R = TypeVar("R")  # what it returns


def drive(flow: Generator[S, A, R], perform: Callable[[S], A]) -> R:
    """Run ``flow`` to its end, performing each step blocking."""
    answer: Any = None
    error: Exception | None = None
    while True:
        try:
            step = flow.throw(error) if error is not None else flow.send(answer)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        answer, error = None, None
        try:
            answer = perform(step)
        except Exception as exc:  # the flow's to decide on, at the step that asked
            error = exc


async def adrive(flow: Generator[S, A, R], perform: Callable[[S], Awaitable[A]]) -> R:
    """:func:`drive`, each step awaited."""
    answer: Any = None
    error: Exception | None = None
    while True:
        try:
            step = flow.throw(error) if error is not None else flow.send(answer)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        answer, error = None, None
        try:
            answer = await perform(step)
        except Exception as exc:  # the flow's to decide on, at the step that asked
            error = exc


def blocking(main: Callable[[], Coroutine[Any, Any, R]]) -> R:
    """``main()`` run to its end on an event loop of its own, from sync code.

    Outside a running event loop: :func:`asyncio.run`. Inside one: the loop runs in a
    worker thread, with a copy of this context (call meters, the current span), and
    this thread waits for it; if the wait is interrupted (Ctrl-C), ``main`` is
    cancelled rather than left running, and the interruption propagates.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    worker = LoopThread(main)
    try:
        result: R = worker.result()
    except BaseException:
        worker.cancel()
        raise
    return result


class LoopThread:
    """``main()`` on a new event loop in a thread of its own, started at once."""

    def __init__(self, main: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        self._outcome: Future[Any] = Future()
        self._lock = threading.Lock()
        self._task: asyncio.Task[Any] | None = None
        self._cancelled = False
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(self._run, main), name="gradeloop-loop", daemon=True
        )
        self._thread.start()

    def result(self) -> Any:
        """What ``main()`` returned (or raised), once it has ended."""
        return self._outcome.result()

    def cancel(self) -> None:
        """Cancel ``main()`` (before it starts, or where it awaits); its cleanup runs."""
        with self._lock:
            self._cancelled = True
            task = self._task
        if task is not None:
            with contextlib.suppress(RuntimeError):  # closed: main() has ended already
                task.get_loop().call_soon_threadsafe(task.cancel)

    def _run(self, main: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        try:
            self._outcome.set_result(asyncio.run(self._main(main)))
        except BaseException as exc:  # handed to the thread that waits
            self._outcome.set_exception(exc)

    async def _main(self, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        with self._lock:
            self._task = asyncio.current_task()
            if self._cancelled:
                raise asyncio.CancelledError
        return await main()
