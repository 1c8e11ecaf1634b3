"""Running a rubric's code keys: each checker looked up once per registry version,
gradeloop's own run inline, any other watched under ``checker_timeout``, and each
answer turned into the key's result."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..errors import GradeloopError
from ._checks import (
    CheckerFailure,
    CheckerInfo,
    CheckResult,
    call_checker,
    checker_raised,
    settled,
)
from ._context import CONTEXT_PARAM, CheckContext
from ._registry import Registry
from ._results import CriterionResult, _code_result
from ._rubric import Criterion, Rubric
from ._watch import TimedOut, run_watched

_PASSED = CheckResult.PASSED


# (criterion, its CheckerInfo or why it has none, its shared result or None); the
# second is Any so that the loop over every key of every draft needs no assert
_Entry = tuple[Criterion, Any, "CriterionResult | None"]


def _resolved(rubric: Rubric, reg: Registry) -> tuple[Registry, int, tuple[_Entry, ...]]:
    """Each code key's checker in ``reg`` (or why it has none), kept on the rubric
    with the registry and its version: :func:`check_keys` looks them up again only
    when the registry is another or has changed.

    An entry is ``(criterion, checker or why none, shared)``: ``shared`` is the key's
    result when met with nothing to say (:func:`_met_result`) for a key that
    :func:`check_keys` may settle itself - a checker of gradeloop's own, on a
    pass/fail key, not given ``context`` as an option - and None for any other."""
    version = reg.version  # read first: a change made while looking up is seen next time
    entries: list[_Entry] = []
    for c in rubric.code_criteria:
        assert c.checker is not None
        try:
            info = reg.info(c.checker)
        except GradeloopError as exc:  # the registry changed since the rubric loaded
            entries.append((c, str(exc), None))
            continue
        plain = info.bounded and CONTEXT_PARAM not in c.options and c.scale != "score"
        entries.append((c, info, _met_result(c, info.name, rubric._met) if plain else None))
    looked_up = (reg, version, tuple(entries))
    rubric._resolved = looked_up
    return looked_up


def check_keys(
    rubric: Rubric,
    reg: Registry,
    draft: str,
    context: CheckContext,
    check: Callable[..., CheckResult],
    timeout: float,
    results: dict[str, CriterionResult],
) -> dict[str, CriterionResult]:
    """Run ``rubric``'s code keys' checkers on ``draft`` into ``results`` (returned).

    This runs for every key of every draft, so the usual case is written out: a
    checker of gradeloop's own called as :func:`call_checker` calls it and met with
    nothing to say is answered with the key's shared result (:func:`_resolved`)."""
    kept = rubric._met
    inline = check is call_checker
    watched: list[tuple[Criterion, CheckerInfo]] = []
    looked_up = rubric._resolved
    if looked_up is None or looked_up[0] is not reg or looked_up[1] != reg.version:
        looked_up = _resolved(rubric, reg)
    for c, info, shared in looked_up[2]:
        if shared is not None and inline:  # then ``info`` is a CheckerInfo
            try:
                if info.wants_context:
                    raw = info.fn(draft, **c.options, context=context)
                else:
                    raw = info.fn(draft, **c.options)
            except Exception as exc:
                result = checker_raised(info, exc)
            else:
                if raw is _PASSED:  # gradeloop's own checkers' pass: nothing to look at
                    results[c.key] = shared
                    continue
                if type(raw) is CheckResult and type(raw.issues) is list and not raw.issues:
                    if raw.passed:  # its __init__ checked that passed is a bool
                        results[c.key] = shared
                        continue
                    result = raw
                else:
                    result = settled(info, raw)
            results[c.key] = _from_result(c, info, result, kept)
        elif isinstance(info, str):
            results[c.key] = CriterionResult(
                c.key, c.weight, 0.0, False, "code", c.checker or "", (info,), error=info
            )
        elif info.bounded:
            results[c.key] = _from_result(c, info, check(info, draft, c.options, context), kept)
        else:
            watched.append((c, info))
    if watched:
        calls = [
            functools.partial(_from_check, c, i, draft, context, check, kept) for c, i in watched
        ]
        done = run_watched(calls, timeout)
        for (c, info), result in zip(watched, done, strict=True):
            results[c.key] = _timed_out(c, info, result) if isinstance(result, TimedOut) else result
    return results


def _timed_out(c: Criterion, info: CheckerInfo, timed_out: TimedOut) -> CriterionResult:
    """The result of a key whose checker was given up on."""
    issue = (
        f"checker {info.name!r} (plugin {info.plugin!r}) was still running after "
        f"{timed_out.seconds:g} s; gave up on it (raise checker_timeout if it needs longer)"
    )
    return CriterionResult(c.key, c.weight, 0.0, False, "code", info.name, (issue,), error=issue)


def _from_check(
    c: Criterion,
    info: CheckerInfo,
    draft: str,
    context: CheckContext | None,
    check: Callable[..., CheckResult],
    kept: dict[str, Any],
) -> CriterionResult:
    return _from_result(c, info, check(info, draft, c.options, context), kept)


def _from_result(
    c: Criterion, info: CheckerInfo, result: CheckResult, kept: dict[str, Any]
) -> CriterionResult:
    """A code key's result from its checker's."""
    passed = result.passed
    if passed and not result.issues and (c.scale != "score" or result.score is None):
        return _met_result(c, info.name, kept)  # the usual case: one shared result
    if c.scale == "score":
        score = result.score if result.score is not None else (10.0 if passed else 0.0)
        met = passed and score >= c.pass_threshold
    else:
        score = 10.0 if passed else 0.0
        met = passed
    issues = tuple(result.issues)
    if not met and not issues:
        issues = (f"does not meet: {c.description}",)
    error = "; ".join(result.issues) if isinstance(result, CheckerFailure) else None
    return _code_result(c.key, c.weight, float(score), met, info.name, issues, error)


def _met_result(c: Criterion, filled_by: str, kept: dict[str, Any]) -> CriterionResult:
    """A code key met with nothing to say: one shared result for every such draft.

    It depends on the criterion and the checker's name alone, and a CriterionResult
    is frozen, so the rubric keeps the one it built (``kept``: per key; equal to a
    fresh one, field for field, which a test holds). Grading many drafts then builds
    results only for the keys with something to say."""
    met: CriterionResult | None = kept.get(c.key)
    if met is None or met.filled_by != filled_by:
        met = kept[c.key] = _code_result(c.key, c.weight, 10.0, True, filled_by, (), None)
    return met


__all__ = ["check_keys"]
