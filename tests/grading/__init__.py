"""Tests of gradeloop.grading: rubrics, checks, the registry, verdicts, grade() and its one road."""
