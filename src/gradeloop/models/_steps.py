"""The pieces every judge flow shares: a request asked for, a reply, the calls made.

The judge's flows (an evaluation in :mod:`._evaluation`, a pairwise comparison in
:mod:`._prefer`, a one-off structured request in :mod:`._model_judge`) are generators
that yield a :class:`_Step` per request and are sent an :class:`_Answer` back;
:mod:`._exchange` turns each step into the provider's request and its reply into the
answer, so each flow reads replies the same way, blocking or awaited, on any provider.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import JudgeError
from ..grading._rubric import Criterion
from ._adapter import Adapter
from ._forms import FormMemory
from ._prompts import repair_request
from ._usage import CallKind, CallRecord, Usage
from ._wire import looks_like_json

__all__ = [
    "FlowJudge",
    "Reader",
    "_Answer",
    "_Step",
    "_Trace",
    "_annotate",
    "_judged",
    "_shown",
    "prose_note",
    "repair_step",
]


class Reader(Protocol):
    """How a step's reply is read (a cached reply is checked with it before reuse),
    and the criteria and schema a prompt in JSON mode shows."""

    @property
    def criteria(self) -> Sequence[Criterion]: ...

    def schema_text(self) -> str: ...

    def parse_text(self, text: str) -> object: ...


class FlowJudge(Protocol):
    """What the flows and the exchange read and change on a judge
    (:class:`~._model_judge.ModelJudge` has it)."""

    adapter: Adapter
    client: Any
    model: str
    cache: Any
    feedback: bool
    _json_mode: bool
    _forms: FormMemory

    @property
    def structured(self) -> str: ...

    @property
    def form(self) -> str: ...

    def _in_json(self) -> bool: ...

    def _request(self, step: _Step, form: str | None = None) -> dict[str, Any]: ...

    def _record(
        self,
        kind: CallKind,
        model: str,
        started: float,
        reply: Any = None,
        error: str | None = None,
        *,
        cached: bool = False,
        batch: bool = False,
    ) -> CallRecord: ...


@dataclass
class _Answer:
    """One reply, with its text (or the client's own parsed value) and start time."""

    reply: Any
    text: str | None
    parsed: Any
    started: float
    key: str | None = None  # the cache key of the request, when a cache is in use
    also: tuple[str, ...] = ()  # more keys to file a valid reply under (after a step down)
    cached: bool = False
    batch: bool = False  # a Message Batches result: priced at the batch discount
    form: str | None = None  # the structured-output form the request was sent in


#: Writes a flow's system text for JSON mode: ``(criteria, schema_json) -> text``.
Writer = Callable[[Sequence[Criterion], str], str]


@dataclass(frozen=True)
class _Step:
    """One request the flow asks for: what for, the prompt, and how to read the reply.

    ``schema`` is the JSON Schema a structured form carries (None: the schema is in
    the prompt already, or there is none); when the request goes in JSON mode instead,
    ``write`` gives the system text with the schema in it.
    """

    kind: CallKind
    system: str
    messages: list[dict[str, str]]
    schema: dict[str, Any] | None
    spec: Reader
    write: Writer | None = None
    sample: int = 0  # which sample of the same request (0: the plain one); keys the cache
    schema_name: str = "judge_verdict"
    max_tokens: int | None = None  # None: the judge's own
    # a one-off request (``ask``): never answered from the verdict cache, and its
    # system text is not marked for prompt caching (nothing repeats it)
    one_off: bool = False

    def shaped(self, form: str) -> tuple[str, dict[str, Any] | None]:
        """The system text and the schema to send in ``form``: in JSON mode the schema
        goes in the system text, and no structured field is sent."""
        if self.schema is None:
            return self.system, None
        if form == "json":
            assert self.write is not None, "a step with a schema says how to write JSON mode"
            return self.write(self.spec.criteria, self.spec.schema_text()), None
        return self.system, self.schema


@dataclass
class _Trace:
    """The calls of one evaluation (so a failure reports its own, not a neighbour's)."""

    records: list[CallRecord] = field(default_factory=list)

    @property
    def usage(self) -> Usage:
        return sum((r.usage for r in self.records), Usage())


def _annotate(exc: JudgeError, trace: _Trace) -> None:
    exc.attempts = len(trace.records)
    exc.usage = trace.usage


def _judged(criteria: Sequence[Criterion]) -> tuple[Criterion, ...]:
    judged = tuple(c for c in criteria if c.source == "judge")
    if not judged:
        raise ValueError("no judge-filled criteria to evaluate; every key given has a checker")
    return judged


def _shown(parsed: Any, limit: int = 4000) -> str:
    """A client's parsed value as text for the repair request (bounded, never raising:
    a hostile value may be nested too deeply, or hold an integer too long, to print)."""
    try:
        text = repr(parsed)
    except (ValueError, RecursionError):
        return "(a value that cannot be shown)"
    return text if len(text) <= limit else text[:limit] + "..."


def repair_step(step: _Step, answer: _Answer, first_error: Exception, *, native: bool) -> _Step:
    """The one repair request after an invalid reply to ``step``: the bad reply shown
    back with what was wrong (and the schema again when ``native``)."""
    bad = answer.text if answer.text is not None else _shown(answer.parsed)
    messages = [
        *step.messages[:1],
        {"role": "assistant", "content": bad},
        {"role": "user", "content": repair_request(str(first_error))},
    ]
    schema = step.schema if native else None
    return _Step("repair", step.system, messages, schema, step.spec, step.write)


def prose_note(structured: str, answer: _Answer, ignored: str) -> str | None:
    """Why to switch to JSON mode, when an ``auto`` judge got prose where structured
    output was asked for (the sign of a server that ignores ``ignored``, the field that
    carried the schema); None when the reply is not that (an invalid reply stays one)."""
    text = answer.text
    if structured != "auto" or text is None or looks_like_json(text):
        return None
    return f"prose instead of JSON: the server seems to ignore {ignored}; switching to JSON mode"
