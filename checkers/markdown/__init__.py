"""Markdown scanning shared by the checkers: fenced code blocks, prose blocks and lines.

Three scanners today (fences for ``code_runs``, blocks for ``sentence_len``, lines for
the text and JSON checkers); the checkers call them, never the other way round.
"""
