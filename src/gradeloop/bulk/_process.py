"""Process-wide settings a batch changes for its length, and puts back after.

**The collector's full passes** (:func:`quiet_heap`). A process that has imported the
SDK (with pydantic and httpx) holds a few hundred thousand objects before it grades
anything. Every so often the collector walks all of them (a full, generation-2
pass); measured in ``agrade_many`` at 32 drafts in flight, one such pass stopped the
whole batch for 130-175 ms, a tenth of a 500-draft run, while the objects it walked
were the ones that existed before the batch began. So those objects are frozen
(:func:`gc.freeze`: the collector leaves them alone) for the length of a batch and
unfrozen after: nothing is kept alive longer than the batch, and the garbage the
batch makes is collected as usual. Nothing is frozen when the collector is disabled
or objects are already frozen (a pre-fork server's ``gc.freeze()``).

**The switch interval** (:func:`prompt_loop`). In a batch the event loop's thread is
the one a reply waits on, and the code checkers (and a sync judge) run in worker
threads beside it. A thread holding the interpreter lock keeps it until it blocks or
until another has waited for the switch interval (5 ms by default), so a reply that
arrives while a checker runs can wait that long to be read. The interval is 2 ms for
the length of a batch. Alternated on ``benchmarks/bench_scale.py`` (500 drafts, 32 in
flight, 100 ms a request): medians of 88.0-88.2 % of the ideal at 5 ms against
89.0-90.1 % at 2 ms, and no run under 85 % (two in every series at 5 ms); 1 ms was no
better (benchmarks/README.md, Run 7). Nothing changes when the interval is not the
default as a batch starts, and it is put back only if it is still the batch's.

Batches that overlap (threads, tasks) share one change, undone when the last ends.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["BATCH_INTERVAL", "prompt_loop", "quiet_heap"]

DEFAULT_INTERVAL = 0.005  # CPython's
BATCH_INTERVAL = 0.002


class _ForBatches:
    """A change made when the first of overlapping batches starts (``take`` says
    whether it made one) and undone (``give_back``) when the last ends."""

    def __init__(self, take: Callable[[], bool], give_back: Callable[[], None]) -> None:
        self._take = take
        self._give_back = give_back
        self._lock = threading.Lock()
        self._running = 0
        self._ours = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._running == 0:
                self._ours = self._take()
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0 and self._ours:
                    self._ours = False
                    self._give_back()


def _freeze() -> bool:
    if gc.isenabled() and gc.get_freeze_count() == 0:
        gc.freeze()
        return True
    return False


def _shorten() -> bool:
    if sys.getswitchinterval() == DEFAULT_INTERVAL:
        sys.setswitchinterval(BATCH_INTERVAL)
        return True
    return False


def _lengthen() -> None:
    if sys.getswitchinterval() == BATCH_INTERVAL:  # not changed by the caller meanwhile
        sys.setswitchinterval(DEFAULT_INTERVAL)


quiet_heap = _ForBatches(_freeze, gc.unfreeze)
"""Freeze the objects that exist now for the length of the ``with`` block."""

prompt_loop = _ForBatches(_shorten, _lengthen)
"""A 2 ms switch interval for the length of the ``with`` block."""
