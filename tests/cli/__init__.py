"""Tests of the gradeloop command line, command by command."""
