"""grade(): run the checkers, ask the judge about the rest, merge into one verdict.

The plan a grade follows and the judge's part are here; running the code keys is in
:mod:`._code_keys`, merging results in :mod:`._merge`, the result types in
:mod:`._results`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import JudgeError, JudgeRequiredError
from ..integrations import telemetry
from ._calls import judge_calls
from ._checks import Answer, call_checker, run_checker
from ._code_keys import CodeKey, check_keys, look_up
from ._context import CheckContext, make_context
from ._files import warn_if_large
from ._judged import Judge, call_judge, from_judge, judge_answer
from ._merge import merge, overall
from ._registry import Registry, default_registry
from ._results import CriterionResult, Evaluation
from ._rubric import DEFAULT_CHECKER_TIMEOUT, Criterion, Rubric, checker_timeout_problem
from ._shadow import (
    ShadowResult,
    ShadowSide,
    ShadowStatus,
    issues_about,
    judge_copy,
    judge_request,
    run_shadow_checker,
    split_verdict,
)
from ._transcript import Draft, Transcript, draft_parts
from ._verdict import Verdict
from ._watch import TimedOut, run_watched


def grade(
    draft: Draft,
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str = "",
    judge: Judge | None = None,
    skip_judge: bool = False,
    registry: Registry | None = None,
    reference: Draft | None = None,
    metadata: Mapping[str, Any] | None = None,
    checker_timeout: float | None = None,
) -> Evaluation:
    """Grade ``draft`` against ``rubric``.

    ``draft`` is text, or an agent's transcript (a :class:`~gradeloop.Transcript` or
    a list of OpenAI / Anthropic message dicts): text checkers then read its final
    assistant text, the trajectory checkers its tool calls, and the judge the whole
    transcript rendered (docs/agents.md).

    ``reference`` (a reference answer, text or a transcript) and ``metadata`` (any
    JSON-like mapping) reach, with ``task``, the checkers that declare a ``context``
    parameter, as a :class:`~gradeloop.grading.CheckContext`; other checkers never see them.

    Code-filled keys run their checkers first; the judge is asked once, about the
    remaining keys only, and only if there are any. ``skip_judge=True`` grades the
    code keys alone and marks the judge keys *not checked* (never met).

    Shadowed keys (``shadow = ...`` in the rubric) also run their shadow source;
    what it said is in ``Evaluation.shadows`` and never changes the verdict. A
    code key shadowed by the judge joins the same single judge request.

    ``checker_timeout`` (seconds; the rubric's ``checker_timeout`` when None, 30 by
    default, 0 for no limit): a checker still running after it is a failed key with
    status ``error``, its issue naming the checker and its plugin, and grading goes
    on (the stuck call is left to finish in a background thread; docs/plugins.md).

    Raises :class:`~gradeloop.errors.JudgeRequiredError` when judge keys exist and
    no judge was given, and :class:`~gradeloop.errors.JudgeError` when the judge
    fails; a judge failure is never turned into a pass.
    """
    tracer = telemetry.active_tracer()  # looked up once: the grade's and the checks' spans
    args = (draft, rubric, task, judge, skip_judge, registry, reference, metadata)
    if tracer is None:
        return _graded(*args, checker_timeout, call_checker)
    result: Evaluation = telemetry.grade_span(
        tracer, functools.partial(_graded, *args, checker_timeout, run_checker)
    )
    return result


def _graded(
    draft: Draft,
    rubric: Rubric | Mapping[str, Any],
    task: str,
    judge: Judge | None,
    skip_judge: bool,
    registry: Registry | None,
    reference: Draft | None,
    metadata: Mapping[str, Any] | None,
    checker_timeout: float | None,
    check: Callable[..., Answer],
) -> Evaluation:
    """:func:`grade`'s work, inside its span when spans are recorded."""
    plan = start_plan(
        draft,
        rubric,
        task=task,
        judge=judge,
        skip_judge=skip_judge,
        registry=registry,
        reference=reference,
        metadata=metadata,
        checker_timeout=checker_timeout,
    )
    # the code keys first; then the judge, about the rest
    run_checks(plan, check)
    if not plan.asked:
        return finish_grade(plan, None)
    with judge_calls() as calls:
        answer = _ask_judge(judge, task, plan.judge_draft, plan.asked, plan.rubric)
    return finish_grade(plan, answer, tuple(calls))


@dataclass
class GradePlan:
    """A grade half done: the code keys' results, and what the judge is to be asked.

    :func:`grade` and :func:`gradeloop.agrade` share it, so both grade the same way
    and differ only in how they wait for the judge.
    """

    rubric: Rubric
    registry: Registry
    draft: str
    task: str
    context: CheckContext
    results: dict[str, CriterionResult]
    asked: tuple[Criterion, ...]
    checker_timeout: float = DEFAULT_CHECKER_TIMEOUT
    transcript: Transcript | None = None  # the draft, when it is an agent's transcript
    code_keys: tuple[CodeKey, ...] = ()  # each code key with its checker, looked up

    @property
    def judge_draft(self) -> str:
        """What the judge is shown: ``draft``, or the whole transcript rendered."""
        return self.draft if self.transcript is None else self.transcript.render()


def start_plan(
    draft: Draft,
    rubric: Rubric | Mapping[str, Any],
    *,
    task: str,
    judge: object,
    skip_judge: bool,
    registry: Registry | None,
    reference: Draft | None = None,
    metadata: Mapping[str, Any] | None = None,
    checker_timeout: float | None = None,
) -> GradePlan:
    """Check the arguments and settle what the judge is asked; no checker runs yet
    (:func:`run_checks` runs them). What the judge is asked depends on the rubric
    alone, so an async grader can send the request while the checkers run."""
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    checker_timeout = _timeout(rubric, checker_timeout)
    reg = registry or default_registry()
    judge_criteria = rubric.judge_criteria
    if judge_criteria and judge is None and not skip_judge:
        raise JudgeRequiredError([c.key for c in judge_criteria])
    text, transcript = draft_parts(draft)  # a text draft is itself: nothing is read
    warn_if_large(text)
    context = make_context(task, reference, metadata, transcript)
    asked = judge_request(rubric) if judge is not None and not skip_judge else ()
    return GradePlan(
        rubric=rubric,
        registry=reg,
        draft=text,
        task=task,
        context=context,
        results={},
        asked=tuple(asked),
        checker_timeout=float(checker_timeout),
        transcript=transcript,
        code_keys=look_up(rubric, reg),
    )


def _timeout(rubric: Rubric, checker_timeout: float | None) -> float:
    """The checker time limit: the one given (checked), else the rubric's."""
    if checker_timeout is None:
        return rubric.checker_timeout
    problem = checker_timeout_problem(checker_timeout)
    if problem is not None:
        raise ValueError(problem)
    return float(checker_timeout)


def run_checks(plan: GradePlan, check: Callable[..., Answer] | None = None) -> GradePlan:
    """Run the code-filled keys' checkers into ``plan.results``; ``plan`` back.

    ``check`` calls one checker (by default with a span when spans are recorded);
    see :func:`~gradeloop.grading._code_keys.check_keys`."""
    if check is None:
        check = run_checker if telemetry.tracing() else call_checker
    plan.results.update(
        check_keys(plan.code_keys, plan.draft, plan.context, check, plan.checker_timeout)
    )
    return plan


def finish_grade(
    plan: GradePlan,
    answer: _JudgeAnswer | None,
    calls: tuple[Any, ...] = (),
    *,
    output_id: str = "",
) -> Evaluation:
    """Merge the judge's answer (None when it was not asked) into the Evaluation."""
    rubric = plan.rubric
    results = plan.results
    own = answer.own if answer is not None else None
    if rubric.judge_criteria:
        results = dict(results)  # the plan keeps the code keys' results as they were
        for c in rubric.judge_criteria:
            if not plan.asked:
                results[c.key] = CriterionResult.not_checked(c)
            elif own is not None:
                results[c.key] = from_judge(c, own)
    shadows: tuple[ShadowResult, ...] = ()
    if rubric.shadowed:
        shadows = _shadow_results(rubric, plan, results, answer or _JudgeAnswer())
    verdict = own if rubric.judge_criteria else None
    return merge(
        rubric,
        results,
        verdict,
        shadows=shadows,
        judge_called=verdict is not None or bool(plan.asked),
        judge_calls=calls,
        output_id=output_id,
    )


def failed_evaluation(plan: GradePlan, error: str, calls: tuple[Any, ...] = ()) -> Evaluation:
    """The evaluation of a draft whose judge failed: code keys as graded, judge keys
    not met (their issue names the failure), never accepted."""
    results = dict(plan.results)
    for c in plan.rubric.judge_criteria:
        results[c.key] = CriterionResult.failed(c, "the judge gave no verdict")
    verdict = Verdict(
        reasoning=f"The judge failed: {error}",
        criteria_met={},
        passed=False,
        issues=[f"the judge failed: {error}"],
    )
    evaluation = merge(plan.rubric, results, verdict)
    return replace(evaluation, judge_error=error, judge_calls=calls, judge_called=True)


@dataclass(frozen=True)
class _JudgeAnswer:
    """The judge's whole verdict, its verdict on its own keys, and shadow-key issues."""

    full: Verdict | None = None
    own: Verdict | None = None
    shadow_issues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None


def _ask_judge(
    judge: Judge | None, task: str, draft: str, asked: Sequence[Criterion], rubric: Rubric
) -> _JudgeAnswer:
    """One judge call for its own keys and its shadow keys together."""
    assert judge is not None
    try:
        # a shadow key left out loses only the shadow, never the keys that decide
        full = call_judge(judge, task, draft, asked, optional=rubric.judge_shadow_keys)
    except JudgeError as exc:
        if rubric.judge_criteria:
            raise  # the judge decides keys: its failure is the grade's failure
        return _JudgeAnswer(error=f"{exc.reason}: {exc}")  # only shadows were lost
    own, shadow_issues = split_verdict(full, rubric.judge_keys, rubric.judge_shadow_keys)
    return _JudgeAnswer(full, own, shadow_issues)


def _shadow_results(
    rubric: Rubric,
    plan: GradePlan,
    results: Mapping[str, CriterionResult],
    answer: _JudgeAnswer,
) -> tuple[ShadowResult, ...]:
    ran_judge = bool(plan.asked)
    out = []
    for c in rubric.shadowed:
        primary = results[c.key]
        issues = primary.issues
        if primary.source == "judge" and answer.full is not None:
            issues = issues_about(answer.full.issues, c.key) + issues
        first = ShadowSide(
            primary.source,
            primary.filled_by,
            primary.passed if primary.checked else None,
            primary.score,
            issues,
            primary.agreement,
        )
        reasoning = answer.full.reasoning if answer.full is not None else None
        if c.shadow_source == "judge":
            side, error = _judge_side(c, answer, ran_judge)
        else:
            checked = _watched_shadow(c, plan)
            side, error = (checked, None) if isinstance(checked, ShadowSide) else (None, checked)
            if primary.source == "code":
                reasoning = None  # the judge was not on either side of this key
        if side is None:
            status: ShadowStatus = "skipped" if not ran_judge and error is None else "failed"
            side = ShadowSide(
                "judge" if c.shadow_source == "judge" else "code", c.shadow or "", None
            )
            error = error or "no judge was run (none given, or code-only grading)"
        elif not primary.checked:
            status, error = "skipped", "the primary source (the judge) was not run"
        else:
            status = "ok"
        out.append(ShadowResult(c.key, c.scale, first, side, status, error, reasoning))
    return tuple(out)


def _watched_shadow(c: Criterion, plan: GradePlan) -> ShadowSide | str:
    """A code shadow's answer (or why it has none), under the checker time limit."""
    call = functools.partial(run_shadow_checker, c, plan.registry, plan.draft, plan.context)
    [answer] = run_watched([call], plan.checker_timeout)
    if isinstance(answer, TimedOut):
        return f"shadow checker {c.shadow!r} was still running after {answer.seconds:g} s"
    result: ShadowSide | str = answer
    return result


def _judge_side(
    c: Criterion, answer: _JudgeAnswer, ran_judge: bool
) -> tuple[ShadowSide | None, str | None]:
    if not ran_judge:
        return None, None
    if answer.full is None:
        return None, answer.error
    gave = answer.full.scores if c.scale == "score" else answer.full.criteria_met
    if c.key not in gave:
        return None, f"the judge gave no verdict on {c.key!r}"
    r = from_judge(judge_copy(c), answer.full)
    issues = tuple(answer.shadow_issues.get(c.key, ())) + r.issues
    return ShadowSide("judge", "judge", r.passed, r.score, issues, r.agreement), None


__all__ = [
    "CriterionResult",
    "Evaluation",
    "GradePlan",
    "Judge",
    "call_judge",
    "check_keys",
    "failed_evaluation",
    "finish_grade",
    "grade",
    "judge_answer",
    "merge",
    "overall",
    "run_checks",
    "start_plan",
]
