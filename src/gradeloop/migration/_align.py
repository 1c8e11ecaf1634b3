"""Align a judge key to people's labels: rewrite its description, keep what holds up.

For each judge key where the judge and the labels disagree, the judge's own model is
asked for rewritten descriptions (and worked examples), shown only the *training*
half of a seeded split of the labelled drafts. Each proposal is then scored on the
*held-out* half, which it never saw: the judge grades those drafts with the whole
rubric, that one key rewritten, and the key's agreement with the labels is compared
with the current wording's on the same drafts. Only a proposal that raises held-out
agreement is kept; a key where every proposal ties or loses keeps its wording.

Where two labellers' files are given and they disagree with each other on a key
(:mod:`._labellers`), the key is reported as an ambiguous criterion and not
rewritten: fitting the judge to one reading of an unclear rule is not alignment.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InputError, JudgeError
from ..grading._grade import Evaluation, Judge
from ..grading._registry import Registry
from ..grading._rubric import Criterion, Rubric
from ..grading._transcript import judge_text
from ..models._usage import metered
from ._agreement import PassFailStats, pass_fail_stats
from ._jsonl import LabelledItem
from ._labellers import LabellerAgreement, labeller_agreement
from ._many import graded
from ._rewrite import Case, Rewrite, ask_rewrites

__all__ = ["AlignReport", "Candidate", "KeyAlignment", "align", "split_items"]

Status = Literal["improved", "no_gain", "agrees", "ambiguous", "too_few", "failed"]
#: A side of the split needs at least this many drafts labelled on a key.
MIN_PER_SIDE = 2


@dataclass(frozen=True)
class Candidate:
    """One proposal and how it did on the held-out drafts."""

    rewrite: Rewrite
    heldout: PassFailStats
    kept: bool = False

    def to_json(self) -> dict[str, Any]:
        """The proposal, its held-out figures, and whether it was kept."""
        return {
            "description": self.rewrite.description,
            "examples": list(self.rewrite.examples),
            "heldout": _figures(self.heldout),
            "kept": self.kept,
        }


@dataclass
class KeyAlignment:
    """One key: its figures before, the proposals, the figures after (if one was kept)."""

    key: str
    status: Status
    train: PassFailStats
    heldout: PassFailStats
    candidates: list[Candidate] = field(default_factory=list)
    labellers: LabellerAgreement | None = None
    dropped: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def winner(self) -> Candidate | None:
        """The kept proposal, if any."""
        return next((c for c in self.candidates if c.kept), None)

    def to_json(self) -> dict[str, Any]:
        """Before (train and held-out), after (held-out, with the kept rewrite)."""
        won = self.winner
        return {
            "status": self.status,
            "before": {"train": _figures(self.train), "heldout": _figures(self.heldout)},
            "after": {"heldout": _figures(won.heldout)} if won else None,
            "description": won.rewrite.description if won else None,
            "candidates": [c.to_json() for c in self.candidates],
            "dropped": list(self.dropped),
            "labellers": self.labellers.to_json() if self.labellers else None,
            "note": self.note,
        }


@dataclass
class AlignReport:
    """Every key's alignment, the split, and what the judge cost."""

    rubric: Rubric
    keys: list[KeyAlignment]
    seed: int
    train: int
    heldout: int
    usage: Any = None

    @property
    def changes(self) -> dict[str, tuple[str, tuple[dict[str, Any], ...]]]:
        """``{key: (description, examples)}`` of the kept rewrites."""
        out = {}
        for k in self.keys:
            won = k.winner
            if won is not None:
                out[k.key] = (won.rewrite.description, won.rewrite.examples)
        return out

    @property
    def cost_usd(self) -> float | None:
        """Dollars spent (grading and rewriting); None when a price is unknown."""
        return 0.0 if self.usage is None else self.usage.cost_usd

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: ``keys``, ``split``, ``changed``, ``cost_usd``."""
        cost = self.cost_usd
        return {
            "keys": {k.key: k.to_json() for k in self.keys},
            "split": {"seed": self.seed, "train": self.train, "heldout": self.heldout},
            "changed": sorted(self.changes),
            "cost_usd": None if cost is None else round(cost, 8),
            "usage": None if self.usage is None else self.usage.to_dict(),
        }


def _figures(s: PassFailStats) -> dict[str, Any]:
    return {
        "n": s.n,
        "agreement": None if s.agreement is None else round(s.agreement, 4),
        "kappa": None if s.kappa is None else round(s.kappa, 4),
    }


def split_items(
    items: Sequence[LabelledItem], seed: int, heldout: float
) -> tuple[list[LabelledItem], list[LabelledItem]]:
    """A seeded train / held-out split: the same seed and the same drafts always give the
    same split, whatever the file's order (drafts are ordered by id before shuffling)."""
    if not 0 < heldout < 1:
        raise InputError(f"--holdout must be a share between 0 and 1, not {heldout}")
    ordered = sorted(items, key=lambda i: i.output_id)
    random.Random(seed).shuffle(ordered)
    cut = min(len(ordered) - 1, max(1, math.floor(len(ordered) * heldout + 0.5)))
    return ordered[cut:], ordered[:cut]


def _human(c: Criterion, label: bool | float) -> bool:
    return label if isinstance(label, bool) else label >= c.pass_threshold


def _pairs(
    c: Criterion, items: Sequence[LabelledItem], answers: dict[str, Evaluation | None]
) -> tuple[list[bool], list[bool]]:
    human, judge = [], []
    for item in items:
        ev = answers.get(item.output_id)
        if c.key not in item.labels or ev is None or not ev[c.key].checked:
            continue
        human.append(_human(c, item.labels[c.key]))
        judge.append(ev[c.key].passed)
    return human, judge


def _grade(
    items: Sequence[LabelledItem],
    rubric: Rubric,
    judge: Judge,
    registry: Registry | None,
    jobs: int,
) -> dict[str, Evaluation | None]:
    return {
        item.output_id: (None if done.error is not None else done.evaluation)
        for item, done in graded(items, rubric, judge=judge, registry=registry, jobs=jobs)
    }


def _with(rubric: Rubric, c: Criterion) -> Rubric:
    return Rubric(
        [c if x.key == c.key else x for x in rubric],
        pass_score=rubric.pass_score,
        name=rubric.name,
        path=rubric.path,
        plugins=rubric.plugins,
    )


def _cases(
    c: Criterion, items: Sequence[LabelledItem], answers: dict[str, Evaluation | None]
) -> list[Case]:
    """The training drafts where judge and labels differ, then a few where they agree."""
    differ: list[Case] = []
    agree: list[Case] = []
    for item in items:
        ev = answers.get(item.output_id)
        if c.key not in item.labels or ev is None or not ev[c.key].checked:
            continue
        label = item.labels[c.key]
        case = Case(
            item.task, judge_text(item.draft), label, ev[c.key].passed, ev.verdict.reasoning
        )
        (agree if _human(c, label) == ev[c.key].passed else differ).append(case)
    return differ + agree[:4]


def _select_keys(
    rubric: Rubric, items: Sequence[LabelledItem], keys: Sequence[str] | None
) -> list[Criterion]:
    labelled = {k for i in items for k in i.labels}
    if keys:
        out = []
        for key in keys:
            if key not in rubric.keys:
                raise InputError(
                    f"--key {key!r} is not in the rubric; keys: {', '.join(rubric.keys)}"
                )
            if rubric[key].source != "judge":
                raise InputError(f"--key {key!r} is filled by a checker; align rewrites judge keys")
            if key not in labelled:
                raise InputError(f"--key {key!r} has no labels in the labels file")
            out.append(rubric[key])
        return out
    found = [c for c in rubric.judge_criteria if c.key in labelled]
    if not found:
        raise InputError(
            "no judge key of the rubric is labelled in the labels file: nothing to align"
        )
    return found


def align(
    items: Sequence[LabelledItem],
    rubric: Rubric,
    *,
    judge: Judge,
    keys: Sequence[str] | None = None,
    others: Sequence[Sequence[LabelledItem]] = (),
    seed: int = 0,
    heldout: float = 0.5,
    proposals: int = 3,
    registry: Registry | None = None,
    jobs: int = 1,
    on_phase: Callable[[str], None] | None = None,
) -> AlignReport:
    """Align the rubric's judge keys (or ``keys``) to the labels in ``items``.

    ``others`` are other labellers' labels of the same drafts: a key they disagree on
    with ``items`` is reported as ambiguous and left alone. Nothing is written; the
    report's :attr:`AlignReport.changes` are the kept rewrites (see
    :func:`gradeloop.migration._rubric_write.write_rubric`). ``on_phase`` is called
    with one line as each phase starts (grading the labelled drafts, asking for a key's
    rewrites, scoring each on the held-out drafts).
    """
    say = on_phase or (lambda text: None)
    if proposals < 1:
        raise InputError(f"--proposals must be at least 1, not {proposals}")
    chosen = _select_keys(rubric, items, keys)
    train, held = split_items(items, seed, heldout)
    ambiguous: dict[str, LabellerAgreement] = {}
    for other in others:
        for key, figures in labeller_agreement(items, other, rubric).items():
            if figures.ambiguous or key not in ambiguous:
                ambiguous[key] = figures
    with metered() as meter:
        say(f"grading {_plural(len(items), 'labelled draft')} with the judge")
        answers = _grade(items, rubric, judge, registry, jobs)
        if all(v is None for v in answers.values()):
            raise JudgeError("the judge failed on every labelled draft", reason="api_error")
        out = [
            _align_key(
                c,
                rubric,
                judge,
                train,
                held,
                answers,
                ambiguous.get(c.key),
                proposals,
                registry,
                jobs,
                say,
            )
            for c in chosen
        ]
    return AlignReport(
        rubric, out, seed, len(train), len(held), meter.usage if meter.calls else None
    )


def _align_key(
    c: Criterion,
    rubric: Rubric,
    judge: Judge,
    train: Sequence[LabelledItem],
    held: Sequence[LabelledItem],
    answers: dict[str, Evaluation | None],
    labellers: LabellerAgreement | None,
    proposals: int,
    registry: Registry | None,
    jobs: int,
    say: Callable[[str], None],
) -> KeyAlignment:
    before_train = pass_fail_stats(*_pairs(c, train, answers))
    before_held = pass_fail_stats(*_pairs(c, held, answers))
    result = KeyAlignment(c.key, "no_gain", before_train, before_held, labellers=labellers)
    if labellers is not None and labellers.ambiguous:
        result.status = "ambiguous"
        result.note = (
            "ambiguous criterion: the labellers disagree with each other on it; agree on "
            "its reading and relabel before aligning the judge"
        )
        return result
    if before_train.n < MIN_PER_SIDE or before_held.n < MIN_PER_SIDE:
        result.status = "too_few"
        result.note = f"needs at least {MIN_PER_SIDE} judged labels on each side of the split"
        return result
    if before_train.agreement == 1.0:
        result.status = "agrees"
        result.note = "the judge already agrees with every training label"
        return result
    say(f"{c.key}: asking the judge's model for {_plural(proposals, 'rewrite')}")
    try:
        rewrites, result.dropped = ask_rewrites(judge, c, _cases(c, train, answers), proposals)
    except JudgeError as exc:
        result.status, result.note = "failed", f"no rewrites: {exc}"
        return result
    on_key = [i for i in held if c.key in i.labels]
    for n, rewrite in enumerate(rewrites[:proposals], start=1):
        say(
            f"{c.key}: scoring rewrite {n}/{len(rewrites[:proposals])} on "
            f"{_plural(len(on_key), 'held-out draft')}"
        )
        trial = _grade(on_key, _with(rubric, rewrite.apply(c)), judge, registry, jobs)
        result.candidates.append(Candidate(rewrite, pass_fail_stats(*_pairs(c, on_key, trial))))
    best = max(result.candidates, key=_rank, default=None)
    # kept only when it raises held-out agreement: a tie is no reason to change wording
    if best is not None and (best.heldout.agreement or 0.0) > (before_held.agreement or 0.0):
        result.candidates[result.candidates.index(best)] = Candidate(
            best.rewrite, best.heldout, kept=True
        )
        result.status = "improved"
    return result


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _kappa(s: PassFailStats) -> float:
    return -2.0 if s.kappa is None else s.kappa


def _rank(c: Candidate) -> tuple[float, float]:
    """Held-out agreement first; kappa breaks ties between proposals."""
    return (c.heldout.agreement or 0.0, _kappa(c.heldout))
