"""A labelling session: a stored run's drafts, the judge keys to mark, and the labels
file written as each mark is made.

The file is exactly what ``gradeloop calibrate`` (and ``align``) read: one JSON object
per labelled draft, ``{"id", "task", "draft", "labels": {key: true/false or a 1-10
score}}`` (with ``reference`` and ``metadata`` when the draft had them), in the run's
order. It is rewritten whole after every mark, through a temporary file and an
atomic rename, so a killed session leaves the last complete file and never half of
one. Starting again on the same file picks up where it stopped; a file that holds
other drafts is refused rather than overwritten. One session at a time: a session
locks the file for its life (:mod:`._label_lock`), and a second one is refused,
naming the first.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...grading._transcript import Transcript
from ...migration._evidence import StoredDraft, StoredRun
from ._label_lock import FileLock

__all__ = ["LabelKey", "LabelSession"]


@dataclass(frozen=True)
class LabelKey:
    """A judge key to label: pass/fail (met / unmet) or scored (1-10, met at threshold)."""

    key: str
    description: str
    scale: str
    threshold: float

    def parse(self, value: str) -> bool | int | None:
        """A mark as sent by the page: ``met``/``unmet``, a score, or ``clear`` (None)."""
        if value == "clear":
            return None
        if self.scale == "score":
            score = whole_number(value)
            if score is not None and 1 <= score <= 10:
                return score
            raise InputError(f"{self.key} is scored: send a score from 1 to 10, not {value!r}")
        if value in ("met", "unmet"):
            return value == "met"
        raise InputError(f"{self.key} is pass/fail: send 'met' or 'unmet', not {value!r}")


def whole_number(text: str) -> int | None:
    """``text`` as a whole number written in ASCII digits (at most 9), else None:
    ``str.isdigit`` is true of "²" and "٣", which ``int`` refuses or reads as digits."""
    if 0 < len(text) <= 9 and text.isascii() and text.isdigit():
        return int(text)
    return None


def judge_keys(rubric: Mapping[str, Any]) -> list[LabelKey]:
    """The keys the judge answers in a stored rubric (its own keys, and code keys it
    shadows), in rubric order."""
    out = []
    for c in rubric.get("criteria") or []:
        if not isinstance(c, Mapping):
            continue
        judged = not c.get("checker") or c.get("checker") == "judge" or c.get("shadow") == "judge"
        if judged:
            scale = str(c.get("scale") or "pass_fail")
            threshold = c.get("threshold")
            out.append(
                LabelKey(
                    key=str(c.get("key")),
                    description=str(c.get("description") or ""),
                    scale=scale,
                    threshold=float(threshold) if isinstance(threshold, int | float) else 7.0,
                )
            )
    return out


class LabelSession:
    """The drafts of ``run`` to label into ``out``; thread-safe (the server is threaded)."""

    def __init__(self, run: StoredRun, out: str | os.PathLike[str]) -> None:
        self.run = run
        self.out = Path(out)
        self.keys = judge_keys(run.rubric)
        if not self.keys:
            raise InputError(
                f"{run.kind} {run.source_id}'s rubric has no judge keys: there is nothing to label"
            )
        self.drafts: list[StoredDraft] = list(run.drafts)
        if not self.drafts:
            raise InputError(f"{run.kind} {run.source_id} has no stored drafts to label")
        self.ids = _unique_ids(self.drafts)
        self.labels: list[dict[str, bool | int]] = [{} for _ in self.drafts]
        self._lock = threading.Lock()
        self.hold = FileLock(self.out)  # refused when another session has the file
        try:
            self._resume()
        except BaseException:
            self.hold.release()
            raise

    def close(self) -> None:
        """End the session: another one may take the file."""
        self.hold.release()

    def __enter__(self) -> LabelSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def key(self, name: str) -> LabelKey:
        """The key called ``name``; an InputError for any other."""
        for k in self.keys:
            if k.key == name:
                return k
        raise InputError(f"{name!r} is not a judge key of this run")

    @property
    def labelled(self) -> int:
        """Drafts with at least one label."""
        return sum(1 for lab in self.labels if lab)

    def complete(self, index: int) -> bool:
        """Whether every key of draft ``index`` is labelled."""
        return all(k.key in self.labels[index] for k in self.keys)

    def mark(self, index: int, key: str, value: str) -> bool | int | None:
        """Set (or clear) one label and save the file; returns the value stored."""
        if not 0 <= index < len(self.drafts):
            raise InputError(f"there is no draft {index + 1} (the run has {len(self.drafts)})")
        parsed = self.key(key).parse(value)
        with self._lock:
            if parsed is None:
                self.labels[index].pop(key, None)
            else:
                self.labels[index][key] = parsed
            self._save()
        return parsed

    def lines(self) -> list[dict[str, Any]]:
        """The labels file's objects, in the run's order (labelled drafts only)."""
        out = []
        for ident, d, labels in zip(self.ids, self.drafts, self.labels, strict=True):
            if not labels:
                continue
            line: dict[str, Any] = {"id": ident, "task": d.task, **_draft_fields(d.draft)}
            line["labels"] = {k.key: labels[k.key] for k in self.keys if k.key in labels}
            if d.reference is not None:
                ref = d.reference
                line["reference"] = ref.to_json() if isinstance(ref, Transcript) else ref
            if d.metadata:
                line["metadata"] = dict(d.metadata)
            out.append(line)
        return out

    def _save(self) -> None:
        text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.lines())
        folder = self.out.parent
        fd, tmp = tempfile.mkstemp(prefix=f".{self.out.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _resume(self) -> None:
        """Read back the labels an earlier session on ``out`` saved; refuse a file of
        other drafts rather than overwrite it."""
        if not self.out.exists():
            return
        try:
            text = self.out.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(
                f"--out {self.out} cannot be read ({exc}); give another path"
            ) from None
        where = {ident: n for n, ident in enumerate(self.ids)}
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            obj = _line(raw)
            n = where.get(str(obj.get("id"))) if obj is not None else None
            mine = _draft_fields(self.drafts[n].draft) if n is not None else None
            if (
                obj is None
                or n is None
                or mine is None
                or any(obj.get(k) != v for k, v in mine.items())
            ):
                raise InputError(
                    f"--out {self.out}:{number} is not a label of this run's drafts; give a "
                    "new file (labels are never written over another file)"
                )
            labels = obj.get("labels")
            if isinstance(labels, Mapping):
                for key, value in labels.items():
                    if any(k.key == key for k in self.keys) and isinstance(value, bool | int):
                        self.labels[n][str(key)] = value


def _line(raw: str) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _unique_ids(drafts: Sequence[StoredDraft]) -> list[str]:
    """Each draft's id, made unique (a run may hold one id twice): ``id``, ``id#2``..."""
    seen: dict[str, int] = {}
    out = []
    for d in drafts:
        base = d.item_id or "draft"
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return out


def _draft_fields(draft: str | Transcript) -> dict[str, Any]:
    """How a draft is written in the labels file: ``draft`` text, or a transcript's
    ``messages`` (both read by ``calibrate``)."""
    if isinstance(draft, Transcript):
        return {"messages": draft.messages}
    return {"draft": draft}
