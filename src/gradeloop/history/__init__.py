"""Loop history on disk: the SQLite store, its schema and migrations, secret scrubbing,
statistics, views, agreement records, the verdict cache, and where gradeloop keeps its
files (``GRADELOOP_HOME``)::

    from gradeloop.history import HistoryStore, JudgeCache, get_optimization_history

``HistoryStore``, ``JudgeCache`` and ``get_optimization_history`` are also importable
from :mod:`gradeloop` itself. :mod:`gradeloop.history.report` reads the same database
(read-only) into one self-contained HTML file or a local viewer:
``from gradeloop.history.report import write_report``.
"""

from ._cache import CacheStats, JudgeCache
from ._store import HistoryStore, LoopSummary, get_optimization_history

__all__ = [
    "CacheStats",
    "HistoryStore",
    "JudgeCache",
    "LoopSummary",
    "get_optimization_history",
]
