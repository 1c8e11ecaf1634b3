"""Tests of gradeloop.migration: compare, calibrate, regrade, align, propose."""
