"""Tests of gradeloop.loop: run_loop / arun_loop, their invariants and settings, draft selection."""
