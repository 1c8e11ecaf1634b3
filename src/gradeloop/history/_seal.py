"""The seal on a stored draft's answers: what ``regrade`` may reuse without asking.

A grading run's draft and a loop's round are stored with their per-key answers. A
regrade reuses a judge key's stored answer when the key's prompt did not change, at
no cost, so an answer edited in the database (a flipped ``met``, a raised score)
would pass as the judge's. Each record is therefore sealed when it is written: an
HMAC-SHA256, under this ``GRADELOOP_HOME``'s secret (the one the verdict cache binds
its entries with), of what the judge was asked (the task and the draft) and what was
answered (the evaluation and its per-key detail), with the draft's id. A record whose
seal does not match is never reused; one with no seal (recorded by a gradeloop before
seals, or by a home whose secret could not be made) is not reused either.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any, Literal

from ..errors import HistoryError
from ._cache import cache_secret

__all__ = ["SEAL_FIELD", "SealState", "seal", "seal_state"]

#: The record field that holds the seal.
SEAL_FIELD = "seal"

#: ``"ok"``: the seal matches; ``"missing"``: the record has none; ``"mismatch"``: the
#: record (or its loop's task) changed after it was sealed, or another home sealed it.
SealState = Literal["ok", "missing", "mismatch"]

# What the judge was asked and what it answered, and whose draft it was. Usage, timing
# and other bookkeeping are left out: they do not decide a key.
_MATERIAL = (
    "item_id",
    "output_id",
    "task",
    "content",
    "transcript",
    "evaluation",
    "detail",
    "error",
    "judge_error",
)


def seal(record: Mapping[str, Any], task: str | None = None) -> str | None:
    """The seal of ``record`` as stored (scrubbed); ``task`` is a loop's task, which
    its rounds' records do not hold. None when this home has no secret to seal with
    (the record is then stored unsealed, and never reused)."""
    try:
        secret = cache_secret()
    except HistoryError:
        return None
    return hmac.new(secret, _material(record, task), hashlib.sha256).hexdigest()


def seal_state(record: Mapping[str, Any], task: str | None = None) -> SealState:
    """Whether ``record``'s stored seal matches what it holds now."""
    stored = record.get(SEAL_FIELD)
    if not isinstance(stored, str) or not stored:
        return "missing"
    try:
        now = seal(record, task)
    except (ValueError, RecursionError):  # a damaged record: nothing to vouch for
        return "mismatch"
    return "ok" if now is not None and hmac.compare_digest(stored, now) else "mismatch"


def _material(record: Mapping[str, Any], task: str | None) -> bytes:
    fields = {name: record.get(name) for name in _MATERIAL if name in record}
    if task is not None:
        fields["loop_task"] = task
    text = json.dumps(
        fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return text.encode("utf-8", "surrogatepass")
