"""Tests of gradeloop_checkers, the built-in checkers (the top-level checkers/ folder)."""
