"""OpenTelemetry spans for loops, rounds, model calls, checkers and gradings.

Install the extra (``pip install 'gradeloop[otel]'``, the OpenTelemetry API) and
configure a tracer provider in your application, as for any instrumented library;
gradeloop then emits:

``gradeloop.loop`` and ``gradeloop.round`` spans, a ``chat {model}`` span per model
request with the GenAI semantic conventions (``gen_ai.*``), ``gradeloop.grade`` per
grading, ``gradeloop.check`` per checker, and ``gradeloop.summary`` for a run's
figures with their intervals (``gen_ai.evaluation.score.ci.*``); docs/telemetry.md
lists every attribute.

Rounds nest in their loop, and gradings, checkers and model calls in the round (or
whatever span is current when they run). Exceptions are recorded on the span they
leave. Without the extra nothing here imports OpenTelemetry and the decorators return
the very functions they decorate; with it but no tracer provider, each hook costs one
check. A provider can also be handed in with :func:`use_tracer_provider`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from ..errors._redact import scrub_error

__all__ = [
    "AVAILABLE",
    "active_tracer",
    "evaluation_summary",
    "grade_span",
    "iteration",
    "model_call",
    "record_error",
    "start_round",
    "traced_checker",
    "traced_grade",
    "traced_loop",
    "tracing",
    "use_tracer_provider",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Whether the OpenTelemetry API is installed (looked up, never imported here).
AVAILABLE: bool = importlib.util.find_spec("opentelemetry") is not None
_NAME = "gradeloop"
_trace: Any = None  # opentelemetry.trace, imported on first use
_context: Any = None  # opentelemetry.context
_provider: Any = None  # set by use_tracer_provider


@dataclass
class _LoopState:
    tracer: Any
    span: Any
    loop_id: str | None = None
    round_no: int | None = None
    round_span: Any = None
    round_token: Any = None

    def end_round(self) -> None:
        if self.round_span is not None:
            _context.detach(self.round_token)
            self.round_span.end()
            self.round_span = self.round_token = None


_LOOP: ContextVar[_LoopState | None] = ContextVar("gradeloop_loop_span", default=None)


@contextlib.contextmanager
def _span(tracer: Any, name: str, **kwargs: Any) -> Iterator[Any]:
    """``tracer.start_as_current_span``, with an exception that escapes recorded by
    :func:`_failed` (scrubbed) rather than by OpenTelemetry (as it is)."""
    with tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False, **kwargs
    ) as span:
        try:
            yield span
        except BaseException as exc:
            _failed(span, exc)
            raise


def _failed(span: Any, exc: BaseException, prefix: str = "") -> None:
    """An ``exception`` event and an error status on ``span``, their text scrubbed of
    secrets (an API error can quote the credential it refused); no stack trace."""
    message = scrub_error(str(exc))
    span.add_event(
        "exception", {"exception.type": type(exc).__name__, "exception.message": message}
    )
    span.set_status(
        _trace.Status(_trace.StatusCode.ERROR, f"{prefix}{type(exc).__name__}: {message}")
    )


def use_tracer_provider(provider: Any) -> None:
    """Send gradeloop's spans to ``provider`` instead of the global one (None: back to
    the global provider)."""
    global _provider
    _provider = provider


def tracing() -> bool:
    """Whether spans would be recorded now (the API installed and a provider set)."""
    return AVAILABLE and _tracer() is not None


def _tracer() -> Any:
    """The tracer, or None when tracing is off (no API, or no provider configured)."""
    global _trace, _context, AVAILABLE
    if _trace is None:
        try:
            from opentelemetry import context, trace
        except ImportError:  # a broken install: behave as if absent
            AVAILABLE = False
            return None
        _trace, _context = trace, context
    provider = _provider if _provider is not None else _trace.get_tracer_provider()
    if isinstance(provider, (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)):
        return None  # nothing configured: nothing would be recorded
    return provider.get_tracer(_NAME)


# -- decorators --------------------------------------------------------------------


def _wrap(fn: F, run: Callable[[Any, Callable[[], Any]], Any]) -> F:
    """``fn`` wrapped so that ``run(tracer, call)`` runs it when tracing is on."""
    if not AVAILABLE:
        return fn
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            tracer = _tracer()
            if tracer is None:
                return await fn(*args, **kwargs)
            return await run(tracer, lambda: fn(*args, **kwargs))

        return cast(F, awrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tracer = _tracer()
        if tracer is None:
            return fn(*args, **kwargs)
        return run(tracer, lambda: fn(*args, **kwargs))

    return cast(F, wrapper)


def _spanned(name: str, after: Callable[[Any, Any], None]) -> Callable[[F], F]:
    """A decorator: a span called ``name`` around the call; ``after(span, result)``."""

    def decorate(fn: F) -> F:
        is_async = inspect.iscoroutinefunction(fn)

        def run(tracer: Any, call: Callable[[], Any]) -> Any:
            if is_async:

                async def arun() -> Any:
                    with _span(tracer, name) as span:
                        result = await call()
                        after(span, result)
                        return result

                return arun()
            with _span(tracer, name) as span:
                result = call()
                after(span, result)
                return result

        return _wrap(fn, run)

    return decorate


def traced_loop(fn: F) -> F:
    """Decorate ``run_loop`` (or ``arun_loop``): a ``gradeloop.loop`` span around it,
    the parent of its rounds."""

    def run(tracer: Any, call: Callable[[], Any]) -> Any:
        if inspect.iscoroutinefunction(fn):

            async def arun() -> Any:
                with _span(tracer, "gradeloop.loop") as span:
                    token = _LOOP.set(_LoopState(tracer, span))
                    try:
                        result = await call()
                    finally:
                        _close_loop(token)
                    _loop_done(span, result)
                    return result

            return arun()
        with _span(tracer, "gradeloop.loop") as span:
            token = _LOOP.set(_LoopState(tracer, span))
            try:
                result = call()
            finally:
                _close_loop(token)
            _loop_done(span, result)
            return result

    return _wrap(fn, run)


def _close_loop(token: Any) -> None:
    state = _LOOP.get()
    if state is not None:
        state.end_round()
    _LOOP.reset(token)


def _loop_done(span: Any, result: Any) -> None:
    _set(
        span,
        {
            "gradeloop.loop.id": getattr(result, "loop_id", None),
            "gradeloop.loop.stop_reason": getattr(result, "stop_reason", None),
            "gradeloop.loop.passed": getattr(result, "passed", None),
            "gradeloop.loop.rounds": getattr(result, "rounds", None),
            "gradeloop.output_id": getattr(result, "output_id", None),
            "gradeloop.overall_score": getattr(
                getattr(result, "evaluation", None), "overall_score", None
            ),
        },
    )


def _grade_done(span: Any, ev: Any) -> None:
    _set(
        span,
        {
            "gradeloop.rubric.keys": len(getattr(ev, "criteria", ())),
            "gradeloop.accepted": getattr(ev, "accepted", None),
            "gradeloop.overall_score": getattr(ev, "overall_score", None),
            "gradeloop.failed_keys": list(getattr(ev, "failed_keys", ())),
            "gradeloop.judge_called": getattr(ev, "judge_called", None),
        },
    )


def traced_grade(fn: F) -> F:
    """Decorate ``grade`` (or ``agrade``): a ``gradeloop.grade`` span per draft."""
    return _spanned("gradeloop.grade", _grade_done)(fn)


def grade_span(tracer: Any, call: Callable[[], Any]) -> Any:
    """``call()`` inside a ``gradeloop.grade`` span of ``tracer`` (from
    :func:`active_tracer`): what :func:`traced_grade` does, for a caller that looked
    the tracer up itself and uses the answer twice."""
    with _span(tracer, "gradeloop.grade") as span:
        result = call()
        _grade_done(span, result)
        return result


def active_tracer() -> Any:
    """gradeloop's tracer, or None when spans would not be recorded."""
    return _tracer() if AVAILABLE else None


def traced_checker(fn: F) -> F:
    """Decorate ``run_checker(info, text, options, ...)``: a ``gradeloop.check`` span."""

    def run(tracer: Any, call: Callable[[], Any], name: str) -> Any:
        with _span(tracer, "gradeloop.check", attributes={"gradeloop.checker": name}) as span:
            result = call()
            passed = result if isinstance(result, bool) else getattr(result, "passed", None)
            _set(
                span,
                {
                    "gradeloop.check.passed": passed,
                    "gradeloop.check.score": getattr(result, "score", None),
                    "gradeloop.check.issues": len(getattr(result, "issues", ()) or ()),
                },
            )
            return result

    if not AVAILABLE:
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tracer = _tracer()
        if tracer is None:
            return fn(*args, **kwargs)
        info = args[0] if args else kwargs.get("info")
        return run(tracer, lambda: fn(*args, **kwargs), str(getattr(info, "name", "?")))

    return cast(F, wrapper)


# -- hooks inside the loop and the model tier --------------------------------------------


def start_round(loop_id: str, round_no: int) -> None:
    """Start round ``round_no`` of the current loop (ending the round before it)."""
    if not AVAILABLE:
        return
    state = _LOOP.get()
    if state is None:
        return
    state.end_round()
    state.loop_id, state.round_no = loop_id, round_no
    state.span.set_attribute("gradeloop.loop.id", loop_id)
    parent = _trace.set_span_in_context(state.span)
    span = state.tracer.start_span(
        "gradeloop.round",
        context=parent,
        attributes={"gradeloop.loop.id": loop_id, "gradeloop.round": round_no},
    )
    state.round_span = span
    state.round_token = _context.attach(_trace.set_span_in_context(span))


def iteration(it: Any) -> None:
    """Put a judged iteration's outcome on the current round's span."""
    if not AVAILABLE:
        return
    state = _LOOP.get()
    if state is None or state.round_span is None:
        return
    ev = getattr(it, "evaluation", None)
    span = state.round_span
    _set(
        span,
        {
            "gradeloop.output_id": getattr(it, "output_id", None),
            "gradeloop.overall_score": getattr(ev, "overall_score", None),
            "gradeloop.accepted": getattr(ev, "accepted", None) if ev is not None else False,
            "gradeloop.failed_keys": list(getattr(ev, "failed_keys", ())) if ev is not None else [],
            "gradeloop.reused_from": getattr(it, "reused_from", None),
        },
    )
    error = getattr(it, "judge_error", None)
    if error:
        status = scrub_error(f"the judge failed: {error}")
        span.set_status(_trace.Status(_trace.StatusCode.ERROR, status))


def evaluation_summary(summary: Any, *, run_id: str | None = None) -> None:
    """A ``gradeloop.summary`` span for a :class:`gradeloop.stats.Summary`: one
    ``gen_ai.evaluation.result`` event per figure, each with its confidence interval
    (``gen_ai.evaluation.score.ci.lower`` / ``.upper`` / ``.level``, after the GenAI
    semantic conventions' proposal for evaluation results)."""
    if not AVAILABLE:
        return
    tracer = _tracer()
    if tracer is None:
        return
    figures = [("accepted", summary.accepted), ("overall_score", summary.score)]
    figures += [(name, key.rate) for name, key in summary.keys.items()]
    with _span(tracer, "gradeloop.summary") as span:
        _set(span, {"gradeloop.run.id": run_id, "gradeloop.drafts": summary.n})
        for name, interval in figures:
            if interval.estimate is None:
                continue
            ci = interval.ci or (None, None)
            attributes = {
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": interval.estimate,
                "gen_ai.evaluation.score.ci.lower": ci[0],
                "gen_ai.evaluation.score.ci.upper": ci[1],
                "gen_ai.evaluation.score.ci.level": interval.level,
                "gradeloop.evaluation.n": interval.n,
            }
            span.add_event(
                "gen_ai.evaluation.result", {k: v for k, v in attributes.items() if v is not None}
            )


def record_error(exc: BaseException) -> None:
    """Record ``exc`` on the current span (for errors that are caught and reported,
    such as a checker that raised)."""
    if not AVAILABLE or _trace is None:
        return
    span = _trace.get_current_span()
    if span.is_recording():
        _failed(span, exc)


def model_call(model: Any, record: Any, started: float, reply: Any = None) -> None:
    """A span for one model request that has just ended (from ``Metered._record``).

    ``record`` is its :class:`~gradeloop.models.CallRecord`, ``started`` the
    ``time.perf_counter()`` at which the request was sent.
    """
    if not AVAILABLE:
        return
    tracer = _tracer()
    if tracer is None:
        return
    now_ns, elapsed = time.time_ns(), time.perf_counter() - started
    system = str(getattr(model, "gen_ai_system", "anthropic"))
    usage = record.usage
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": system,
        "gen_ai.provider.name": system,
        "gen_ai.request.model": getattr(model, "model", None) or record.model,
        "gen_ai.request.max_tokens": getattr(model, "max_tokens", None),
        "gen_ai.response.model": record.model,
        "gen_ai.response.id": getattr(reply, "id", None),
        "gen_ai.response.finish_reasons": [record.stop_reason] if record.stop_reason else None,
        "gen_ai.usage.input_tokens": usage.total_input,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_input_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_input_tokens,
        "gradeloop.call.kind": record.kind,
        "gradeloop.cached": bool(getattr(record, "cached", False)),
        "gradeloop.cost_usd": getattr(usage, "cost_usd", None),
    }
    state = _LOOP.get()
    if state is not None and state.loop_id is not None:
        attributes["gradeloop.loop.id"] = state.loop_id
        attributes["gradeloop.round"] = state.round_no
    span = tracer.start_span(
        f"chat {attributes['gen_ai.request.model']}",
        kind=_trace.SpanKind.CLIENT,
        start_time=now_ns - int(elapsed * 1e9),
    )
    _set(span, attributes)
    if not record.ok:
        kind = "api_error" if reply is None else (record.stop_reason or "invalid_reply")
        span.set_attribute("error.type", kind)
        message = scrub_error(str(record.error))
        span.add_event("exception", {"exception.type": kind, "exception.message": message})
        span.set_status(_trace.Status(_trace.StatusCode.ERROR, message))
    span.end(end_time=now_ns)


def _set(span: Any, attributes: dict[str, Any]) -> None:
    """Set the attributes that have a value (OpenTelemetry takes no None)."""
    for name, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, Sequence) and not isinstance(value, str):
            value = [str(v) for v in value]
        span.set_attribute(name, value)
