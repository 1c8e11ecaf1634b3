"""The grading core: rubrics, the checker registry, checks, verdicts, grading and shadows.

Everything here is deterministic and needs no model: a rubric is loaded and validated,
its code keys run through registered checkers, the judge (when one is given) fills the
rest, and the results merge into one ``Evaluation`` that the ``accepted()`` gate reads.
"""
