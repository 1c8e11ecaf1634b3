"""The evaluator-optimizer loop: ``optimize``, ``run_loop``, their result and the draft similarity.

Draft, judge on a fresh context, revise on the issues, stop on a pass, a cap,
stagnation, a budget or a judge failure, and return a judged draft with its own flag.
"""
