"""The Message Batches endpoints of the test emulator (see tests/support/emulator.py).

* ``POST /v1/messages/batches`` checks every request (``custom_id`` pattern and
  uniqueness, the params as ``/v1/messages`` would) and decides each one's outcome
  at once, with :attr:`BatchDesk.outcome` ``(custom_id, params) -> item``: a Message
  (succeeded; the emulator's queue/responder by default), or the strings
  ``"errored"``, ``"expired"``, ``"canceled"``.
* ``GET /v1/messages/batches/{id}`` reports ``in_progress`` with every request
  ``processing`` for the first :attr:`BatchDesk.polls_to_end` retrieves, then
  ``ended`` with the counts and a ``results_url``.
* ``GET .../{id}/results`` streams one JSON line per request in a shuffled order
  (the order is not the request order, as the real API warns), only once ended.
  :attr:`BatchDesk.tamper` changes the lines first (a test's hostile stream).
* ``POST .../{id}/cancel`` marks the requests still processing ``canceled``.
"""

from __future__ import annotations

import datetime
import json
import random
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.emulator import Emulator

__all__ = ["BatchDesk"]

_CUSTOM_ID = re.compile(r"\A[a-zA-Z0-9_-]{1,64}\Z")
_ROUTE = re.compile(r"\A/v1/messages/batches(?:/([^/?]+))?(?:/(results|cancel))?(?:\?.*)?\Z")
_OUTCOMES = ("succeeded", "errored", "expired", "canceled")


@dataclass
class _Batch:
    id: str
    created: datetime.datetime
    results: dict[str, dict[str, Any]]  # custom_id -> the result object
    retrieves: int = 0
    canceled: bool = False
    ended_at: datetime.datetime | None = None
    order: list[str] = field(default_factory=list)


class BatchDesk:
    """The emulator's batches; tests reach it as ``emulator.batches``."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.polls_to_end = 1
        self.outcome: Any = None  # (custom_id, params) -> Message | outcome string
        self.prefix = ""  # in batch ids: two emulators of one test give different ids
        self.created: list[dict[str, Any]] = []  # every create body, in order
        # (lines) -> lines: what a results stream carries, changed by a test (a line
        # repeated, garbled, or for an id no request had); None: as they are
        self.tamper: Any = None
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def handles(self, path: str) -> bool:
        return _ROUTE.match(path) is not None

    # -- the routes ------------------------------------------------------------------

    def post(self, path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        match = _ROUTE.match(path)
        assert match is not None
        batch_id, action = match.groups()
        if batch_id is None:
            return self._create(body)
        batch = self._batches.get(batch_id)
        if batch is None or action != "cancel":
            return _not_found(path)
        with self._lock:
            if not self._ended(batch):  # nothing was processed yet: all of it is canceled
                batch.results = {cid: {"type": "canceled"} for cid in batch.results}
            batch.canceled = True
        return 200, {}, self._view(batch)

    def get(self, path: str) -> tuple[int, dict[str, str], Any]:
        match = _ROUTE.match(path)
        assert match is not None
        batch_id, action = match.groups()
        batch = self._batches.get(batch_id or "")
        if batch is None or action == "cancel":
            return _not_found(path)
        if action == "results":
            if not self._ended(batch):
                return 400, {}, _error(400, "the batch has not ended yet")
            lines = [
                json.dumps({"custom_id": cid, "result": batch.results[cid]}) for cid in batch.order
            ]
            if self.tamper is not None:
                lines = self.tamper(lines)
            return 200, {"content-type": "application/binary"}, "\n".join(lines) + "\n"
        with self._lock:
            batch.retrieves += 1
        return 200, {}, self._view(batch)

    # -- creating ---------------------------------------------------------------------

    def _create(self, body: Any) -> tuple[int, dict[str, str], Any]:
        from tests.support.emulator import _invalid  # the same checks as /v1/messages

        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return 400, {}, _error(400, "requests: at least one request is required")
        seen: set[str] = set()
        for n, r in enumerate(requests):
            cid = r.get("custom_id") if isinstance(r, dict) else None
            if not isinstance(cid, str) or not _CUSTOM_ID.match(cid):
                return (
                    400,
                    {},
                    _error(400, f"requests.{n}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$"),
                )
            if cid in seen:
                return 400, {}, _error(400, f"requests.{n}.custom_id: duplicate {cid!r}")
            seen.add(cid)
            problem = _invalid(r.get("params"))
            if problem:
                return 400, {}, _error(400, f"requests.{n}.params: {problem}")
        with self._lock:
            self.created.append(body)
            batch_id = f"msgbatch_emulated_{self.prefix}{len(self._batches) + 1:04d}"
        results = {r["custom_id"]: self._result(r["custom_id"], r["params"]) for r in requests}
        order = list(results)
        random.Random(batch_id).shuffle(order)
        if len(order) > 1 and order == list(results):
            order.reverse()  # never the request order
        batch = _Batch(batch_id, datetime.datetime.now(datetime.UTC), results, order=order)
        with self._lock:
            self._batches[batch_id] = batch
        return 200, {}, self._view(batch)

    def _result(self, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.outcome is not None:
            item = self.outcome(custom_id, params)
        else:
            item = self.emulator._next(params)
        if isinstance(item, str):
            if item not in _OUTCOMES[1:]:
                raise ValueError(f"unknown batch outcome {item!r}")
            if item == "errored":
                return {"type": "errored", "error": _error(500, "scripted batch error")}
            return {"type": item}
        from anthropic.types import Message  # not at the top: see tests/support/emulator.py

        if not isinstance(item, Message):
            raise TypeError(f"a batch outcome must be a Message or a string, not {type(item)}")
        out = item.to_dict(mode="json")
        out["id"] = f"msg_batched_{custom_id}"
        out["model"] = params["model"]
        out["usage"] = self.emulator._usage(params, item)
        return {"type": "succeeded", "message": out}

    # -- reporting --------------------------------------------------------------------

    def _ended(self, batch: _Batch) -> bool:
        return batch.canceled or batch.retrieves >= self.polls_to_end

    def _view(self, batch: _Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        counts = dict.fromkeys(("processing", *_OUTCOMES), 0)
        for result in batch.results.values():
            counts[result["type"] if ended else "processing"] += 1
        if ended and batch.ended_at is None:
            batch.ended_at = datetime.datetime.now(datetime.UTC)
        base = self.emulator.base_url
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": batch.created.isoformat(),
            "expires_at": (batch.created + datetime.timedelta(hours=24)).isoformat(),
            "ended_at": batch.ended_at.isoformat() if batch.ended_at else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base}/v1/messages/batches/{batch.id}/results" if ended else None,
        }


def _error(status: int, message: str) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _not_found(path: str) -> tuple[int, dict[str, str], Any]:
    return 404, {}, _error(404, f"no batch at {path}")
