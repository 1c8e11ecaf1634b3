"""Tests of gradeloop.testing: assert_graded, the pytest plugin, the scripted client."""
