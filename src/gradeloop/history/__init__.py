"""Loop history on disk: the SQLite store, its schema and migrations, secret scrubbing,
statistics, views, agreement records, and where gradeloop keeps its files (``GRADELOOP_HOME``).
"""
