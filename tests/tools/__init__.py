"""Tests of gradeloop.tools: the function-calling tools and their ledger."""
