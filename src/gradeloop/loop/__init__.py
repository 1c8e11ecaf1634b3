"""The evaluator-optimizer loop: ``optimize``, ``run_loop``, their result and the draft similarity.

Draft, judge on a fresh context, revise on the issues, stop on a pass, a cap,
stagnation, a budget or a judge failure, and return a judged draft with its own flag::

    from gradeloop.loop import LoopEvent, run_loop

``run_loop``, ``arun_loop``, ``optimize`` and ``LoopResult`` are also importable from
:mod:`gradeloop` itself.
"""

from ._result import Iteration, LoopResult
from ._run import Generator, LoopEvent, arun_loop, generator_task, optimize, run_loop
from ._select import Selection

__all__ = [
    "Generator",
    "Iteration",
    "LoopEvent",
    "LoopResult",
    "Selection",
    "arun_loop",
    "generator_task",
    "optimize",
    "run_loop",
]
