"""grade(): run the checkers, ask the judge about the rest, merge into one verdict."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from .. import telemetry
from ..errors import GradeloopError, JudgeError, JudgeRequiredError
from ._calls import judge_calls
from ._checks import (
    CheckerFailure,
    CheckerInfo,
    CheckResult,
    call_checker,
    checker_raised,
    run_checker,
    settled,
)
from ._context import CONTEXT_PARAM, CheckContext, make_context
from ._files import DRAFT_WARN_CHARS, warn_if_large
from ._registry import Registry, default_registry
from ._rubric import DEFAULT_CHECKER_TIMEOUT, Criterion, Rubric, checker_timeout_problem
from ._samples import SampledVerdict
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
from ._strict import WireError, strict_verdict
from ._transcript import Draft, Transcript, draft_parts
from ._verdict import Verdict, accepted, built_verdict
from ._watch import TimedOut, run_watched

Source = Literal["code", "judge"]
_PASSED = CheckResult.PASSED
Status = Literal["met", "failed", "not_checked", "error"]


@runtime_checkable
class Judge(Protocol):
    """Anything that can judge a draft against criteria."""

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict: ...


@dataclass(frozen=True)
class CriterionResult:
    """How one criterion came out for one draft.

    ``score`` is on 0-10 (pass/fail criteria score 10 or 0); ``passed`` is whether
    the key is met; ``checked`` is False only for judge keys skipped in code-only
    grading, which are never met. ``error`` says why no answer could be had (a
    checker that raised, a judge that left the key out); such a key is not met.
    """

    key: str
    weight: float
    score: float
    passed: bool
    source: Source
    filled_by: str
    issues: tuple[str, ...] = ()
    feedback: str | None = None
    checked: bool = True
    agreement: float | None = None
    samples: tuple[bool | float, ...] = ()
    error: str | None = None
    judging: Mapping[str, Any] | None = None  # how the key was judged: a jury's votes, orders

    @property
    def name(self) -> str:
        """The criterion's key (the evaluation JSON calls it ``name``)."""
        return self.key

    @property
    def status(self) -> Status:
        """``"met"``, ``"failed"``, ``"not_checked"`` (skipped) or ``"error"``."""
        if not self.checked:
            return "not_checked"
        if self.error is not None:
            return "error"
        return "met" if self.passed else "failed"

    def to_json(self) -> dict[str, Any]:
        """The evaluation JSON's fields (``name``, ``weight``, ``score``, ``passed``, ``feedback``)
        plus ``filled_by``, ``status`` and ``issues`` (a list)."""
        out: dict[str, Any] = {
            "name": self.key,
            "weight": self.weight,
            "score": _round(self.score),
            "passed": self.passed,
            "filled_by": self.filled_by,
            "status": self.status,
            "issues": list(self.issues),
        }
        if self.feedback:
            out["feedback"] = self.feedback
        if self.agreement is not None:
            out["agreement"] = round(self.agreement, 4)
            out["samples"] = list(self.samples)
        if self.judging:
            out["judging"] = dict(self.judging)
        return out


@dataclass(frozen=True)
class Evaluation:
    """The merged result of grading one draft against a rubric.

    ``verdict`` holds every rubric key in ``criteria_met``; ``accepted`` is
    :func:`gradeloop.accepted` over it; ``overall_score`` is the weighted mean of
    the per-criterion scores, on 0-10, or None when keys were not checked
    (``skip_judge=True``): a score they would count 0 in is no real figure.
    ``shadows`` holds what each shadowed key's shadow source said (recorded only: it
    never changes the verdict).

    ``judge_calls`` holds the record of every judge request behind the verdict
    (:class:`~gradeloop.CallRecord`, cached ones included); ``judge_error`` is set on
    the failed evaluation :func:`gradeloop.grade_many` gives for a draft whose judge
    failed (its judge keys are then not met).
    """

    verdict: Verdict
    accepted: bool
    criteria: tuple[CriterionResult, ...]
    overall_score: float | None
    output_id: str = ""
    improvement_from_previous: float | None = None
    judge_called: bool = False
    shadows: tuple[ShadowResult, ...] = ()
    judge_calls: tuple[Any, ...] = ()
    judge_error: str | None = None

    @property
    def judge_cached(self) -> bool:
        """True when the verdict came from the verdict cache: no request was sent."""
        return bool(self.judge_calls) and all(getattr(c, "cached", False) for c in self.judge_calls)

    @property
    def judge_usage(self) -> Any:
        """The judge's token usage (and ``cost_usd``) behind this evaluation; None if
        no judge call was seen (no judge, or a judge that reports no calls)."""
        usages = [c.usage for c in self.judge_calls if getattr(c, "usage", None) is not None]
        return functools.reduce(operator.add, usages) if usages else None

    @property
    def disagreements(self) -> tuple[ShadowResult, ...]:
        """The shadowed keys whose shadow reached the other answer."""
        return tuple(s for s in self.shadows if s.agree is False)

    @property
    def failed_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria if not c.passed)

    @property
    def not_checked(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.criteria if not c.checked)

    @property
    def issues(self) -> list[str]:
        return list(self.verdict.issues)

    def __getitem__(self, key: str) -> CriterionResult:
        for c in self.criteria:
            if c.key == key:
                return c
        raise KeyError(key)

    def with_ids(
        self, output_id: str, improvement_from_previous: float | None = None
    ) -> Evaluation:
        shadows = tuple(replace(s, output_id=output_id) for s in self.shadows)
        return replace(
            self,
            output_id=output_id,
            improvement_from_previous=improvement_from_previous,
            shadows=shadows,
        )

    def to_json(self) -> dict[str, Any]:
        """The evaluation JSON, as a JSON-ready dict.

        With keys not checked (code-only grading) there is no overall score to give:
        ``overall_score`` is null and ``not_checked`` lists those keys.
        """
        out: dict[str, Any] = {
            "output_id": self.output_id,
            "criteria": [c.to_json() for c in self.criteria],
            "overall_score": None if self.overall_score is None else _round(self.overall_score),
            "passed": self.accepted,
        }
        if self.not_checked:
            out["not_checked"] = list(self.not_checked)
        if self.improvement_from_previous is not None:
            out["improvement_from_previous"] = _round(self.improvement_from_previous)
        if self.shadows:
            out["shadows"] = [s.to_json() for s in self.shadows]
        if self.judge_error is not None:
            out["judge_error"] = self.judge_error
        if self.judge_calls:
            usage = self.judge_usage
            out["judge"] = {
                "calls": sum(1 for c in self.judge_calls if not getattr(c, "cached", False)),
                "cached": sum(1 for c in self.judge_calls if getattr(c, "cached", False)),
                "cost_usd": None if usage is None else usage.to_dict()["cost_usd"],
            }
        return out


def _round(x: float) -> float | None:
    """Rounded for JSON; None for a number JSON cannot hold (NaN, infinity)."""
    return round(x, 2) if math.isfinite(x) else None


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
    parameter, as a :class:`~gradeloop.CheckContext`; other checkers never see them.

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
    if tracer is None:
        return _graded(
            draft, rubric, task, judge, skip_judge, registry, reference, metadata,
            checker_timeout, call_checker,
        )  # fmt: skip
    args = (draft, rubric, task, judge, skip_judge, registry, reference, metadata)
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
    check: Callable[..., CheckResult],
) -> Evaluation:
    """:func:`grade`'s work, inside its span when spans are recorded."""
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    if rubric._code_only:  # code keys alone (and no shadows): no judge to ask
        timeout = (
            rubric.checker_timeout if checker_timeout is None else _timeout(rubric, checker_timeout)
        )
        transcript: Transcript | None
        if type(draft) is Transcript:  # read already: nothing is read again
            text, transcript = draft._final, draft
        else:  # a text draft is itself; a list of messages is read here
            text, transcript = draft_parts(draft)
        if len(text) > DRAFT_WARN_CHARS:
            warn_if_large(text)
        context = make_context(task, reference, metadata, transcript)
        reg = registry or default_registry()
        results = check_keys(rubric, reg, text, context, check, timeout, {})
        return code_evaluation(rubric, results)
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
        rubric, reg, text, task, context, {}, tuple(asked), float(checker_timeout), transcript
    )


def _timeout(rubric: Rubric, checker_timeout: float | None) -> float:
    """The checker time limit: the one given (checked), else the rubric's."""
    if checker_timeout is None:
        return rubric.checker_timeout
    problem = checker_timeout_problem(checker_timeout)
    if problem is not None:
        raise ValueError(problem)
    return float(checker_timeout)


def run_checks(plan: GradePlan, check: Callable[..., CheckResult] | None = None) -> GradePlan:
    """Run the code-filled keys' checkers into ``plan.results``; ``plan`` back.

    gradeloop's own checkers (bounded in time by their tests) run here; any other
    runs in a watched worker thread (:mod:`._watch`), where one still running after
    ``plan.checker_timeout`` is an error and the rest run on. ``check`` calls one
    checker (by default with a span when spans are recorded)."""
    if plan.rubric.code_criteria:
        if check is None:
            check = run_checker if telemetry.tracing() else call_checker
        check_keys(
            plan.rubric,
            plan.registry,
            plan.draft,
            plan.context,
            check,
            plan.checker_timeout,
            plan.results,
        )
    return plan


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


def finish_grade(
    plan: GradePlan,
    answer: _JudgeAnswer | None,
    calls: tuple[Any, ...] = (),
    *,
    output_id: str = "",
) -> Evaluation:
    """Merge the judge's answer (None when it was not asked) into the Evaluation."""
    rubric, judge_criteria = plan.rubric, plan.rubric.judge_criteria
    if not judge_criteria and not rubric.shadowed:
        return code_evaluation(rubric, plan.results, output_id, calls)
    results = dict(plan.results) if judge_criteria else plan.results
    answer = answer or _NO_ANSWER
    if plan.asked:
        if answer.own is not None:
            for c in judge_criteria:
                results[c.key] = _from_judge(c, answer.own)
    elif judge_criteria:
        for c in judge_criteria:
            results[c.key] = CriterionResult(
                key=c.key,
                weight=c.weight,
                score=0.0,
                passed=False,
                source="judge",
                filled_by="judge",
                issues=("not checked: filled by the judge",),
                checked=False,
            )
    ran = bool(plan.asked)
    shadows = (
        _shadow_results(rubric, plan, results, answer, ran_judge=ran) if rubric.shadowed else ()
    )
    verdict = answer.own if judge_criteria else None
    return merge(
        rubric,
        results,
        verdict,
        shadows=shadows,
        judge_called=verdict is not None or ran,
        judge_calls=calls,
        output_id=output_id,
    )


def code_evaluation(
    rubric: Rubric,
    results: Mapping[str, CriterionResult],
    output_id: str = "",
    calls: tuple[Any, ...] = (),
) -> Evaluation:
    """The evaluation of a rubric with code keys alone (and no shadows), from its results.

    A draft that met every key with nothing to say is the usual case, and its
    evaluation is the same every time (:class:`EveryKeyMet`): the first one
    :func:`merge` makes is kept, and handed out again as fresh copies."""
    found = tuple(map(results.get, rubric.keys))
    every_met: EveryKeyMet | None = rubric._all_met
    # the very same results (not merely equal ones: comparing a failed key's result
    # field by field would cost a draft that failed more than the check saves)
    if every_met is not None and all(map(operator.is_, found, every_met.criteria)):
        return every_met.evaluation(output_id, calls)
    evaluation = merge(rubric, results, None, judge_called=False, judge_calls=calls,
                       output_id=output_id)  # fmt: skip
    kept = rubric._met
    if every_met is None and all(r is not None and r is kept.get(r.key) for r in found):
        rubric._all_met = EveryKeyMet(evaluation)  # every key met with nothing to say
    return evaluation


class EveryKeyMet:
    """What :func:`merge` made of a code-only rubric's draft on which every key was met
    with nothing to say, kept on the rubric to be handed out again.

    Such a draft's results are the rubric's shared ones (:func:`_met_result`), and
    ``merge`` is a function of the results and the rubric alone: every later draft
    whose results are those same results merges to the same evaluation, whose
    containers (the verdict's dicts and lists) are fresh copies of these on every
    draft, so a caller changing one changes nothing else. A test holds it to
    ``merge``, over random rubrics."""

    def __init__(self, made: Evaluation) -> None:
        v = made.verdict
        self.criteria = made.criteria
        self._values = (v.reasoning, v.passed, made.accepted, made.overall_score)
        self._met = dict(v.criteria_met)
        self._issues = tuple(v.issues)
        self._scores = dict(v.scores)
        self._feedback = dict(v.feedback)
        self._fields: dict[str, Any] = {  # an evaluation's fields, but for id and calls
            _PENDING: self, "accepted": made.accepted, "criteria": made.criteria,
            "overall_score": made.overall_score, "output_id": "",
            "improvement_from_previous": None, "judge_called": False, "shadows": (),
            "judge_calls": (), "judge_error": None,
        }  # fmt: skip

    def evaluation(self, output_id: str, calls: tuple[Any, ...]) -> Evaluation:
        """A fresh evaluation equal to the kept one (with this draft's id and calls).

        Its verdict is made when first read (:class:`_VerdictOnRead`): every value
        in it is known already, and a caller who reads only ``accepted``, the
        criteria or the JSON never needs the object and its five containers."""
        fields = self._fields.copy()  # a copy and two stores: cheaper than a new dict
        fields["output_id"] = output_id
        fields["judge_calls"] = calls
        evaluation = _new(Evaluation)
        _setattr(evaluation, "__dict__", fields)
        return evaluation

    def verdict(self) -> Verdict:
        """A fresh verdict equal to the kept one."""
        reasoning, passed, _, _ = self._values
        return built_verdict(
            reasoning,
            self._met.copy(),
            passed,
            list(self._issues),
            self._scores.copy(),
            self._feedback.copy(),
        )


_PENDING = "_verdict_from"  # where an evaluation made by EveryKeyMet keeps its maker


class _VerdictOnRead:
    """``Evaluation.verdict`` for an evaluation :class:`EveryKeyMet` made without one:
    the verdict is made on the first read and kept in the instance (from then on the
    instance's own attribute answers, as for any other evaluation). Only such an
    evaluation reaches this: every other one holds its verdict from its ``__init__``.
    Equality, ``repr``, ``replace``, ``asdict``, copies and pickles read the field,
    so they see the verdict; a test holds each to the eager evaluation."""

    def __get__(self, obj: Evaluation | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        fields = obj.__dict__
        # setdefault: two threads reading at once keep (and get) one verdict
        return fields.setdefault("verdict", fields[_PENDING].verdict())


def _evaluation_state(self: Evaluation) -> dict[str, Any]:
    """What pickling and copying an Evaluation keep: its fields, the verdict made."""
    state = dict(vars(self))
    if _PENDING in state:
        state["verdict"] = self.verdict
        del state[_PENDING]
    return state


# Set on the class after the dataclass is made, so the generated __init__ and the
# field list stay the dataclass's own (a non-data descriptor: an instance's own
# ``verdict`` wins over it).
setattr(Evaluation, "verdict", _VerdictOnRead())  # noqa: B010
setattr(Evaluation, "__getstate__", _evaluation_state)  # noqa: B010


@dataclass(frozen=True)
class _JudgeAnswer:
    """The judge's whole verdict, its verdict on its own keys, and shadow-key issues."""

    full: Verdict | None = None
    own: Verdict | None = None
    shadow_issues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None


_NO_ANSWER = _JudgeAnswer()


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
    *,
    ran_judge: bool,
) -> tuple[ShadowResult, ...]:
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
    r = _from_judge(judge_copy(c), answer.full)
    issues = tuple(answer.shadow_issues.get(c.key, ())) + r.issues
    return ShadowSide("judge", "judge", r.passed, r.score, issues, r.agreement), None


def call_judge(
    judge: Judge,
    task: str,
    draft: str,
    criteria: Sequence[Criterion],
    *,
    optional: Collection[str] = (),
) -> Verdict:
    """Ask the judge, and read what it returned strictly (every judge, every road).

    Whatever ``evaluate()`` returns - a :class:`Verdict`, a dict, anything else -
    goes through :func:`~gradeloop.grading._strict.strict_verdict` for the keys
    asked (``optional``: keys it may leave out, such as shadow keys); an invalid
    answer, or an exception, is a :class:`JudgeError`.
    """
    try:
        raw: Any = judge.evaluate(task, draft, criteria)
    except GradeloopError as exc:
        if isinstance(exc, JudgeError):
            raise
        raise JudgeError(f"the judge failed: {exc}", reason="api_error") from exc
    except Exception as exc:
        raise JudgeError(
            f"the judge raised {type(exc).__name__}: {exc}", reason="api_error"
        ) from exc
    return judge_answer(raw, criteria, optional=optional)


def judge_answer(
    raw: Any, criteria: Sequence[Criterion], *, optional: Collection[str] = ()
) -> Verdict:
    """What a judge returned for ``criteria``, read strictly; a :class:`JudgeError` if invalid.

    The one gate every judge's answer passes before grading uses it (the async
    path included): see :mod:`gradeloop.grading._strict` for the rules.
    """
    try:
        judged = [c for c in criteria if c.source == "judge"]
        return strict_verdict(raw, judged, optional=optional)
    except WireError as exc:
        raise JudgeError(f"the judge's verdict is invalid: {exc}", reason="invalid") from None


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


_new = object.__new__
_setattr = object.__setattr__


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


def _code_result(
    key: str,
    weight: float,
    score: float,
    passed: bool,
    filled_by: str,
    issues: tuple[str, ...],
    error: str | None,
) -> CriterionResult:
    """``CriterionResult(key, weight, score, passed, "code", filled_by, issues, ...)``
    built without the frozen dataclass's field-by-field ``__init__`` (a third of a
    cheap check's bookkeeping); every field is set, and a test compares the two."""
    fields = _CODE_FIELDS.copy()  # a copy and eight stores: cheaper than a new dict of 13
    fields["key"] = key
    fields["weight"] = weight
    fields["score"] = score
    fields["passed"] = passed
    fields["filled_by"] = filled_by
    fields["issues"] = issues
    fields["feedback"] = "; ".join(issues) or None
    fields["error"] = error
    result = _new(CriterionResult)
    _setattr(result, "__dict__", fields)
    return result


# a code key's result, in field order: what every code key has, and places for the rest
_CODE_FIELDS: dict[str, Any] = {
    "key": "", "weight": 0.0, "score": 0.0, "passed": False, "source": "code", "filled_by": "",
    "issues": (), "feedback": None, "checked": True, "agreement": None, "samples": (),
    "error": None, "judging": None,
}  # fmt: skip


def _from_judge(c: Criterion, v: Verdict) -> CriterionResult:
    result = _judged_result(c, v)
    sampled = v.samples.get(c.key) if isinstance(v, SampledVerdict) else None
    if sampled is None:
        return result
    detail = v.key_detail(c.key) if isinstance(v, SampledVerdict) else None
    return replace(result, agreement=sampled.agreement, samples=sampled.values, judging=detail)


def _judged_result(c: Criterion, v: Verdict) -> CriterionResult:
    fb = v.feedback.get(c.key) or None
    if c.scale == "score":
        raw = v.scores.get(c.key)
        if raw is None or not math.isfinite(raw) or not 1 <= raw <= 10:
            return CriterionResult(
                c.key,
                c.weight,
                0.0,
                False,
                "judge",
                "judge",
                (f"the judge gave no score for {c.key!r}",),
                fb,
                error="no score",
            )
        score = float(raw)  # call_judge let only integers 1-10 through: never clamped
        met = score >= c.pass_threshold  # decided here, never by the judge's boolean
        issues = () if met else (f"scored {score:g}, needs {c.pass_threshold:g}",)
        return CriterionResult(c.key, c.weight, score, met, "judge", "judge", issues, fb)
    claim = v.criteria_met.get(c.key)
    if claim is None:
        return CriterionResult(
            c.key,
            c.weight,
            0.0,
            False,
            "judge",
            "judge",
            (f"the judge gave no verdict on {c.key!r}",),
            fb,
        )
    met = claim is True
    return CriterionResult(c.key, c.weight, 10.0 if met else 0.0, met, "judge", "judge", (), fb)


def overall(results: Sequence[CriterionResult]) -> float:
    """The weighted mean of the criterion scores, on 0-10."""
    total = sum(r.weight for r in results)
    if total <= 0:
        return 0.0
    return sum(r.weight * r.score for r in results) / total


def merge(
    rubric: Rubric,
    results: Mapping[str, CriterionResult],
    verdict: Verdict | None,
    *,
    shadows: tuple[ShadowResult, ...] = (),
    judge_called: bool | None = None,
    judge_calls: tuple[Any, ...] = (),
    output_id: str = "",
) -> Evaluation:
    """Merge per-key results (and the judge's verdict) into one Evaluation.

    ``judge_called`` defaults to whether there is a verdict."""
    # one pass over the keys: what the gate, the score and the verdict need (this runs
    # for every draft, so it is written for speed)
    checked = every_met = True
    total = weighted = 0.0
    issues: list[str] = []
    judged: list[str] = []
    found: list[CriterionResult] = []
    met: dict[str, bool] = {}
    feedback: dict[str, str] = {}
    get = results.get
    for c in rubric:
        r = get(c.key) or _unfilled(c)
        found.append(r)
        key, passed, weight = r.key, r.passed, r.weight
        met[key] = passed
        if r.feedback:
            feedback[key] = r.feedback
        if not r.checked:
            checked = False
        if not passed:
            every_met = False
        total += weight
        weighted += weight * r.score
        if r.issues:
            own = [f"{key}: {i}" for i in r.issues]
            if r.source == "code" or not r.checked:
                issues.extend(own)
            else:
                judged.extend(own)
    # With keys not checked there is no overall score to give (they would count 0):
    # None, and not blamed, as the gate already fails on the unchecked keys themselves.
    score = (0.0 if total <= 0 else weighted / total) if checked else None
    if verdict is not None:
        issues.extend(verdict.issues)
        issues.extend(judged)
    below = False
    if score is not None and not math.isfinite(score):  # NaN compares false: never a pass
        below = True
        issues.append("the overall score is not a finite number; check the weights")
    elif score is not None and rubric.pass_score is not None and score < rubric.pass_score:
        below = True
        issues.append(
            f"overall score {score:.2f} is below the rubric's pass_score {rubric.pass_score:g}"
        )
    # The gate decides: the judge's own claim and every key must agree on a pass,
    # so either one saying "no" is a "no" (and says why, for the next revision).
    claim = verdict.passed if verdict is not None else True
    if not claim and every_met and not below:
        issues.append(
            "the judge did not pass the draft (passed=false) although it marked every "
            "criterion met; see its reasoning"
        )
    ordered = tuple(found)
    scored = rubric.scored_keys
    if shadows and output_id:
        shadows = tuple(replace(x, output_id=output_id) for x in shadows)
    merged = built_verdict(  # every value here is gradeloop's own, checked before
        verdict.reasoning if verdict is not None else "Every key was graded in code.",
        met,
        bool(claim and every_met and not below),
        _dedupe(issues) if issues else [],
        {r.key: r.score for r in ordered if r.key in scored} if scored else {},
        feedback,
    )
    return _evaluation(
        merged,
        accepted(merged, rubric.keys),
        ordered,
        score,
        verdict is not None if judge_called is None else judge_called,
        output_id,
        shadows,
        judge_calls,
    )


def _evaluation(
    verdict: Verdict,
    accepted: bool,
    criteria: tuple[CriterionResult, ...],
    overall_score: float | None,
    judge_called: bool,
    output_id: str,
    shadows: tuple[ShadowResult, ...],
    judge_calls: tuple[Any, ...],
) -> Evaluation:
    """``Evaluation(verdict=..., ...)`` built as :func:`_code_result` builds a result,
    without the frozen dataclass's field-by-field ``__init__`` (one per draft); every
    field is set, and a test compares the two."""
    evaluation = _new(Evaluation)
    _setattr(evaluation, "__dict__", {
        "verdict": verdict, "accepted": accepted, "criteria": criteria,
        "overall_score": overall_score, "output_id": output_id,
        "improvement_from_previous": None, "judge_called": judge_called, "shadows": shadows,
        "judge_calls": judge_calls, "judge_error": None,
    })  # fmt: skip
    return evaluation


def _unfilled(c: Criterion) -> CriterionResult:
    return CriterionResult(
        c.key, c.weight, 0.0, False, c.source, c.filled_by, ("no one filled this criterion",)
    )


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i.strip()))


__all__ = [
    "CriterionResult",
    "Evaluation",
    "GradePlan",
    "Judge",
    "call_judge",
    "finish_grade",
    "grade",
    "judge_answer",
    "merge",
    "overall",
    "run_checks",
    "start_plan",
]
