"""Running a draft's checkers under a time limit, so one that never returns is a failed
key and grading goes on.

A Python thread cannot be stopped from outside, so a checker that is to be given up on
must not run in the thread that grades: the calling thread hands the draft's checks to
a *runner* (a worker thread), one hand-over per draft, and waits for them. If one
check is still running ``timeout`` seconds after it started, the caller stops waiting:
that key is an error, the runner is abandoned (its thread finishes the stuck call
whenever it ends, then exits, its result unused), and the checks after it go to
another runner. Idle runners are kept for the next draft (a few; each exits after a
minute unused), so the hand-over costs two lock releases, not a thread start.

What cannot be timed out: a checker stuck inside C code that holds the interpreter
lock (a catastrophic regular expression in ``re``, say) stops every thread, this one
included. ``timeout`` 0 runs the checks in the calling thread, with no limit.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["TimedOut", "run_watched"]

_IDLE_EXIT = 60.0  # seconds an idle runner waits for work before its thread exits
_KEEP = 8  # idle runners kept for reuse
_EXIT: Final = object()  # the job that tells an idle runner to exit


class TimedOut:
    """Stands for the result of a check still running at its time limit."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class _Raised:
    """A call that raised (past the checker's own guard: SystemExit, say)."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class _Runner:
    """One worker thread that runs a list of calls in order, one job at a time."""

    def __init__(self) -> None:
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._state = threading.Lock()  # guards the fields below against the caller
        self.job: Sequence[Callable[[], Any]] | object = ()
        self.context = contextvars.Context()  # the caller's, for spans and meters
        self.results: list[Any] = []
        self.current = 0  # index of the call running (== len(results) while running)
        self.started = 0.0
        self.abandoned = False
        threading.Thread(target=self._serve, name="gradeloop-checks", daemon=True).start()

    def _serve(self) -> None:
        while True:
            if not self._go.acquire(timeout=_IDLE_EXIT):
                if _retire(self):
                    return
                continue  # taken by a caller meanwhile: its job is on the way
            job = self.job
            if job is _EXIT:
                return
            assert isinstance(job, Sequence)
            for call in job:
                try:
                    result = self.context.run(call)
                except BaseException as exc:
                    result = _Raised(exc)
                with self._state:
                    if self.abandoned:  # the caller gave up on this call: leave
                        return
                    self.results.append(result)
                    self.current += 1
                    self.started = time.monotonic()
            self._done.release()

    def start(self, job: Sequence[Callable[[], Any]]) -> None:
        self.job, self.results, self.current = job, [], 0
        self.context = contextvars.copy_context()
        self.started = time.monotonic()
        self._go.release()

    def wait(self, timeout: float) -> int | None:
        """None when the job finished; else the index of the call that ran past
        ``timeout`` (the runner is then abandoned)."""
        while True:
            with self._state:
                index, started = self.current, self.started
            if self._done.acquire(timeout=max(0.0, started + timeout - time.monotonic())):
                return None
            with self._state:
                if self.current == index and time.monotonic() - self.started >= timeout:
                    self.abandoned = True
                    return index


_idle: list[_Runner] = []
_idle_lock = threading.Lock()


def _take() -> _Runner:
    with _idle_lock:
        if _idle:
            return _idle.pop()
    return _Runner()


def _give_back(runner: _Runner) -> None:
    with _idle_lock:
        if len(_idle) < _KEEP:
            _idle.append(runner)
            return
    runner.job = _EXIT
    runner._go.release()


def _retire(runner: _Runner) -> bool:
    """Whether an idle runner may exit now (it is not being handed a job)."""
    with _idle_lock:
        if runner in _idle:
            _idle.remove(runner)
            return True
    return False


def run_watched(calls: Sequence[Callable[[], Any]], timeout: float) -> list[Any]:
    """Each of ``calls``'s results, in order; a :class:`TimedOut` for a call still
    running ``timeout`` seconds after it started (the ones after it still run).
    ``timeout`` 0: called in this thread, no limit."""
    if timeout == 0 or not calls:
        return [call() for call in calls]
    out: list[Any] = []
    pending = list(calls)
    while pending:
        runner = _take()
        runner.start(pending)
        stuck = runner.wait(timeout)
        if stuck is None:
            out.extend(runner.results)
            _give_back(runner)
            break
        out.extend(runner.results[:stuck])
        out.append(TimedOut(timeout))
        pending = pending[stuck + 1 :]
    for result in out:
        if isinstance(result, _Raised):
            raise result.exc
    return out
