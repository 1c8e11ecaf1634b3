"""Keeping the garbage collector's full passes short while a batch runs.

A process that has imported the SDK (with pydantic and httpx) holds a few hundred
thousand objects before it grades anything. Every so often the collector walks all
of them (a full, generation-2 pass); measured in ``agrade_many`` at 32 drafts in
flight, one such pass stopped the whole batch for 130-175 ms, a tenth of a
500-draft run, while the objects it walked were the ones that existed before the
batch began. :func:`quiet_heap` freezes those objects (:func:`gc.freeze`: the
collector leaves them alone) for the length of a batch and unfreezes them after,
so nothing is kept alive for longer than the batch and garbage the batch makes is
collected as usual.

It stays out of the way of a process that manages the collector itself: nothing is
frozen when the collector is disabled or objects are already frozen (a pre-fork
server's ``gc.freeze()``), and only the freeze made here is undone. Batches that
overlap (threads, tasks) share one freeze, undone when the last of them ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["quiet_heap"]

_lock = threading.Lock()
_running = 0  # batches inside quiet_heap
_froze = False  # whether the freeze in force is ours


@contextmanager
def quiet_heap() -> Iterator[None]:
    """Freeze the objects that exist now for the length of the ``with`` block."""
    global _running, _froze
    with _lock:
        if _running == 0 and gc.isenabled() and gc.get_freeze_count() == 0:
            gc.freeze()
            _froze = True
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _froze:
                _froze = False
                gc.unfreeze()
