"""Tests of gradeloop.graph: the loop as a LangGraph graph."""
