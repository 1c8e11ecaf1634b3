"""A batch with no judge to ask: graded in plain threads, each draft as grade() grades
it, with no event loop (one thread when every checker is gradeloop's own, which only
compute; ``concurrency`` threads when a plugin's checker may wait on I/O)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ..errors import GradeloopError
from ..grading._checks import CheckerInfo, call_checker, run_checker
from ..grading._context import CheckContext, make_context
from ..grading._files import DRAFT_WARN_CHARS, warn_if_large
from ..grading._grade import (
    Evaluation,
    GradePlan,
    check_keys,
    code_evaluation,
    finish_grade,
    run_checks,
)
from ..grading._registry import Registry, default_registry
from ..grading._rubric import Rubric
from ..grading._transcript import draft_parts
from ..integrations import telemetry
from ._items import Batch, reporter
from ._progress import ManyProgress, ProgressCallback

__all__ = ["grade_code_only"]


def grade_code_only(
    batch: Batch, concurrency: int, progress: bool | ProgressCallback
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
    # a text draft with no reference or metadata has the same context as every other
    # such draft of its task (frozen, its metadata read-only): one per task, shared
    plain: dict[str, CheckContext] = {}
    code_only, timeout = rubric._code_only, batch.checker_timeout

    def work() -> None:
        for index in pending:
            item = items[index]
            text, transcript = draft_parts(item.draft)  # a text draft is itself
            if len(text) > DRAFT_WARN_CHARS:
                warn_if_large(text)
            if transcript is None and item.reference is None and not item.metadata:
                context = plain.get(item.task) or plain.setdefault(
                    item.task, make_context(item.task)
                )
            else:
                context = make_context(item.task, item.reference, item.metadata, transcript)
            if code_only:  # as grade() grades it: the checks, then their evaluation
                found = check_keys(rubric, reg, text, context, check, timeout, {})
                evaluation = code_evaluation(rubric, found, item.output_id)
            else:  # judge keys left unchecked (skip_judge), or shadows: the whole road
                plan = GradePlan(rubric, reg, text, item.task, context, {}, (), timeout, transcript)
                evaluation = finish_grade(run_checks(plan, check), None, output_id=item.output_id)
            results[index] = evaluation
            if report is not None:
                with lock:
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
