"""Tests of gradeloop.bulk: grade_many / agrade_many and Message Batches."""
