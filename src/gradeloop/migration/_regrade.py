"""Regrade: the drafts of a stored grading run (or a loop's rounds) graded again with
a new rubric or judge, and what moved, key by key.

Nothing is generated: the stored drafts are graded as they are, so what changes is
the rubric's or the judge's doing alone (a fixed-transcript re-grade is how judge
drift is told apart from changes in the drafts). The result is a new grading run
linked to its source (``regrade_of``), and per key: how many drafts flipped to met
and to unmet, and the agreement and Cohen's kappa of the old answers with the new.

A judge key whose prompt did not change (same description, scale, threshold,
anchors and examples, and the same judge: provider, model, host and sampling, by the
source's fingerprint) is not asked again: the source's stored answer is reused, at
no cost - for the draft that got it (by its stored id, never by its text) and only
when its record still matches the seal it was stored with
(:mod:`gradeloop.history._seal`). Only changed keys are sent to the judge, with a
schema for them alone, and those requests go through the verdict cache, so repeating a
regrade is free too. ``reuse=False`` asks the judge about every key (with
``--no-cache``, a measure of the judge's own noise on fixed drafts).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..grading._grade import Evaluation, Judge
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._transcript import judge_text
from ..grading._verdict import Verdict
from ..history._grading import GradedDraft
from ..history._store import HistoryStore
from ..models._fingerprint import (
    fingerprint_differences,
    fingerprint_warnings,
    run_fingerprint,
)
from ._agreement import PassFailStats, pass_fail_stats
from ._compare import rubric_label
from ._evidence import StoredDraft, StoredRun, stored_run
from ._jsonl import DraftItem
from ._many import graded

__all__ = ["KeyFlips", "RegradeReport", "prompt_changed_keys", "regrade"]

_JUDGE_FIELDS = ("provider", "model", "base_url_host", "sampling")


@dataclass(frozen=True)
class KeyFlips:
    """One key, old answers against new over the drafts both graded."""

    key: str
    to_met: int
    to_unmet: int
    stats: PassFailStats
    reused: int = 0  # drafts whose answer was reused from the source (no request)
    changed: bool = False  # the key's prompt (or checker) differs from the source's
    new: bool = False  # the source's rubric had no such key

    @property
    def compared(self) -> int:
        """Drafts with an answer for the key in both runs."""
        return self.stats.n

    def to_json(self) -> dict[str, Any]:
        """``to_met``, ``to_unmet``, ``agreement``, ``kappa``, and what stands behind them."""
        return {
            "to_met": self.to_met,
            "to_unmet": self.to_unmet,
            "agreement": None if self.stats.agreement is None else round(self.stats.agreement, 4),
            "kappa": None if self.stats.kappa is None else round(self.stats.kappa, 4),
            "compared": self.compared,
            "reused": self.reused,
            "changed": self.changed,
            "new": self.new,
        }


@dataclass
class RegradeReport:
    """What ``gradeloop regrade`` prints: the new run, the per-key flips and the cost."""

    run_id: str | None
    source: StoredRun
    rubric: Rubric
    keys: list[KeyFlips]
    drafts: int
    usage: Any = None  # the judge's Usage over the regrade (None: no judge was asked)
    calls: int = 0
    cached: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fingerprint: dict[str, Any] = field(default_factory=dict)

    @property
    def cost_usd(self) -> float | None:
        """Dollars the judge cost (0 when nothing was sent; None when a price is unknown)."""
        return 0.0 if self.usage is None else self.usage.cost_usd

    def to_json(self) -> dict[str, Any]:
        """``{"run", "from", "keys": {KEY: {"to_met", "to_unmet", "agreement", "kappa",
        ...}}, "cost_usd"}`` and the details (drafts, calls, failures, warnings)."""
        cost = self.cost_usd
        return {
            "run": self.run_id,
            "from": self.source.source_id,
            "keys": {k.key: k.to_json() for k in self.keys},
            "cost_usd": None if cost is None else round(cost, 8),
            "from_kind": self.source.kind,
            "drafts": self.drafts,
            "judge": {
                "calls": self.calls,
                "cached": self.cached,
                "usage": None if self.usage is None else self.usage.to_dict(),
            },
            "failures": [{"item_id": i, "error": e} for i, e in self.failures],
            "warnings": list(self.warnings),
            "fingerprint": self.fingerprint,
        }


def _prompt_of(c: Mapping[str, Any]) -> str:
    """What of a stored criterion reaches the judge's prompt, as comparable text."""
    scale = c.get("scale") or "pass_fail"
    threshold = c.get("threshold")
    anchors = c.get("anchors") or {}
    return json.dumps(
        {
            "checker": c.get("checker") or "judge",
            "options": c.get("options") or {},
            "description": str(c.get("description") or "").strip(),
            "scale": scale,
            "threshold": (7.0 if threshold is None else float(threshold))
            if scale == "score"
            else None,
            "anchors": {str(k): v for k, v in anchors.items()},
            "examples": [
                {k: v for k, v in e.items() if v is not None}
                for e in c.get("examples") or []
                if isinstance(e, Mapping)
            ],
        },
        sort_keys=True,
        default=str,
    )


def prompt_changed_keys(old: Mapping[str, Any], new: Rubric) -> set[str]:
    """The keys of ``new`` whose prompt (or checker and options) differs from the stored
    rubric ``old``'s, or that ``old`` lacks."""
    before = {
        str(c.get("key")): _prompt_of(c)
        for c in old.get("criteria") or []
        if isinstance(c, Mapping)
    }
    now = json.loads(json.dumps(new.to_dict(), default=str))
    return {str(c["key"]) for c in now["criteria"] if before.get(str(c["key"])) != _prompt_of(c)}


class _ReusingJudge:
    """The judge for one stored draft, asked only about the keys it cannot answer from
    that draft's own stored verdicts.

    It is bound to the draft by the stored output's id (one instance per draft), never
    found by the draft's text: two stored drafts with the same text keep their own
    answers. A stored answer is reused only when the record's seal matches
    (:mod:`gradeloop.history._seal`) and the judge would see exactly what it saw then.
    """

    def __init__(self, inner: Judge, stored: StoredDraft, reusable: set[str]) -> None:
        self.inner, self.stored, self.reusable = inner, stored, reusable
        self.model = getattr(inner, "model", None)
        self.reused: dict[str, int] = {}
        self._seen = _seen(stored.task, judge_text(stored.draft))

    def _split(
        self, task: str, draft: str, criteria: Sequence[Criterion]
    ) -> tuple[list[Criterion], dict[str, Any]]:
        known = self.stored
        trusted = known.sealed == "ok" and _seen(task, draft) == self._seen
        ask, reuse = [], {}
        for c in criteria:
            v = known.verdicts.get(c.key) if trusted else None
            usable = (
                v is not None
                and v.checked
                and v.source == "judge"
                and (c.scale != "score" or v.score is not None)  # a score to hand back
            )
            if c.key in self.reusable and c.source == "judge" and usable:
                assert v is not None
                reuse[c.key] = (c, v)
            else:
                ask.append(c)
        return ask, reuse

    def _merge(self, asked: Any, reuse: Mapping[str, Any]) -> Any:
        met = {k: v.met for k, (c, v) in reuse.items() if c.scale != "score"}
        scores = {k: v.score for k, (c, v) in reuse.items() if c.scale == "score"}
        for key in reuse:
            self.reused[key] = self.reused.get(key, 0) + 1
        if asked is None:
            return Verdict(
                reasoning=_reasoning(self.stored),
                criteria_met=met,
                passed=True,
                issues=[],
                scores=scores,
            )
        if not isinstance(asked, Verdict):
            asked = Verdict.model_validate(asked)
        return asked.model_copy(
            update={
                "criteria_met": {**asked.criteria_met, **met},
                "scores": {**asked.scores, **scores},
            }
        )

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        ask, reuse = self._split(task, draft, criteria)
        asked = self.inner.evaluate(task, draft, ask) if ask else None
        return self._merge(asked, reuse)

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        import asyncio

        ask, reuse = self._split(task, draft, criteria)
        asked = None
        if ask:
            method = getattr(self.inner, "aevaluate", None)
            if method is not None:
                asked = await method(task, draft, ask)
            else:
                asked = await asyncio.to_thread(self.inner.evaluate, task, draft, ask)
        return self._merge(asked, reuse)

    async def aclose(self) -> None:
        """Close the async client the wrapped judge built for this event loop."""
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def _seen(task: str, text: str) -> str:
    """The fingerprint of what the judge is shown: the task and the draft's text."""
    material = json.dumps([task, text], ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(material).hexdigest()


def _reasoning(d: StoredDraft) -> str:
    earlier = (d.reasoning or "").strip()
    note = "(answers reused from the source run: these keys' prompts did not change)"
    return f"{earlier}\n{note}" if earlier else note


def _same_judge(source: StoredRun, now: Mapping[str, Any]) -> bool:
    before = source.fingerprint
    if not before.get("model"):
        return False  # nothing says which judge answered: ask again
    return not [f for f in fingerprint_differences(before, now) if f in _JUDGE_FIELDS]


def _flips(
    rubric: Rubric,
    source: StoredRun,
    pairs: Sequence[tuple[StoredDraft, Evaluation | None]],
    changed: set[str],
    reused: Mapping[str, int],
) -> list[KeyFlips]:
    old_keys = {
        str(c.get("key")) for c in source.rubric.get("criteria") or [] if isinstance(c, Mapping)
    }
    out = []
    for c in rubric:
        before: list[bool] = []
        after: list[bool] = []
        for stored, ev in pairs:
            old = stored.met(c.key)
            if old is None or ev is None or not ev[c.key].checked:
                continue
            before.append(old)
            after.append(ev[c.key].passed)
        out.append(
            KeyFlips(
                key=c.key,
                to_met=sum(1 for a, b in zip(before, after, strict=True) if b and not a),
                to_unmet=sum(1 for a, b in zip(before, after, strict=True) if a and not b),
                stats=pass_fail_stats(before, after),
                reused=reused.get(c.key, 0),
                changed=c.key in changed,
                new=c.key not in old_keys,
            )
        )
    return out


def regrade(
    source_id: str,
    rubric: Rubric,
    *,
    store: HistoryStore,
    judge: Judge | None = None,
    registry: Registry | None = None,
    reuse: bool = True,
    jobs: int = 1,
    record: bool = True,
) -> RegradeReport:
    """Grade the stored drafts of ``source_id`` (a grading run or loop id, or a unique
    prefix) with ``rubric`` and ``judge``; record a new grading run linked to it
    (unless ``record=False``) and report the per-key flips, agreement and kappa.

    ``judge`` is needed when the rubric has judge keys that cannot be reused; with
    ``reuse`` (default) unchanged judge keys keep the source's stored answers. A
    judge failure on a draft leaves that draft out of the figures (in ``failures``);
    one before any draft was judged means the server is not there and is raised.
    """
    source = stored_run(store, source_id)
    if not source.drafts:
        raise InputError(f"{source.kind} {source.source_id} has no stored drafts to regrade")
    new_print = run_fingerprint(judge, rubric.to_dict())
    changed = prompt_changed_keys(source.rubric, rubric)
    reusable = set()
    if reuse and (judge is None or _same_judge(source, new_print)):
        reusable = {c.key for c in rubric.judge_criteria if c.key not in changed}
    judges: list[_ReusingJudge] | None = None
    if rubric.judge_criteria and reusable:
        missing = [
            d for d in source.drafts if d.sealed != "ok" or any(d.met(k) is None for k in reusable)
        ]
        if judge is None and (missing or set(rubric.judge_keys) - reusable):
            raise InputError(_needs_judge(rubric, reusable, missing))
        inner = judge if judge is not None else _NoJudge()
        # one judge per stored draft, bound to it by its id: never a draft found by text
        judges = [_ReusingJudge(inner, d, reusable) for d in source.drafts]
    elif rubric.judge_criteria and judge is None:
        raise InputError(_needs_judge(rubric, reusable, list(source.drafts)))
    items = [
        DraftItem(d.item_id, d.task, d.draft, f"{source.source_id}", d.reference, d.metadata)
        for d in source.drafts
    ]
    pairs: list[tuple[StoredDraft, Evaluation | None]] = []
    failures: list[tuple[str, str]] = []
    graded_drafts: list[GradedDraft] = []
    usage: Any = None
    calls = cached = 0
    for (item, done), stored in zip(
        graded(items, rubric, judge=judge, registry=registry, jobs=jobs, judges=judges),
        source.drafts,
        strict=True,
    ):
        for r in done.records:
            usage = r.usage if usage is None else usage + r.usage
            cached += bool(getattr(r, "cached", False))
            calls += not getattr(r, "cached", False)
        ev = None if done.error is not None else done.evaluation
        if done.error is not None:
            failures.append((item.output_id, done.error))
        pairs.append((stored, ev))
        graded_drafts.append(
            GradedDraft(
                item.output_id, item.draft, ev, item.task, done.error, item.reference, item.metadata
            )
        )
    reused: dict[str, int] = {}
    for j in judges or ():
        for key, n in j.reused.items():
            reused[key] = reused.get(key, 0) + n
    warnings = fingerprint_warnings(
        [(source.source_id, source.fingerprint), ("this regrade", new_print)]
    )
    if judges is not None:
        warnings += _unsealed(source)
    run_id = None
    if record:
        run_id = store.add_grading_run(
            graded_drafts,
            rubric=rubric.to_dict(),
            rubric_name=rubric_label(rubric),
            origin="regrade",
            config={
                "judge_model": getattr(judge, "model", None),
                "origin": "regrade",
                "fingerprint": new_print,
                "reuse": reuse,
                "reused_keys": sorted(reusable),
            },
            regrade_of=source.source_id,
        )
    return RegradeReport(
        run_id=run_id,
        source=source,
        rubric=rubric,
        keys=_flips(rubric, source, pairs, changed, reused),
        drafts=len(items),
        usage=usage,
        calls=calls,
        cached=cached,
        failures=failures,
        warnings=warnings,
        fingerprint=new_print,
    )


class _NoJudge:
    """Stands in when every judge key is reused: asking it is a bug, never a pass."""

    model = None

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        keys = ", ".join(c.key for c in criteria)
        raise InputError(f"the judge keys {keys} need a judge (give --judge-model or a judge)")


def _unsealed(source: StoredRun) -> list[str]:
    """One line per stored draft whose answers were not reused because its record does
    not match its seal, and one for the drafts recorded without a seal."""
    where = f"{'grading run' if source.kind == 'run' else 'loop'} {source.source_id}"
    lines = [
        f"{where}, draft {d.item_id}: its stored answers do not match their seal (changed "
        "after they were recorded, or recorded under another GRADELOOP_HOME); not reused, "
        "the judge was asked"
        for d in source.drafts
        if d.verdicts and d.sealed == "mismatch"
    ]
    unsealed = sum(1 for d in source.drafts if d.verdicts and d.sealed == "missing")
    if unsealed:
        lines.append(
            f"{where}: {unsealed} stored draft(s) carry no seal (recorded by an older "
            "gradeloop); their answers were not reused, the judge was asked"
        )
    return lines


def _needs_judge(rubric: Rubric, reusable: set[str], missing: Sequence[StoredDraft]) -> str:
    asked = [k for k in rubric.judge_keys if k not in reusable]
    why = (
        f"the judge keys {', '.join(asked)} changed or are new"
        if asked
        else f"{len(missing)} stored draft(s) have no sealed verdict to reuse"
    )
    return f"regrading needs a judge: {why}; configure a model (--base-url or ANTHROPIC_API_KEY)"
