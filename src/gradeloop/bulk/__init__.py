"""Grading many drafts at once: bounded concurrency, pacing on rate limits, progress.

``grade_many`` / ``agrade_many`` (``_many``) and the live progress display
(``_progress``). The public names are re-exported from ``gradeloop``.
"""
