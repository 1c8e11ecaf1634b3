"""Running a rubric's code keys: each key's checker looked up in the registry, the
checker called (gradeloop's own inline, any other watched under ``checker_timeout``),
and its answer turned into the key's result."""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..errors import GradeloopError
from ._checks import Answer, CheckerInfo
from ._context import CheckContext
from ._registry import Registry
from ._results import CriterionResult
from ._rubric import Criterion, Rubric
from ._watch import TimedOut, run_watched

#: A code key and its checker, or why it has none (the registry changed since the
#: rubric was loaded).
CodeKey = tuple[Criterion, "CheckerInfo | str"]


def look_up(rubric: Rubric, reg: Registry) -> tuple[CodeKey, ...]:
    """Each of ``rubric``'s code keys with its checker in ``reg``: looked up once per
    grade (once per batch by :func:`gradeloop.grade_many`), not once per key."""
    found: list[CodeKey] = []
    for c in rubric.code_criteria:
        assert c.checker is not None
        try:
            found.append((c, reg.info(c.checker)))
        except GradeloopError as exc:
            found.append((c, str(exc)))
    return tuple(found)


def check_keys(
    keys: tuple[CodeKey, ...],
    draft: str,
    context: CheckContext,
    check: Callable[..., Answer],
    timeout: float,
) -> dict[str, CriterionResult]:
    """Each code key's result on ``draft``: ``check`` (:func:`call_checker`, or its
    traced form) calls the checker.

    gradeloop's own checkers (bounded in time by their tests) run here; any other
    runs in a watched worker thread (:mod:`._watch`), where one still running after
    ``timeout`` seconds is an error and the rest run on."""
    results: dict[str, CriterionResult] = {}
    watched: list[tuple[Criterion, CheckerInfo]] = []
    for c, info in keys:
        if isinstance(info, str):
            results[c.key] = CriterionResult.failed(c, info, error=info)
        elif info.bounded:
            result = check(info, draft, c.options, context)
            results[c.key] = CriterionResult.from_check(c, info.name, result)
        else:
            watched.append((c, info))
    if watched:
        calls = [functools.partial(check, i, draft, c.options, context) for c, i in watched]
        done = run_watched(calls, timeout)
        for (c, info), answer in zip(watched, done, strict=True):
            if isinstance(answer, TimedOut):
                results[c.key] = _timed_out(c, info, answer)
            else:
                results[c.key] = CriterionResult.from_check(c, info.name, answer)
    return results


def _timed_out(c: Criterion, info: CheckerInfo, timed_out: TimedOut) -> CriterionResult:
    """The result of a key whose checker was given up on."""
    issue = (
        f"checker {info.name!r} (plugin {info.plugin!r}) was still running after "
        f"{timed_out.seconds:g} s; gave up on it (raise checker_timeout if it needs longer)"
    )
    return CriterionResult.failed(c, issue, filled_by=info.name, error=issue)


__all__ = ["CodeKey", "check_keys", "look_up"]
