"""Tests of gradeloop.history: the store, the verdict cache, paths, scrubbing, the report
and the viewer, labelling."""
