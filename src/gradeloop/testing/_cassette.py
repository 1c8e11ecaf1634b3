"""Cassettes: recorded judge replies, replayed so tests run offline and deterministic.

A cassette is a human-readable JSON file of judge replies keyed by the request
digest -- the same key as the verdict cache (``gradeloop.models._digest``), so a
reply is replayed only for exactly the request it answered. It plugs into a judge
as its reply cache (``AnthropicJudge(cache=cassette)``), and its mode decides what
a request that is not recorded does:

* ``"none"`` -- replay only: a missing request fails the test, naming it;
* ``"new"`` -- replay what is recorded, ask the model for the rest and record it;
* ``"all"`` -- ask the model for everything and record it again.

Only the reply text and a short description of the request (model, keys, the
start of the task and draft) are stored, with credentials scrubbed; never a
header, a key or a URL's password.

Each entry also keeps the SHA-256 digest of its request key and reply text, checked
before a reply is replayed: a reply edited by hand, moved to another request, or
recorded before entries carried a digest is never replayed. Replay-only mode fails,
naming the request; ``"new"`` asks the model again and records the answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError
from ..history._scrub import scrub_text

__all__ = ["MODES", "Cassette", "CassetteMiss", "RecordMode"]

RecordMode = Literal["none", "new", "all"]
MODES: tuple[RecordMode, ...] = ("none", "new", "all")
FORMAT = 1
_PREVIEW = 80


class CassetteMiss(Exception):
    """A request that replay-only mode found no recorded reply for."""


@dataclass
class _Context:
    model: str = ""
    keys: Sequence[str] = ()
    task: str = ""
    draft: str = ""


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return scrub_text(flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…")


@dataclass
class Cassette:
    """The recorded replies of one test module (``cassettes/<module>.json``)."""

    path: Path
    mode: RecordMode = "new"
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    recorded: set[str] = field(default_factory=set)
    hits: int = 0
    misses: list[str] = field(default_factory=list)
    _context: _Context = field(default_factory=_Context)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def load(cls, path: str | os.PathLike[str], mode: RecordMode = "new") -> Cassette:
        """The cassette at ``path`` (empty if the file does not exist yet)."""
        if mode not in MODES:
            raise InputError(f"record mode must be one of {', '.join(MODES)}, not {mode!r}")
        p = Path(path)
        return cls(p, mode, _read(p))

    # -- the judge's reply cache ---------------------------------------------------

    @contextmanager
    def describing(self, model: str, keys: Sequence[str], task: str, draft: str) -> Iterator[None]:
        """What the requests made inside are about (for entries and miss messages)."""
        before = self._context
        self._context = _Context(model, tuple(keys), task, draft)
        try:
            yield
        finally:
            self._context = before

    def get(self, key: str) -> str | None:
        """The recorded reply, or None to let the judge ask (new / all); in replay-only
        mode a missing request raises :class:`CassetteMiss` naming it."""
        with self._lock:
            entry = self.entries.get(key)
            if self.mode != "all" and entry is not None:
                if entry.get("digest") == _digest(key, entry["reply"]):
                    self.hits += 1
                    return str(entry["reply"])
                if self.mode == "none":
                    self.misses.append(key)
                    raise CassetteMiss(self.describe_tampered(key))
                del self.entries[key]  # asked again and recorded anew
                return None
            if self.mode == "none":
                self.misses.append(key)
                raise CassetteMiss(self.describe_miss(key))
            return None

    def put(self, key: str, text: str, *, model: str) -> None:
        """Record a reply the model just gave."""
        c = self._context
        reply = scrub_text(text)
        with self._lock:
            self.entries[key] = {
                "model": model,
                "keys": list(c.keys),
                "task": _preview(c.task),
                "draft": _preview(c.draft),
                "recorded_at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
                "reply": reply,
                "digest": _digest(key, reply),
            }
            self.recorded.add(key)

    def discard(self, key: str) -> None:
        """A recorded reply that no longer validates is not replayed again."""
        with self._lock:
            self.entries.pop(key, None)

    def describe_miss(self, key: str) -> str:
        c = self._context
        about = (
            f" (model {c.model}, keys {', '.join(c.keys)}; draft {_preview(c.draft)!r})"
            if c.model
            else ""
        )
        return (
            f"{self.path} has no recorded judge reply for request {key[:12]}{about}; "
            "the draft, task, rubric or judge settings changed, or it was never recorded. "
            "Record it with --gradeloop-record=new (needs ANTHROPIC_API_KEY or a base URL)"
        )

    def describe_tampered(self, key: str) -> str:
        return (
            f"{self.path}: the recorded judge reply for request {key[:12]} does not match "
            "its digest (edited by hand, moved from another request, or recorded by an "
            "older gradeloop), so it is not replayed. Record it again with "
            "--gradeloop-record=new (needs ANTHROPIC_API_KEY or a base URL)"
        )

    # -- the file -------------------------------------------------------------------

    def save(self) -> int:
        """Write what this run recorded, merged with what is on disk now (another
        process may have recorded too); returns the number of entries written."""
        if not self.recorded:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(self.path):
            merged = _read(self.path)
            merged.update({k: self.entries[k] for k in self.recorded if k in self.entries})
            data = {"gradeloop_cassette": FORMAT, "requests": dict(sorted(merged.items()))}
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
        written = len(self.recorded)
        self.recorded.clear()
        return written


def _digest(key: str, reply: Any) -> str:
    """What binds a recorded reply to its request: SHA-256 of the key and the text."""
    material = f"{key}\0{reply}".encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(material).hexdigest()


def _read(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            f"cassette {path} is not readable JSON ({exc}); fix or delete it"
        ) from None
    requests = data.get("requests") if isinstance(data, dict) else None
    if not isinstance(requests, dict) or data.get("gradeloop_cassette") != FORMAT:
        raise InputError(f"{path} is not a gradeloop cassette (format {FORMAT}); fix or delete it")
    return {str(k): v for k, v in requests.items() if isinstance(v, dict) and "reply" in v}


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock per cassette (in the temp folder, not beside the tests), so
    parallel workers merge their recordings instead of clobbering each other's."""
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    lock = Path(tempfile.gettempdir()) / f"gradeloop-cassette-{digest[:16]}.lock"
    with open(lock, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: one writer at a time is assumed
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
