"""Moving a criterion from the judge to code: compare, calibrate, agreement statistics,
per-key judge cost, and the JSONL readers for drafts and labels.
"""
