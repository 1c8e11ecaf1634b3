"""The judge's side of Message Batches: the request a batch carries, and reading its reply.

A batch request is exactly the first request :meth:`AnthropicJudge.evaluate` would
send (same system text, wire schema, user message and settings; ``extra_body`` merged
into the params, since a batch takes the raw body), and its cache key is the one that
request has, so a batch result fills the verdict cache for later synchronous runs.
The reply is read by the judge's own flow, with the same strictness. A batch cannot
ask a second time, so a reply that would need a repair (or the switch to JSON mode)
is an invalid verdict.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..errors import JudgeError
from ..grading._rubric import Criterion
from ..grading._verdict import Verdict
from ._digest import request_digest
from ._judge import AnthropicJudge
from ._raw import wire_body
from ._steps import _annotate, _Answer, _Trace
from ._usage import CallKind

__all__ = ["batch_request", "read_batch_reply"]


def batch_request(
    judge: AnthropicJudge, task: str, draft: str, criteria: Sequence[Criterion]
) -> tuple[dict[str, Any], str]:
    """The ``params`` of the batch request for ``draft``, and its cache key."""
    if judge.samples != 1:
        raise ValueError(
            "Message Batches take one request per draft: use a judge with samples=1 "
            f"(this one has samples={judge.samples})"
        )
    step = next(judge._flow(task, draft, criteria, _Trace()))
    request = judge._request(step)
    key = request_digest(request)
    return wire_body(request), key


def read_batch_reply(
    judge: AnthropicJudge,
    task: str,
    draft: str,
    criteria: Sequence[Criterion],
    reply: Any,
    *,
    key: str | None = None,
) -> Verdict:
    """The verdict in a batch's ``message`` for ``draft``, read as evaluate() reads its
    first reply; raises :class:`~gradeloop.errors.JudgeError` as evaluate() would.

    With ``key`` and a cache on the judge, a valid verdict is stored in the cache.
    """
    trace = _Trace()
    mode = judge._json_mode  # a prose reply must not switch the judge for later drafts
    flow = judge._flow(task, draft, criteria, trace)
    try:
        step = next(flow)
        flow.send(
            _batch_answer(judge, step.kind, reply, key if judge.cache is not None else None, trace)
        )
    except StopIteration as done:
        verdict: Verdict = done.value
        return verdict
    except JudgeError as exc:
        _annotate(exc, trace)
        raise
    finally:
        judge._json_mode = mode
        flow.close()
    error = JudgeError(
        "the batch reply is not a valid verdict, and a batch cannot ask again for a repair; "
        "grade this draft without --batch",
        reason="invalid",
    )
    _annotate(error, trace)
    raise error


def _batch_answer(
    judge: AnthropicJudge, kind: CallKind, reply: Any, key: str | None, trace: _Trace
) -> _Answer:
    """The judge's reading of a reply (its adapter's), recorded at the batch price."""
    started = time.perf_counter()
    reading = judge.adapter.read(reply)
    if reading.failure is not None:
        error = str(reading.failure)
        record = judge._record(kind, judge.model, started, reading.seen, error=error, batch=True)
        trace.records.append(record)
        raise JudgeError(
            f"the judge gave no verdict: {reading.failure}", reason=reading.failure.reason
        ) from reading.failure
    return _Answer(reading.seen, reading.text, reading.parsed, started, key, batch=True)
