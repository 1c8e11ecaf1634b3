"""One request of a judge flow through the provider's adapter, and the two drivers.

A flow (an evaluation, a pairwise comparison, a one-off structured request) asks for one
:class:`~._steps._Step` at a time. :func:`exchange` turns a step into the request the
adapter builds in the judge's current structured form, answers it from the verdict
cache when it can, and otherwise *yields* it to be sent: the reply comes back in, or
the send's exception is thrown in. The decisions are made there, once for every
provider and for both ways of sending:

* the verdict cache answers a request it holds a valid reply to (a reply got after a
  step down is filed under the first form's request too, so a re-run finds it);
* a refusal of the form (:meth:`~._adapter.Adapter.refuses_form`) steps the client down
  (:class:`~._forms.FormMemory`) and asks again in the next form: recorded, never a
  verdict, never the repair;
* any other API error is a :class:`~gradeloop.errors.JudgeError` ``"api_error"`` whose
  one line names the status, the server's message and the fix;
* an answer that is not an API response at all is ``"api_error"`` too ("no text block:
  ... is the base URL a ... server?");
* a reply is read by the adapter; one that is not an answer (a refusal, a cut-off
  reply) is recorded and raised with its reason.

:func:`drive` and :func:`adrive` run any generator that yields what to send: one blocks
on each send, the other awaits it. They are the only place sync and async differ.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import replace
from typing import Any, TypeVar

from ..errors import JudgeError
from ..errors._redact import scrub_chain
from ._digest import request_digest
from ._failure import describe_api_error, server_message
from ._reply import UNREADABLE, unreadable
from ._steps import FlowJudge, _Answer, _Step, _Trace
from ._usage import CallKind
from ._wire import WireError

__all__ = ["adrive", "drive", "exchange", "settle", "through"]

T = TypeVar("T")
Sent = TypeVar("Sent")


def drive(flow: Generator[Sent, Any, T], send: Callable[[Sent], Any]) -> T:
    """Run ``flow`` to its end: each thing it yields is sent with ``send`` (blocking), and
    the result sent back in, or the exception ``send`` raised thrown in."""
    try:
        sending = next(flow)
        while True:
            try:
                reply = send(sending)
            except Exception as exc:  # the flow decides what a failure means
                sending = flow.throw(exc)
            else:
                sending = flow.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result


async def adrive(flow: Generator[Sent, Any, T], send: Callable[[Sent], Awaitable[Any]]) -> T:
    """:func:`drive`, awaiting each send."""
    try:
        sending = next(flow)
        while True:
            try:
                reply = await send(sending)
            except Exception as exc:
                sending = flow.throw(exc)
            else:
                sending = flow.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result


Requests = Generator[dict[str, Any], Any, T]


def through(
    judge: FlowJudge, flow: Generator[_Step, _Answer, T], trace: _Trace, sample: int = 0
) -> Requests[T]:
    """The requests of a step-level ``flow``: each step exchanged, its answer sent back."""
    step = next(flow)
    while True:
        answer = yield from exchange(judge, replace(step, sample=sample), trace)
        try:
            step = flow.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result


def exchange(judge: FlowJudge, step: _Step, trace: _Trace) -> Requests[_Answer]:
    """``step``'s answer: from the cache, or its request yielded to be sent (again in
    the next form after a refusal of one: a few times at most)."""
    adapter = judge.adapter
    while True:
        form = judge.form
        request = judge._request(step, form)
        key, hit = _lookup(judge, step, request, form)
        if hit is not None:
            return hit
        started = time.perf_counter()
        try:
            reply = yield request
        except Exception as exc:
            scrub_chain(exc)  # the SDK's error, chained below, may quote the key
            if adapter.api_error(exc):
                if _refused(judge, step, form, exc, started, trace):
                    continue
                detail = describe_api_error(exc, api=adapter.api)
                trace.records.append(judge._record(step.kind, judge.model, started, error=detail))
                raise JudgeError(
                    f"the judge's API call failed after the client's retries: {detail}",
                    reason="api_error",
                ) from exc
            if isinstance(exc, UNREADABLE):  # the server answered, but not with an API response
                failure = unreadable(exc, api=adapter.api)
                record = judge._record(step.kind, judge.model, started, error=str(failure))
                trace.records.append(record)
                raise JudgeError(f"{_gave_none(step)}: {failure}", reason="api_error") from exc
            raise
        reading = adapter.read(reply)
        if reading.failure is not None:
            error = str(reading.failure)
            trace.records.append(
                judge._record(step.kind, judge.model, started, reading.seen, error=error)
            )
            raise JudgeError(
                f"{_gave_none(step)}: {reading.failure}", reason=reading.failure.reason
            ) from reading.failure
        answer = _Answer(reading.seen, reading.text, reading.parsed, started, key, form=form)
        if key is not None:
            answer.also = _first_form_key(judge, step, form)
        return answer


def _gave_none(step: _Step) -> str:
    # a judge's one-off request (ask) is not a verdict
    return "the model gave no answer" if step.kind == "generate" else "the judge gave no verdict"


def _lookup(
    judge: FlowJudge, step: _Step, request: dict[str, Any], form: str
) -> tuple[str | None, _Answer | None]:
    """The request's cache key, and the cached answer if a valid one is stored."""
    if judge.cache is None or step.one_off:
        return None, None
    key = request_digest(request, sample=step.sample)
    text = judge.cache.get(key)
    if text is None:
        return key, None
    try:
        step.spec.parse_text(text)
    except WireError:
        # stored by a laxer gradeloop, or damaged: never reuse it, ask again
        judge.cache.discard(key)
        return key, None
    return key, _Answer(None, text, None, time.perf_counter(), key, cached=True, form=form)


def _first_form_key(judge: FlowJudge, step: _Step, form: str) -> tuple[str, ...]:
    """The cache key of ``step``'s request in the first structured form, when the judge
    sends it in a later one because the server refused that form: the reply is filed
    under both, so a re-run (which starts with the first form again) finds it there and
    asks nothing, not even the refused form."""
    first = judge.adapter.forms[0]
    if judge.structured != "auto" or judge._json_mode or step.schema is None or form == first:
        return ()
    return (request_digest(judge._request(step, first), sample=step.sample),)


def _refused(
    judge: FlowJudge, step: _Step, form: str, exc: BaseException, started: float, trace: _Trace
) -> bool:
    """Whether ``exc`` refused ``form`` and the judge stepped down (the call recorded,
    ``step`` to be sent again); a refusal is never a verdict, nor a repair."""
    if step.schema is None or form == "json" or not judge.adapter.refuses_form(exc):
        return False
    base = getattr(judge.client, "base_url", None)
    server = f"the server at {base}" if base else "the server"
    if not judge._forms.step_down(form, server_message(exc), server):
        return False
    detail = f"the server refused the {form} form: {describe_api_error(exc, api=judge.adapter.api)}"
    trace.records.append(judge._record(step.kind, judge.model, started, error=detail))
    return True


def settle(
    judge: FlowJudge, kind: CallKind, answer: _Answer, trace: _Trace, error: str | None = None
) -> None:
    """Record the call that gave ``answer`` (failed with ``error``, if given); a valid
    answer that was sent, not cached, goes into the verdict cache."""
    record = judge._record(
        kind,
        judge.model,
        answer.started,
        answer.reply,
        error=error,
        cached=answer.cached,
        batch=answer.batch,
    )
    trace.records.append(record)
    if error is None and answer.key is not None and not answer.cached and answer.text is not None:
        assert judge.cache is not None
        for key in (answer.key, *answer.also):
            judge.cache.put(key, answer.text, model=judge.model)
