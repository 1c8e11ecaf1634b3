"""The evaluation flow: which requests judge one draft, and how each reply is read.

Written once for every provider, as a generator that yields a
:class:`~._steps._Step` per request and is sent its :class:`~._steps._Answer`
(:mod:`._exchange` sends it through the judge's adapter, blocking or awaited):

1. unless the judge is in JSON mode, the request in a structured form (the per-rubric
   schema, :mod:`._wire`); a server that refused every structured form has had it
   sent in JSON mode already (``answer.form == "json"``): read as in step 2;
   a valid reply is the verdict; in ``"auto"``, a prose reply (a server that ignored
   the schema) switches the judge to JSON mode for good and goes on to step 2;
   an invalid reply gets the one repair where the adapter says so
   (``repairs_structured``), else is a :class:`~gradeloop.errors.JudgeError`;
2. JSON mode: the schema in the system text, the reply's JSON read strictly, one repair.

Every reply is read by the one strict reader (:meth:`~._wire.WireSpec.parse_text`):
never a pass on an invalid reply.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from ..errors import JudgeError
from ..grading._rubric import Criterion
from ..grading._verdict import Verdict
from ._exchange import settle
from ._prompts import judge_system, judge_user
from ._steps import FlowJudge, _Answer, _judged, _Step, _Trace, prose_note, repair_step
from ._wire import WireError, WireSpec, wire_spec

__all__ = ["evaluation"]

_Flow = Generator[_Step, _Answer, Verdict]


def evaluation(
    judge: FlowJudge, task: str, draft: str, criteria: Sequence[Criterion], trace: _Trace
) -> _Flow:
    """The flow judging ``draft`` against the judge-filled keys of ``criteria``."""
    spec = wire_spec(_judged(criteria), feedback=judge.feedback)
    user = {"role": "user", "content": judge_user(task, draft)}
    if not judge._in_json():
        system = judge_system(spec.criteria)
        step = _Step("evaluate", system, [user], spec.schema, spec, judge_system)
        answer = yield step
        if answer.form == "json":  # the server refused the structured forms: stepped down
            return (yield from _json(judge, spec, user, trace, answer))
        try:
            verdict = _read(spec, answer)
        except WireError as err:
            note = prose_note(judge.structured, answer, judge.adapter.schema_field)
            if note is not None:
                settle(judge, "evaluate", answer, trace, note)
                judge._json_mode = True
                return (yield from _json(judge, spec, user, trace))
            settle(judge, "evaluate", answer, trace, f"invalid verdict: {err}")
            if not judge.adapter.repairs_structured:
                raise JudgeError(
                    f"the judge's reply does not match the rubric's schema: {err}. If the "
                    "server does not support structured output, use --structured json "
                    "(structured='json' in Python)",
                    reason="invalid",
                ) from None
            return (yield from _repair(judge, spec, step, answer, err, trace, native=True))
        settle(judge, "evaluate", answer, trace)
        return verdict
    return (yield from _json(judge, spec, user, trace))


def _json(
    judge: FlowJudge,
    spec: WireSpec,
    user: dict[str, str],
    trace: _Trace,
    answer: _Answer | None = None,
) -> _Flow:
    """JSON mode: the schema in the system text, one repair. ``answer`` is the reply
    to a request already sent that way (a structured form the server refused)."""
    system = judge_system(spec.criteria, spec.schema_text())
    step = _Step("evaluate", system, [user], None, spec)
    if answer is None:
        answer = yield step
    try:
        verdict = _read(spec, answer)
    except WireError as err:
        settle(judge, "evaluate", answer, trace, f"invalid verdict: {err}")
        return (yield from _repair(judge, spec, step, answer, err, trace, native=False))
    settle(judge, "evaluate", answer, trace)
    return verdict


def _repair(
    judge: FlowJudge,
    spec: WireSpec,
    step: _Step,
    answer: _Answer,
    first_error: WireError,
    trace: _Trace,
    *,
    native: bool,
) -> _Flow:
    """The one repair request after an invalid reply to ``step`` (with the schema again
    when ``native``); a repair that is invalid too is a JudgeError."""
    repaired = yield repair_step(step, answer, first_error, native=native)
    try:
        verdict = _read(spec, repaired)
    except WireError as err:
        settle(judge, "repair", repaired, trace, f"invalid verdict: {err}")
        raise JudgeError(
            f"the judge's reply is still invalid after one repair attempt: {err} "
            f"(first reply: {first_error})",
            reason="invalid",
        ) from None
    settle(judge, "repair", repaired, trace)
    return verdict


def _read(spec: WireSpec, answer: _Answer) -> Verdict:
    if answer.text is None:
        return spec.parse_object(answer.parsed)
    return spec.parse_text(answer.text)
