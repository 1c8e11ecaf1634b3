"""Tests of gradeloop.errors: the exception tree and the scrubber of secrets."""
