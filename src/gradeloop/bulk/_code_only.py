"""A batch with no judge to ask: graded in plain threads, each draft on grade()'s own
road (the same plan, checks and merge), with no event loop (one thread when every
checker is gradeloop's own, which only compute; ``concurrency`` threads when a
plugin's checker may wait on I/O)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ..errors import GradeloopError
from ..grading._checks import CheckerInfo, call_checker, run_checker
from ..grading._grade import Evaluation, finish_grade, run_checks, start_plan
from ..grading._registry import Registry, default_registry
from ..grading._rubric import Rubric
from ..integrations import telemetry
from ._items import Batch, reporter
from ._progress import ManyProgress, ProgressCallback, ResultCallback

__all__ = ["grade_code_only"]


def grade_code_only(
    batch: Batch,
    concurrency: int,
    progress: bool | ProgressCallback,
    on_result: ResultCallback | None = None,
) -> list[Evaluation]:
    """A batch with no judge to ask: ``concurrency`` threads (this one alone for one)
    pull drafts in order and grade each as grade() does; no event loop."""
    items, rubric = batch.items, batch.rubric
    reg = batch.registry or default_registry()
    check = run_checker if telemetry.tracing() else call_checker
    state = ManyProgress(total=len(items))
    results: list[Evaluation | None] = [None] * len(items)
    bar, report = reporter(progress, len(items))
    pending = iter(range(len(items)))
    lock = threading.Lock()

    def work() -> None:
        for index in pending:
            item = items[index]
            plan = start_plan(
                item.draft,
                rubric,
                task=item.task,
                judge=batch.judge,  # asked nothing: why the batch is here
                skip_judge=batch.skip_judge,
                registry=reg,
                reference=item.reference,
                metadata=item.metadata,
                checker_timeout=batch.checker_timeout,
            )
            evaluation = finish_grade(run_checks(plan, check), None, output_id=item.output_id)
            results[index] = evaluation
            if report is not None or on_result is not None:
                with lock:  # one call at a time, whichever thread graded the draft
                    if on_result is not None:
                        on_result(index, evaluation)
                    if report is not None:
                        state.add(evaluation)
                        report(state)

    # gradeloop's own checkers only compute (threads would only take turns with the
    # interpreter lock): one thread; another's checker may wait on I/O: concurrency
    workers = min(concurrency, len(items)) if _any_unbounded(rubric, reg) else 1
    with bar if bar is not None else contextlib.nullcontext():
        if workers <= 1:
            work()
        else:
            with ThreadPoolExecutor(workers, thread_name_prefix="gradeloop-batch") as pool:
                for done in [
                    pool.submit(contextvars.copy_context().run, work) for _ in range(workers)
                ]:
                    done.result()
    return [r for r in results if r is not None]


def _any_unbounded(rubric: Rubric, reg: Registry) -> bool:
    """Whether any checker the rubric names (shadows too) is not gradeloop's own."""
    return _any_checker(rubric, reg, lambda info: not info.bounded)


def _any_checker(rubric: Rubric, reg: Registry, test: Callable[[CheckerInfo], bool]) -> bool:
    """Whether ``test`` holds for a checker the rubric names (True for one that is
    not registered now: it is reported when it runs, and nothing is assumed of it)."""
    names = {c.checker for c in rubric.code_criteria}
    names |= {c.shadow for c in rubric.shadowed if c.shadow_source == "code"}
    for name in names:
        try:
            if name is None or test(reg.info(name)):
                return True
        except GradeloopError:
            return True
    return False
