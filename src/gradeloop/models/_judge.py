"""AnthropicJudge: one fresh-context request per draft, read against a per-rubric schema.

The request/validate sequence (native, the switch to JSON mode, the one repair) is
written once, as a generator that yields each request and is sent each answer; the
sync :meth:`AnthropicJudge.evaluate` and the async :meth:`AnthropicJudge.aevaluate`
only differ in how they send a request, so both read replies with the same strictness.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal, Protocol

from ..errors import JudgeError, NotAnAnswer
from ..grading._rubric import Criterion
from ..grading._samples import SampledVerdict, combine, doubtful_keys
from ..grading._verdict import Verdict
from ..grading._workers import in_thread
from ..judging._choices import Choices
from ..judging._orders import sample_order
from ._aclient import AsyncTwin
from ._client import judge_model, make_client
from ._digest import request_digest
from ._failure import describe_api_error, refuses_structure, server_message
from ._forms import ANTHROPIC_FORMS, Form, FormMemory
from ._pacing import paced
from ._prefer import aprefer as _aprefer
from ._prefer import prefer as _prefer
from ._prefer import prefer_system
from ._prompts import judge_system, judge_user
from ._raw import apost_message, post_message, raw_client
from ._reply import FINISHED, UNREADABLE, first_text, unreadable
from ._steps import _annotate as _annotate
from ._steps import _Answer as _Answer
from ._steps import _judged as _judged
from ._steps import _Step as _Step
from ._steps import _Trace as _Trace
from ._steps import prose_note, repair_step
from ._usage import CallKind, Metered
from ._wire import WireError, WireSpec, wire_spec

__all__ = ["AnthropicJudge", "ReplyCache", "Resample", "SampledVerdict", "Structured"]

Structured = Literal["auto", "native", "json"]
Resample = Literal["all", "doubtful"]
_TTLS = ("5m", "1h")
_MODES = ("auto", "native", "json")


class ReplyCache(Protocol):
    """What the judge needs of a verdict cache (:class:`~gradeloop.JudgeCache` has it)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str, *, model: str) -> None: ...

    def discard(self, key: str) -> None: ...


_Flow = Generator[_Step, _Answer, Verdict]


class AnthropicJudge(Metered):
    """Judges a draft against judge-filled criteria, one Messages-API request each.

    The SDK's own client (``anthropic.Anthropic``) is sent the request through its raw
    path, ``client.post`` (retries, headers and typed errors are still the SDK's), and
    the reply's JSON is read without building the SDK's models (:mod:`._raw`); any
    other client (a fake, a replaying cassette) is asked through ``messages.parse``.

    Each evaluation is a fresh context: one user message holding only the task and
    the draft (tagged as data); the instructions and criteria are one system text
    block, byte-identical for the same criteria and marked for prompt caching with
    ``cache_ttl`` (``"5m"`` or ``"1h"``).

    ``structured`` picks how the verdict's shape is enforced:

    * ``"native"`` - ``output_config`` with the per-rubric JSON Schema
      (constrained decoding on the Anthropic API);
    * ``"json"`` - for servers that silently drop ``output_config`` (Ollama,
      llama.cpp): the schema goes in the system text, the reply's JSON is
      validated, and one repair request is made before giving up;
    * ``"auto"`` (default) - native, switching to JSON mode for good when a reply
      is plain prose, the sign of a server that ignored ``output_config``; and when
      a server *refuses* ``output_config`` (HTTP 400/422/500 naming it or the
      schema), stepping down to JSON mode for every judge on that client, said once
      as a :class:`~gradeloop.errors.StructuredFormWarning`. A refusal is never a
      verdict and does not spend the repair attempt.

    ``cache`` (a :class:`~gradeloop.JudgeCache`) reuses the reply of an identical
    earlier request instead of sending it; only valid verdicts are stored, and a
    reused one is recorded as a call with ``cached=True`` and no tokens.

    :meth:`aevaluate` is the async twin, on an ``anthropic.AsyncAnthropic`` built
    lazily with the sync client's settings (or ``async_client``, if given; a client
    that is not the SDK's is run in a worker thread).

    Failures raise :class:`~gradeloop.errors.JudgeError` (``reason`` ``"refusal"``,
    ``"max_tokens"``, ``"no_text"``, ``"invalid"`` or ``"api_error"``); none is ever
    a pass. Every request is recorded in ``.calls``.

    ``samples=k`` (k > 1) asks ``k`` times in parallel and decides each key on all
    the answers (majority for pass/fail keys, a tie not met; the median, rounded
    down, for scored ones), returning a :class:`~gradeloop.grading._samples.SampledVerdict`
    whose ``samples`` hold each key's raw answers and their agreement.
    ``resample="doubtful"`` asks once, then ``k - 1`` more times only about the keys
    that failed or scored within ``margin`` of their threshold, with a schema built
    for those keys alone. Each sample has its own cache key. With ``shuffle`` (the
    default), sample 0 shows the criteria in the rubric's order and every later sample
    a shuffle seeded by ``seed`` (:func:`~gradeloop.judging._orders.sample_order`), so
    order effects average out; the orders are recorded on the verdict (``orders``).
    Each order's system prompt is byte-identical from draft to draft, so it is cached
    once per order (``k`` prefixes instead of one: see docs/judging.md).

    :meth:`prefer` (and :meth:`aprefer`) answer which of two drafts better meets each
    judge key, ``"first"``, ``"second"`` or ``"tie"``, with the same modes, cache and
    strictness (:mod:`._prefer`); :func:`gradeloop.compare_drafts` asks in both orders.
    """

    def __init__(
        self,
        client: Any = None,
        model: str | None = None,
        max_tokens: int = 2048,
        *,
        cache_ttl: str = "5m",
        structured: Structured = "auto",
        feedback: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        cache: ReplyCache | None = None,
        async_client: Any = None,
        samples: int = 1,
        resample: Resample = "all",
        margin: float = 1,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be an integer >= 1, not {samples!r}")
        if resample not in ("all", "doubtful"):
            raise ValueError(f"resample must be 'all' or 'doubtful', not {resample!r}")
        if not margin >= 0:
            raise ValueError(f"margin must be a number >= 0, not {margin!r}")
        self.samples = samples
        self.shuffle = shuffle
        self.seed = seed
        self.resample: Resample = resample
        self.margin = float(margin)
        if cache_ttl not in _TTLS:
            raise ValueError(f"cache_ttl must be '5m' or '1h', not {cache_ttl!r}")
        if structured not in _MODES:
            raise ValueError(f"structured must be 'auto', 'native' or 'json', not {structured!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        self.client = client if client is not None else make_client()
        self.model = judge_model(model)
        self.max_tokens = max_tokens
        self.cache_ttl = cache_ttl
        self.structured: Structured = structured
        self.feedback = feedback
        self.extra_body = dict(extra_body) if extra_body else None
        self.cache = cache
        self._json_mode = structured == "json"  # this judge's own switch (a prose reply)
        self._forms = FormMemory(self.client, self._form_order, structured)
        self._async = AsyncTwin(self.client, async_client, fan_out=samples)

    def __repr__(self) -> str:
        return (
            f"AnthropicJudge(model={self.model!r}, max_tokens={self.max_tokens}, "
            f"structured={self.structured!r}, mode={self.mode!r})"
        )

    #: The structured-output forms this judge tries in ``"auto"``, in order.
    _form_order: tuple[Form, ...] = ANTHROPIC_FORMS

    @property
    def mode(self) -> Literal["native", "json"]:
        """How the next request is made; ``"auto"`` starts native and may switch once."""
        return "json" if self._in_json() else "native"

    @property
    def form(self) -> Form:
        """The structured-output form the next request is sent in (``"json"``: the
        schema in the system text)."""
        return "json" if self._json_mode else self._forms.current()

    def _in_json(self) -> bool:
        return self._json_mode or self._forms.current() == "json"

    def system_prompt(self, criteria: Sequence[Criterion], sample: int = 0) -> str:
        """The system text the next evaluation of ``criteria`` would send (as sample
        ``sample``, whose criteria order may be shuffled)."""
        spec = wire_spec(self.order(_judged(criteria), sample), feedback=self.feedback)
        return judge_system(spec.criteria, spec.schema_text() if self._in_json() else None)

    def order(self, criteria: Sequence[Criterion], sample: int) -> tuple[Criterion, ...]:
        """``criteria`` in the order sample ``sample`` shows them (the given order when
        ``shuffle`` is off, and always for sample 0)."""
        return sample_order(criteria, sample, seed=self.seed) if self.shuffle else tuple(criteria)

    def _jobs(
        self, criteria: Sequence[Criterion], samples: range
    ) -> list[tuple[Sequence[Criterion], int]]:
        return [(self.order(criteria, i), i) for i in samples]

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """Judge ``draft`` against the judge-filled keys of ``criteria``.

        Code-filled criteria in ``criteria`` are left out of the request. The
        Verdict's ``criteria_met`` holds every judged key; scored keys are met when
        their score (an integer 1-10, never clamped) reaches the criterion's
        threshold. With ``samples`` > 1 the answer is a :class:`SampledVerdict`
        (see the class docstring).
        """
        if self.samples == 1:
            return self._evaluate_once(task, draft, criteria, 0)
        judged = _judged(criteria)
        if self.resample == "all":
            jobs = self._jobs(judged, range(self.samples))
            verdicts = self._parallel(task, draft, jobs)
            return combine(
                judged, verdicts[0], verdicts[1:], requests=self.samples, orders=_orders(jobs)
            )
        first = self._evaluate_once(task, draft, judged, 0)
        subset = _doubtful(judged, first, self.margin)
        if not subset:
            return combine(judged, first, [], requests=1, orders=_orders([(judged, 0)]))
        jobs = self._jobs(subset, range(1, self.samples))
        extra = self._parallel(task, draft, jobs)
        return combine(
            judged, first, extra, requests=self.samples, orders=_orders([(judged, 0), *jobs])
        )

    def _parallel(
        self, task: str, draft: str, jobs: list[tuple[Sequence[Criterion], int]]
    ) -> list[Verdict]:
        """Each (criteria, sample) evaluated in its own thread, results in order."""
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            futures = [
                # each call gets its own copy of the context, so usage meters see it
                pool.submit(contextvars.copy_context().run, self._evaluate_once, task, draft, c, i)
                for c, i in jobs
            ]
            return [f.result() for f in futures]

    def _evaluate_once(
        self, task: str, draft: str, criteria: Sequence[Criterion], sample: int
    ) -> Verdict:
        trace = _Trace()
        flow = self._flow(task, draft, criteria, trace)
        try:
            step = next(flow)
            while True:
                step = flow.send(self._send(replace(step, sample=sample), trace))
        except StopIteration as done:
            verdict: Verdict = done.value
            return verdict
        except JudgeError as exc:
            _annotate(exc, trace)
            raise

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """:meth:`evaluate`, awaiting the request instead of blocking on it."""
        if self.samples == 1:
            return await self._aevaluate_once(task, draft, criteria, 0)
        judged = _judged(criteria)
        if self.resample == "all":
            jobs = self._jobs(judged, range(self.samples))
            verdicts = await asyncio.gather(
                *(self._aevaluate_once(task, draft, c, i) for c, i in jobs)
            )
            return combine(
                judged, verdicts[0], verdicts[1:], requests=self.samples, orders=_orders(jobs)
            )
        first = await self._aevaluate_once(task, draft, judged, 0)
        subset = _doubtful(judged, first, self.margin)
        if not subset:
            return combine(judged, first, [], requests=1, orders=_orders([(judged, 0)]))
        jobs = self._jobs(subset, range(1, self.samples))
        extra = await asyncio.gather(*(self._aevaluate_once(task, draft, c, i) for c, i in jobs))
        return combine(
            judged, first, extra, requests=self.samples, orders=_orders([(judged, 0), *jobs])
        )

    async def _aevaluate_once(
        self, task: str, draft: str, criteria: Sequence[Criterion], sample: int
    ) -> Verdict:
        trace = _Trace()
        flow = self._flow(task, draft, criteria, trace)
        try:
            step = next(flow)
            while True:
                step = flow.send(await self._asend(replace(step, sample=sample), trace))
        except StopIteration as done:
            verdict: Verdict = done.value
            return verdict
        except JudgeError as exc:
            _annotate(exc, trace)
            raise

    def prefer(self, task: str, first: str, second: str, criteria: Sequence[Criterion]) -> Choices:
        """Which draft better meets each judge-filled key of ``criteria``: ``{key:
        "first" | "second" | "tie"}`` (with ``.reasoning``), one request in this order.

        :func:`gradeloop.compare_drafts` asks twice, the drafts swapped, and counts a
        key whose answers disagree as a tie. An invalid reply gets one repair request;
        failures raise :class:`~gradeloop.errors.JudgeError`, as :meth:`evaluate` does.
        """
        return _prefer(self, task, first, second, criteria)

    async def aprefer(
        self, task: str, first: str, second: str, criteria: Sequence[Criterion]
    ) -> Choices:
        """:meth:`prefer`, awaiting the request instead of blocking on it."""
        return await _aprefer(self, task, first, second, criteria)

    async def aclose(self) -> None:
        """Close the async client built for the running event loop (if one was)."""
        await self._async.aclose()

    # -- the flow: which requests, and how each reply is read ------------------------

    def _flow(self, task: str, draft: str, criteria: Sequence[Criterion], trace: _Trace) -> _Flow:
        spec = wire_spec(_judged(criteria), feedback=self.feedback)
        user = {"role": "user", "content": judge_user(task, draft)}
        if not self._in_json():
            system = judge_system(spec.criteria)
            answer = yield _Step("evaluate", system, [user], spec.output_config(), spec)
            if answer.form == "json":  # the server refused output_config: stepped down
                return (yield from self._json_flow(spec, user, trace, answer))
            verdict = self._read_native(spec, answer, trace)
            if verdict is not None:
                return verdict
            self._json_mode = True
        return (yield from self._json_flow(spec, user, trace))

    def _read_native(self, spec: WireSpec, answer: _Answer, trace: _Trace) -> Verdict | None:
        try:
            verdict = _read(spec, answer)
        except WireError as err:
            note = prose_note(self.structured, answer, "output_config")
            if note is not None:
                self._settle("evaluate", answer, trace, note)
                return None
            self._settle("evaluate", answer, trace, f"invalid verdict: {err}")
            raise JudgeError(
                f"the judge's reply does not match the rubric's schema: {err}. If the server "
                "does not support structured output, use structured='json'",
                reason="invalid",
            ) from None
        self._settle("evaluate", answer, trace)
        return verdict

    def _json_flow(
        self, spec: WireSpec, user: dict[str, str], trace: _Trace, answer: _Answer | None = None
    ) -> _Flow:
        """JSON mode: the schema in the system text, one repair. ``answer`` is the reply
        to a request already sent that way (a structured form the server refused)."""
        system = judge_system(spec.criteria, spec.schema_text())
        if answer is None:
            answer = yield _Step("evaluate", system, [user], None, spec)
        try:
            verdict = _read(spec, answer)
        except WireError as err:
            self._settle("evaluate", answer, trace, f"invalid verdict: {err}")
            return (yield from self._repair(spec, system, user, answer, err, trace, native=False))
        self._settle("evaluate", answer, trace)
        return verdict

    def _repair(
        self,
        spec: WireSpec,
        system: str,
        user: dict[str, str],
        answer: _Answer,
        first_error: WireError,
        trace: _Trace,
        *,
        native: bool,
    ) -> _Flow:
        """The one repair request after an invalid reply (with the schema again when
        ``native``); a repair that is invalid too is a JudgeError."""
        repaired = yield repair_step(spec, system, user, answer, first_error, native=native)
        try:
            verdict = _read(spec, repaired)
        except WireError as err:
            self._settle("repair", repaired, trace, f"invalid verdict: {err}")
            raise JudgeError(
                f"the judge's reply is still invalid after one repair attempt: {err} "
                f"(first reply: {first_error})",
                reason="invalid",
            ) from None
        self._settle("repair", repaired, trace)
        return verdict

    # -- sending one request ----------------------------------------------------------

    def _shape(self, step: _Step, form: Form) -> tuple[str, dict[str, Any] | None]:
        """The system text and ``output_config`` of ``step`` sent in ``form``: in JSON
        mode the schema goes in the system text, and no structured field is sent."""
        if step.output_config is None:
            return step.system, None
        if form == "json":  # the flow's own prompt, with the schema in it
            write = prefer_system if step.kind == "prefer" else judge_system
            return write(step.spec.criteria, step.spec.schema_text()), None
        return step.system, step.output_config

    def _request(self, step: _Step, form: Form | None = None) -> dict[str, Any]:
        system, output_config = self._shape(step, form or self.form)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": [
                {
                    "type": "text",
                    "text": system,
                    "cache_control": {"type": "ephemeral", "ttl": self.cache_ttl},
                }
            ],
            "messages": step.messages,
        }
        if output_config is not None:
            request["output_config"] = output_config
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        return request

    def _send(self, step: _Step, trace: _Trace) -> _Answer:
        form = self.form
        request = self._request(step, form)
        key, hit = self._lookup(step, request, form)
        if hit is not None:
            return hit
        import anthropic  # only here: a replayed (cached) reply needs no SDK

        started = time.perf_counter()
        reply: Any
        try:
            reply = self._call(request)
        except anthropic.APIError as exc:
            if self._refused(step, form, exc, started, trace):
                return self._send(step, trace)  # in the next form (a few at most)
            raise self._api_failure(step.kind, self._describe(exc), started, trace) from exc
        except UNREADABLE as exc:  # the server answered, but not with an API response
            raise self._unreadable(step.kind, exc, started, trace) from exc
        answer = self._answer(step.kind, reply, started, key, trace)
        answer.form = form
        return answer

    def _call(self, request: dict[str, Any]) -> Any:
        """The reply to ``request`` from the sync client."""
        client = paced(self.client)  # a caller's client, as it is, plus a batch's pacing
        if raw_client(client):  # the SDK's own: its HTTP path, our reading
            return post_message(client, request)
        return client.messages.parse(**request)

    async def _asend(self, step: _Step, trace: _Trace) -> _Answer:
        form = self.form
        request = self._request(step, form)
        key, hit = self._lookup(step, request, form)
        if hit is not None:
            return hit
        import anthropic  # only here: a replayed (cached) reply needs no SDK

        started = time.perf_counter()
        aclient = self._async.client()
        reply: Any
        try:
            if aclient is None:  # a client gradeloop did not build: as is, off the loop
                reply = await in_thread(self._call, request)
            elif raw_client(aclient):
                reply = await apost_message(paced(aclient), request)
            else:
                reply = await aclient.messages.parse(**request)
        except anthropic.APIError as exc:
            if self._refused(step, form, exc, started, trace):
                return await self._asend(step, trace)
            raise self._api_failure(step.kind, self._describe(exc), started, trace) from exc
        except UNREADABLE as exc:
            raise self._unreadable(step.kind, exc, started, trace) from exc
        answer = self._answer(step.kind, reply, started, key, trace)
        answer.form = form
        return answer

    def _lookup(
        self, step: _Step, request: dict[str, Any], form: Form | None = None
    ) -> tuple[str | None, _Answer | None]:
        """The request's cache key, and the cached answer if a valid one is stored."""
        if self.cache is None:
            return None, None
        key = request_digest(request, sample=step.sample)
        text = self.cache.get(key)
        if text is None:
            return key, None
        try:
            step.spec.parse_text(text)
        except WireError:
            # stored by a laxer gradeloop, or damaged: never reuse it, ask again
            self.cache.discard(key)
            return key, None
        return key, _Answer(None, text, None, time.perf_counter(), key, cached=True, form=form)

    def _describe(self, exc: BaseException) -> str:
        return describe_api_error(exc, api=self._api_name)

    def _server(self) -> str:
        """How the server is named in the line that says it refused a form."""
        base = getattr(self.client, "base_url", None)
        return f"the server at {base}" if base else "the server"

    def _refused(
        self, step: _Step, form: Form, exc: BaseException, started: float, trace: _Trace
    ) -> bool:
        """Whether ``exc`` refused ``form`` and the judge stepped down (record the call,
        then send ``step`` again); a refusal is never a verdict, nor a repair."""
        if step.output_config is None or form == "json" or not refuses_structure(exc):
            return False
        if not self._forms.step_down(form, server_message(exc), self._server()):
            return False
        detail = f"the server refused the {form} form: {self._describe(exc)}"
        trace.records.append(self._record(step.kind, self.model, started, error=detail))
        return True

    def _api_failure(
        self, kind: CallKind, detail: str, started: float, trace: _Trace
    ) -> JudgeError:
        """A failed API call (``detail`` names it) recorded, as the JudgeError to raise."""
        trace.records.append(self._record(kind, self.model, started, error=detail))
        return JudgeError(
            f"the judge's API call failed after the client's retries: {detail}",
            reason="api_error",
        )

    _api_name = "Messages API"  # what a subclass's server speaks, for error messages

    def _unreadable(
        self, kind: CallKind, exc: BaseException, started: float, trace: _Trace
    ) -> JudgeError:
        failure = unreadable(exc, api=self._api_name)
        trace.records.append(self._record(kind, self.model, started, error=str(failure)))
        return JudgeError(f"the judge gave no verdict: {failure}", reason="api_error")

    def _answer(
        self, kind: CallKind, reply: Any, started: float, key: str | None, trace: _Trace
    ) -> _Answer:
        parsed = getattr(reply, "parsed_output", None)
        finished = getattr(reply, "stop_reason", None) in FINISHED
        # With text in the reply, the text is read: a parse made on the client side may
        # have been lax (pydantic keeps a duplicated key's last value, for one).
        if parsed is not None and finished and _reply_text(reply) is None:
            return _Answer(reply, None, parsed, started, key)
        try:
            text = first_text(reply)
        except NotAnAnswer as exc:
            trace.records.append(self._record(kind, self.model, started, reply, error=str(exc)))
            raise JudgeError(f"the judge gave no verdict: {exc}", reason=exc.reason) from exc
        return _Answer(reply, text, None, started, key)

    def _settle(
        self, kind: CallKind, answer: _Answer, trace: _Trace, error: str | None = None
    ) -> None:
        record = self._record(
            kind,
            self.model,
            answer.started,
            answer.reply,
            error=error,
            cached=answer.cached,
            batch=answer.batch,
        )
        trace.records.append(record)
        if error is None and answer.key is not None and not answer.cached:
            assert self.cache is not None
            text = answer.text if answer.text is not None else _reply_text(answer.reply)
            if text is not None:
                self.cache.put(answer.key, text, model=self.model)


def _orders(jobs: Sequence[tuple[Sequence[Criterion], int]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(c.key for c in criteria) for criteria, _ in jobs)


def _doubtful(judged: Sequence[Criterion], first: Verdict, margin: float) -> list[Criterion]:
    keys = set(doubtful_keys(judged, first, margin))
    return [c for c in judged if c.key in keys]


def _read(spec: WireSpec, answer: _Answer) -> Verdict:
    if answer.text is None:
        return spec.parse_object(answer.parsed)
    return spec.parse_text(answer.text)


def _reply_text(reply: Any) -> str | None:
    try:
        return first_text(reply)
    except NotAnAnswer:
        return None
