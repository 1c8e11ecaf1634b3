"""Tests of the project as a whole: its architecture, public surface, docs, examples and scripts."""
