"""Letting the event loop take the interpreter lock back sooner while a batch runs.

In a batch the event loop's thread is the one a reply waits on, and the code
checkers (and a sync judge) run in worker threads beside it. A thread that holds the
interpreter lock keeps it until it blocks or until another thread has waited for the
*switch interval* (5 ms by default), so a reply that arrives while a checker runs
can wait that long before the loop reads it. :func:`prompt_loop` shortens the
interval to 2 ms for the length of a batch and puts 5 ms back after. Measured on
``benchmarks/bench_scale.py`` (500 drafts, 32 in flight, 100 ms a request),
alternated in the same minutes: 88.0-88.2 % of the ideal (median of 8-10 runs) at
5 ms against 89.0-90.1 % at 2 ms, and the slow runs (77-84 %) mostly gone; 1 ms was
no better than 2 (benchmarks/README.md, Run 7).

Like :func:`~gradeloop.bulk._heap.quiet_heap` it stays out of the way of a process
that manages the interval itself: nothing changes when the interval is not the
default when a batch starts, and it is only put back if it is still the batch's
value when the last overlapping batch ends.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BATCH_INTERVAL", "prompt_loop"]

DEFAULT_INTERVAL = 0.005  # CPython's
BATCH_INTERVAL = 0.002

_lock = threading.Lock()
_running = 0  # batches inside prompt_loop
_ours = False  # whether the interval in force is the one set here


@contextmanager
def prompt_loop() -> Iterator[None]:
    """A 2 ms switch interval for the length of the ``with`` block (see above)."""
    global _running, _ours
    with _lock:
        if _running == 0 and sys.getswitchinterval() == DEFAULT_INTERVAL:
            sys.setswitchinterval(BATCH_INTERVAL)
            _ours = True
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _ours:
                _ours = False
                if sys.getswitchinterval() == BATCH_INTERVAL:
                    sys.setswitchinterval(DEFAULT_INTERVAL)
