"""ModelJudge: the provider-neutral judge, over one API's adapter.

What makes a judge is here, once: its settings, the structured-output form it sends in
(``structured``, stepped down per client by :class:`~._forms.FormMemory`), repeated
judging (``samples``, ``resample``, ``margin``, ``shuffle``), the verdict cache, the
call records, and the drivers. Which requests are made and how replies are read are
generators (:mod:`._evaluation`, :mod:`._prefer`, :meth:`ModelJudge.ask`'s one step),
sent through :mod:`._exchange`; so ``evaluate`` and ``aevaluate``, ``prefer`` and
``aprefer`` are thin drivers side by side, differing only in how they wait.

:class:`~gradeloop.AnthropicJudge` and :class:`~gradeloop.OpenAICompatibleJudge` are
this class with the Messages-API and the chat-completions adapter; a new provider is
an adapter and a few lines (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, Protocol, TypeVar

from ..errors import JudgeError
from ..grading._rubric import Criterion
from ..grading._samples import SampledVerdict, combine, doubtful_keys
from ..grading._verdict import Verdict
from ..judging._choices import Choices
from ..judging._orders import sample_order
from ._adapter import Adapter, Ask
from ._evaluation import evaluation
from ._exchange import adrive, drive, settle, through
from ._forms import FormMemory
from ._prefer import preference
from ._prompts import judge_system, with_schema
from ._steps import _annotate, _Answer, _judged, _Step, _Trace
from ._usage import Metered
from ._wire import wire_spec

__all__ = ["ModelJudge", "ReplyCache", "Resample", "SampledVerdict", "Structured", "check_settings"]

Structured = Literal["auto", "native", "json"]
Resample = Literal["all", "doubtful"]
_TTLS = ("5m", "1h")
_MODES = ("auto", "native", "json")
T = TypeVar("T")
_Jobs = list[tuple[Sequence[Criterion], int]]


class ReplyCache(Protocol):
    """What the judge needs of a verdict cache (:class:`~gradeloop.JudgeCache` has it)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str, *, model: str) -> None: ...

    def discard(self, key: str) -> None: ...


def check_settings(
    *,
    max_tokens: int = 2048,
    cache_ttl: str = "5m",
    structured: str = "auto",
    samples: int = 1,
    resample: str = "all",
    margin: float = 1,
) -> None:
    """ValueError naming the first setting a judge cannot take (a judge checks them
    before it builds a client from the environment)."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be an integer >= 1, not {samples!r}")
    if resample not in ("all", "doubtful"):
        raise ValueError(f"resample must be 'all' or 'doubtful', not {resample!r}")
    if not margin >= 0:
        raise ValueError(f"margin must be a number >= 0, not {margin!r}")
    if cache_ttl not in _TTLS:
        raise ValueError(f"cache_ttl must be '5m' or '1h', not {cache_ttl!r}")
    if structured not in _MODES:
        raise ValueError(f"structured must be 'auto', 'native' or 'json', not {structured!r}")
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")


class ModelJudge(Metered):
    """A judge on one model API, given as its ``adapter`` (:class:`~._adapter.Adapter`).

    The settings are the ones :class:`~gradeloop.AnthropicJudge` documents; every
    provider's judge has them and behaves the same way with them.
    """

    def __init__(
        self,
        adapter: Adapter,
        model: str,
        max_tokens: int = 2048,
        *,
        cache_ttl: str = "5m",
        structured: Structured = "auto",
        feedback: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        cache: ReplyCache | None = None,
        samples: int = 1,
        resample: Resample = "all",
        margin: float = 1,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__()
        check_settings(
            max_tokens=max_tokens,
            cache_ttl=cache_ttl,
            structured=structured,
            samples=samples,
            resample=resample,
            margin=margin,
        )
        self.adapter = adapter
        self.client = adapter.client
        self.model = model
        self.max_tokens = max_tokens
        self.cache_ttl = cache_ttl
        self.structured: Structured = structured
        self.feedback = feedback
        self.extra_body = dict(extra_body) if extra_body else None
        self.cache = cache
        self.samples = samples
        self.resample: Resample = resample
        self.margin = float(margin)
        self.shuffle = shuffle
        self.seed = seed
        self._json_mode = structured == "json"  # this judge's own switch (a prose reply)
        self._forms = FormMemory(self.client, adapter.forms, structured)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, max_tokens={self.max_tokens}, "
            f"structured={self.structured!r}, mode={self.mode!r})"
        )

    @property
    def gen_ai_system(self) -> str:
        """The provider its OpenTelemetry spans name."""
        return self.adapter.gen_ai_system

    @property
    def mode(self) -> Literal["native", "json"]:
        """How the next request is made; ``"auto"`` starts native and may switch once."""
        return "json" if self._in_json() else "native"

    @property
    def form(self) -> str:
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

    # -- evaluate: the samples' plan, then one flow per sample --------------------------

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """Judge ``draft`` against the judge-filled keys of ``criteria``.

        Code-filled criteria in ``criteria`` are left out of the request. The
        Verdict's ``criteria_met`` holds every judged key; scored keys are met when
        their score (an integer 1-10, never clamped) reaches the criterion's
        threshold. With ``samples`` > 1 the answer is a :class:`SampledVerdict`.
        """
        return drive(self._plan(criteria), lambda jobs: self._run_jobs(task, draft, jobs))

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        """:meth:`evaluate`, awaiting the requests instead of blocking on them."""
        return await adrive(self._plan(criteria), lambda jobs: self._arun_jobs(task, draft, jobs))

    def _plan(self, criteria: Sequence[Criterion]) -> Generator[_Jobs, list[Verdict], Verdict]:
        """Which samples to ask, in rounds: each round's (criteria, sample) jobs are
        yielded and their verdicts sent back; the verdicts combined is the answer."""
        if self.samples == 1:
            (verdict,) = yield [(criteria, 0)]
            return verdict
        judged = _judged(criteria)
        if self.resample == "all":
            jobs = self._jobs(judged, range(self.samples))
            verdicts = yield jobs
            return combine(
                judged, verdicts[0], verdicts[1:], requests=self.samples, orders=_orders(jobs)
            )
        (first,) = yield [(judged, 0)]
        keys = set(doubtful_keys(judged, first, self.margin))
        subset = [c for c in judged if c.key in keys]
        if not subset:
            return combine(judged, first, [], requests=1, orders=_orders([(judged, 0)]))
        jobs = self._jobs(subset, range(1, self.samples))
        extra = yield jobs
        return combine(
            judged, first, extra, requests=self.samples, orders=_orders([(judged, 0), *jobs])
        )

    def _jobs(self, criteria: Sequence[Criterion], samples: range) -> _Jobs:
        return [(self.order(criteria, i), i) for i in samples]

    def _run_jobs(self, task: str, draft: str, jobs: _Jobs) -> list[Verdict]:
        """Each job's verdict, in order: one in this thread, several in threads of their own."""
        if len(jobs) == 1:
            (criteria, sample), trace = jobs[0], _Trace()
            return [self._run(self._flow(task, draft, criteria, trace), trace, sample)]
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            futures = [
                # each call gets its own copy of the context, so usage meters see it
                pool.submit(contextvars.copy_context().run, self._run_jobs, task, draft, [job])
                for job in jobs
            ]
            return [f.result()[0] for f in futures]

    async def _arun_jobs(self, task: str, draft: str, jobs: _Jobs) -> list[Verdict]:
        """Each job's verdict, in order, all awaited at once."""

        async def one(criteria: Sequence[Criterion], sample: int) -> Verdict:
            trace = _Trace()
            return await self._arun(self._flow(task, draft, criteria, trace), trace, sample)

        return list(await asyncio.gather(*(one(c, i) for c, i in jobs)))

    # -- the drivers of one flow ------------------------------------------------------

    def _run(self, flow: Generator[_Step, _Answer, T], trace: _Trace, sample: int = 0) -> T:
        try:
            return drive(through(self, flow, trace, sample), self.adapter.send)
        except JudgeError as exc:
            _annotate(exc, trace)
            raise

    async def _arun(self, flow: Generator[_Step, _Answer, T], trace: _Trace, sample: int = 0) -> T:
        try:
            return await adrive(through(self, flow, trace, sample), self.adapter.asend)
        except JudgeError as exc:
            _annotate(exc, trace)
            raise

    def _flow(
        self, task: str, draft: str, criteria: Sequence[Criterion], trace: _Trace
    ) -> Generator[_Step, _Answer, Verdict]:
        return evaluation(self, task, draft, criteria, trace)

    def _request(self, step: _Step, form: str | None = None) -> dict[str, Any]:
        """The request ``step`` is sent as, in ``form`` (the judge's current one if None)."""
        form = form or self.form
        system, schema = step.shaped(form)
        ask = Ask(
            self.model,
            step.max_tokens or self.max_tokens,
            system,
            step.messages,
            schema,
            step.schema_name,
            self.extra_body,
            None if step.one_off else self.cache_ttl,
        )
        return self.adapter.request(ask, form)

    # -- other questions on the same flow ---------------------------------------------

    def prefer(self, task: str, first: str, second: str, criteria: Sequence[Criterion]) -> Choices:
        """Which draft better meets each judge-filled key of ``criteria``: ``{key:
        "first" | "second" | "tie"}`` (with ``.reasoning``), one request in this order.

        :func:`gradeloop.judging.compare_drafts` asks twice, the drafts swapped, and counts a
        key whose answers disagree as a tie. An invalid reply gets one repair request;
        failures raise :class:`~gradeloop.errors.JudgeError`, as :meth:`evaluate` does.
        """
        trace = _Trace()
        return self._run(preference(self, task, first, second, criteria, trace), trace)

    async def aprefer(
        self, task: str, first: str, second: str, criteria: Sequence[Criterion]
    ) -> Choices:
        """:meth:`prefer`, awaiting the request instead of blocking on it."""
        trace = _Trace()
        return await self._arun(preference(self, task, first, second, criteria, trace), trace)

    def ask(
        self,
        system: str,
        user: str,
        schema: Mapping[str, Any],
        read: Callable[[str], T],
        *,
        name: str = "answer",
        max_tokens: int = 4096,
    ) -> T:
        """One structured request to this judge's model, for gradeloop's own tools
        (``propose``'s model step, ``align``'s rewrites): ``schema`` enforced in the
        form the server takes (stepping down on a refusal, as :meth:`evaluate` does;
        in JSON mode the schema goes in the system text), the reply's text read by
        ``read`` (which raises :class:`~gradeloop.errors.JudgeError` for an invalid
        one). The call is recorded (``kind="generate"``); never cached, never repaired.
        A refusal, a cut-off reply or an API error is a JudgeError."""
        spec = _Asked(dict(schema), read)
        step = _Step(
            "generate",
            system,
            [{"role": "user", "content": user}],
            spec.schema,
            spec,
            write=lambda _criteria, schema_json: with_schema(system, schema_json),
            schema_name=name,
            max_tokens=max_tokens,
            one_off=True,
        )
        trace = _Trace()
        return self._run(_answered(self, step, read, trace), trace)

    async def aclose(self) -> None:
        """Close the async client built for the running event loop (if one was)."""
        await self.adapter.aclose()


class _Asked:
    """The reader of :meth:`ModelJudge.ask`'s reply (a cached reply is never used)."""

    criteria: tuple[Criterion, ...] = ()

    def __init__(self, schema: dict[str, Any], read: Callable[[str], Any]) -> None:
        self.schema = schema
        self.read = read

    def schema_text(self) -> str:
        return json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))

    def parse_text(self, text: str) -> object:
        return self.read(text)


def _answered(
    judge: ModelJudge, step: _Step, read: Callable[[str], T], trace: _Trace
) -> Generator[_Step, _Answer, T]:
    answer = yield step
    text = answer.text
    if text is None:  # a client that parsed the reply itself: its value, as JSON
        text = json.dumps(answer.parsed, default=str)
    try:
        value = read(text)
    except JudgeError as exc:
        settle(judge, "generate", answer, trace, str(exc))
        raise
    settle(judge, "generate", answer, trace)
    return value


def _orders(jobs: Sequence[tuple[Sequence[Criterion], int]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(c.key for c in criteria) for criteria, _ in jobs)
