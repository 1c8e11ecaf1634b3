"""Tests of gradeloop.judging: juries, pairwise comparison, model families."""
