"""Controls for a judge's own biases: pairwise comparison in both orders, juries
across model families, shuffled criteria orders, and the same-family warning.

The public names are re-exported from :mod:`gradeloop`; this package imports nothing
on its own, so the model tier can use its small pieces without a cycle.
"""
