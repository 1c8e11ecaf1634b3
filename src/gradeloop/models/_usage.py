"""Token usage and one record per model call, so callers can see what a run cost.

Both :class:`~gradeloop.AnthropicGenerator` and :class:`~gradeloop.AnthropicJudge`
append a :class:`CallRecord` to their ``.calls`` list for every request they make,
failed ones included; ``.usage`` is the sum.

A caller that wants the figures of its own calls opens :func:`metered`: every record
made in the same thread (or asyncio task) while the block is open is also handed to
that block's :class:`Meter`. A model shared by many threads therefore attributes each
call to the caller that made it; diffing the shared ``.calls`` list would count the
other threads' calls too. Custom models join in by calling :func:`record_call`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..errors._redact import scrub_error
from ..grading._calls import install_meter
from ..integrations import telemetry
from ._prices import cost_usd

__all__ = ["CallKind", "CallRecord", "Meter", "Metered", "Usage", "metered", "record_call"]

CallKind = Literal["generate", "evaluate", "repair", "prefer"]


@dataclass(frozen=True)
class Usage:
    """Token counts of one call, or of several added together.

    The three input figures are disjoint: ``input_tokens`` is what was neither
    written to nor read from the prompt cache. Their sum is :attr:`total_input`.

    ``cost_usd`` is what the tokens cost in US dollars, from the price table (see
    ``gradeloop.models._prices``); None when a model's price is unknown, and a sum
    with an unknown part is unknown too: never a guess. No tokens cost 0. The cost
    is derived, so two usages with the same counts compare equal.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.cost_usd is None and not self.total_input and not self.output_tokens:
            object.__setattr__(self, "cost_usd", 0.0)

    @classmethod
    def of(cls, reply: Any, *, model: str | None = None, batch: bool = False) -> Usage:
        """The usage block of an SDK reply (or a fake); zeros where it is absent.

        The cost is priced for the reply's own ``model`` (else ``model``), with the
        Message Batches discount when ``batch`` is True.
        """
        raw = getattr(reply, "usage", None)
        if raw is None:
            return cls()
        return cls.from_block(raw, model=getattr(reply, "model", None) or model, batch=batch)

    @classmethod
    def from_block(cls, raw: Any, *, model: str | None, batch: bool = False) -> Usage:
        """A usage block (a dict or an SDK object) priced for ``model``."""
        return cls(
            input_tokens=_count(raw, "input_tokens"),
            output_tokens=_count(raw, "output_tokens"),
            cache_creation_input_tokens=_count(raw, "cache_creation_input_tokens"),
            cache_read_input_tokens=_count(raw, "cache_read_input_tokens"),
            cost_usd=cost_usd(model, raw, batch=batch),
        )

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        """A usage back from its :meth:`to_dict` form (as stored in a history or a state).

        Counts that are not whole numbers read as 0; ``cost_usd`` keeps its value, and
        a missing or non-numeric cost is unknown (None), never $0 - except for no
        tokens at all, which cost 0 as always.
        """
        if not isinstance(data, Mapping):
            return cls()
        cost = data.get("cost_usd")
        if not isinstance(cost, int | float) or isinstance(cost, bool):
            cost = None
        return cls(
            input_tokens=_count(data, "input_tokens"),
            output_tokens=_count(data, "output_tokens"),
            cache_creation_input_tokens=_count(data, "cache_creation_input_tokens"),
            cache_read_input_tokens=_count(data, "cache_read_input_tokens"),
            cost_usd=None if cost is None else float(cost),
        )

    @property
    def total_input(self) -> int:
        """Every input token of the request: uncached + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        cost = (
            None
            if self.cost_usd is None or other.cost_usd is None
            else self.cost_usd + other.cost_usd
        )
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost,
        )

    def __radd__(self, other: object) -> Usage:
        # Lets the built-in sum() start from 0.
        if other == 0:
            return self
        return NotImplemented

    def to_dict(self) -> dict[str, Any]:
        """The four counts, ``total_input`` and ``cost_usd`` (None if unknown), JSON-ready."""
        out = asdict(self)
        out["total_input"] = self.total_input
        out["cost_usd"] = None if self.cost_usd is None else round(self.cost_usd, 8)
        return out


def _count(raw: Any, name: str) -> int:
    value = raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)
    # Servers that do not cache send null (or nothing) for the cache figures.
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class CallRecord:
    """One request to the model: what it was for, what it cost, how it ended.

    ``kind`` is ``"generate"``, ``"evaluate"``, ``"prefer"`` (one order of a
    pairwise comparison) or ``"repair"`` (the judge's one retry after an invalid
    JSON reply). ``ok`` is False when the call raised or
    its reply was unusable; ``error`` then says why. ``cached`` is True when no
    request was sent because the verdict cache held the reply (no tokens spent);
    ``batch`` when the reply came from a Message Batch (priced at its discount).
    """

    kind: CallKind
    model: str
    stop_reason: str | None
    usage: Usage
    latency_ms: float
    ok: bool = True
    error: str | None = None
    cached: bool = False
    batch: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the record."""
        out = asdict(self)
        out["usage"] = self.usage.to_dict()
        return out


@dataclass
class Meter:
    """The calls made inside one :func:`metered` block, by the thread or task that opened it."""

    records: list[CallRecord] = field(default_factory=list)

    @property
    def usage(self) -> Usage:
        """The usage of the calls seen so far, added up."""
        return sum((r.usage for r in self.records), Usage())

    @property
    def calls(self) -> int:
        """How many calls were seen (failed ones included)."""
        return len(self.records)


# The meters open in this context, outermost first. A ContextVar is per thread, and
# each asyncio task (and asyncio.to_thread) starts from a copy of its creator's, so
# a call lands in the meters of whoever is waiting for it, never a neighbour's.
_METERS: ContextVar[tuple[Meter, ...]] = ContextVar("gradeloop_meters", default=())


@contextmanager
def metered() -> Iterator[Meter]:
    """Collect the :class:`CallRecord` of every model call made inside the block.

    Blocks nest: a call is seen by every open meter of the current thread or task.
    """
    meter = Meter()
    token = _METERS.set((*_METERS.get(), meter))
    try:
        yield meter
    finally:
        _METERS.reset(token)


def record_call(record: CallRecord) -> None:
    """Hand ``record`` to the meters open in this thread or task (for custom models)."""
    for meter in _METERS.get():
        meter.records.append(record)


class Metered:
    """Base for the model classes: keeps a :class:`CallRecord` per request."""

    def __init__(self) -> None:
        self.calls: list[CallRecord] = []

    @property
    def usage(self) -> Usage:
        """The usage of every call so far, added up."""
        return sum((c.usage for c in self.calls), Usage())

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
    ) -> CallRecord:
        record = CallRecord(
            kind=kind,
            model=str(getattr(reply, "model", None) or model),
            stop_reason=getattr(reply, "stop_reason", None),
            usage=Usage.of(reply, model=model, batch=batch),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            ok=error is None,
            # a server's message can quote the credential it refused: scrubbed before
            # the record reaches .calls, the history or a span
            error=None if error is None else scrub_error(error),
            cached=cached,
            batch=batch,
        )
        self.calls.append(record)
        record_call(record)
        telemetry.model_call(self, record, started, reply)
        return record


# Lets grade() (in the grading core, below this tier) attach the judge's calls to
# the Evaluation it returns.
install_meter(metered)
