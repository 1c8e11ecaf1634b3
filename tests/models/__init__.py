"""Tests of gradeloop.models: the provider seam, both judges and generators, replies,
usage, pacing."""
