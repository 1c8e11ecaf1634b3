"""Propose the checker: which registered checker, with which options, would fill a
judge key the way people (or the judge) do?

The first step of moving a key from the judge to code (docs/migrating-a-criterion.md).
After EvalGen (Shankar et al., "Who Validates the Validators?", UIST 2024): generate
candidate checks for one criterion and keep those that agree with the grades people
gave, measured by coverage (bad drafts caught) and false failures (good ones failed).

:func:`propose_checkers` reads the evidence (labels, or the judge's stored
verdicts), refuses evidence too thin to learn from, splits it into a seeded train /
held-out pair, gathers candidates (mined from the training drafts; and, with a
judge, proposed by its model in one structured request), validates each exactly as
a rubric's shadow checker, runs each over every draft, picks the winner on the
training drafts alone and judges it on the held-out ones. Nothing generated is run
as code: a candidate is a registered checker's name and options.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import GradeloopError, InputError, UnknownCheckerError
from ..grading._context import make_context
from ..grading._registry import Registry, default_registry
from ..grading._rubric import Criterion, Rubric
from ._propose_candidates import Candidate, Origin, bind, canonical, model_risk
from ._propose_cv import NEAR, complexity, cv_scores, folds, shape
from ._propose_evidence import Example, Split, examples_from, require_enough, split
from ._propose_mine import Miner, MiningData, mine
from ._propose_model import ModelAnswer, ask_model
from ._propose_phrases import Proposal as Raw
from ._propose_score import CANDIDATE_SECONDS, Figures, figures, predict

__all__ = ["CandidateResult", "Dropped", "Proposal", "propose_checkers"]

#: Candidates asked of the model.
MODEL_CANDIDATES = 8


@dataclass(frozen=True)
class CandidateResult:
    """One candidate and its figures on the training and the held-out drafts."""

    candidate: Candidate
    train: Figures
    heldout: Figures
    errors: int = 0  # drafts on which the checker raised or gave no answer
    cv: float | None = None  # the score it was ranked by (cross-validated: _propose_cv)

    @property
    def checker(self) -> str:
        """The registered checker's name."""
        return self.candidate.checker

    @property
    def options(self) -> Mapping[str, Any]:
        """Its options, validated as a rubric's."""
        return self.candidate.options

    def to_json(self) -> dict[str, Any]:
        """``checker``, ``options``, ``origin``, ``why``, ``cv`` (the cross-validated
        score it was ranked by), ``train``, ``heldout``, ``errors``."""
        return {
            **self.candidate.to_json(),
            "cv": None if self.cv is None else round(self.cv, 4),
            "train": self.train.to_json(),
            "heldout": self.heldout.to_json(),
            "errors": self.errors,
        }


@dataclass(frozen=True)
class Dropped:
    """A candidate that was not scored, and why (it did not validate, was unsafe...)."""

    checker: str
    options: Mapping[str, Any]
    origin: Origin
    reason: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        try:
            options: Any = json.loads(json.dumps(self.options, default=str))
        except (TypeError, ValueError, RecursionError):
            options = "(not JSON)"
        return {
            "checker": self.checker,
            "options": options,
            "origin": self.origin,
            "reason": self.reason,
        }


@dataclass
class Proposal:
    """What :func:`propose_checkers` found for one key.

    ``candidates`` are best first on the training drafts; ``best`` is the first of
    them, ``winner`` the same candidate when its held-out kappa reaches
    ``min_kappa`` (else None: keep the key with the judge).
    """

    key: str
    candidates: list[CandidateResult]
    min_kappa: float
    seed: int
    split: Split
    source: str = "labels"
    without_verdict: int = 0
    dropped: list[Dropped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mining_notes: list[str] = field(default_factory=list)
    model: ModelAnswer | None = None

    @property
    def best(self) -> CandidateResult | None:
        """The candidate chosen on the training drafts, whatever its held-out figures."""
        return self.candidates[0] if self.candidates else None

    @property
    def winner(self) -> CandidateResult | None:
        """:attr:`best` when its held-out kappa reaches :attr:`min_kappa`, else None."""
        best = self.best
        if best is None or best.heldout.kappa is None or best.heldout.kappa < self.min_kappa:
            return None
        return best

    @property
    def cost_usd(self) -> float | None:
        """Dollars the model request cost (0 without one; None when its price is unknown)."""
        if self.model is None or self.model.usage is None:
            return 0.0
        return self.model.usage.cost_usd

    def to_json(self) -> dict[str, Any]:
        """``{"key", "winner": {"checker", "options", "heldout": {...}} or None,
        "candidates": [...], "cost_usd"}`` and the details."""
        w = self.winner
        winner = None
        if w is not None:
            held = w.heldout.to_json()
            winner = {
                "checker": w.checker,
                "options": w.candidate.to_json()["options"],
                "heldout": {
                    k: held[k] for k in ("kappa", "agreement", "coverage", "false_failure_rate")
                },
            }
        cost = self.cost_usd
        met = sum(1 for e in (*self.split.train, *self.split.heldout) if e.met)
        model = None
        if self.model is not None:
            model = {
                "proposed": len(self.model.proposals) + len(self.model.dropped),
                "error": self.model.error,
                "usage": None if self.model.usage is None else self.model.usage.to_dict(),
            }
        return {
            "key": self.key,
            "winner": winner,
            "candidates": [c.to_json() for c in self.candidates],
            "cost_usd": None if cost is None else round(cost, 8),
            "best": None if self.best is None else self.best.to_json(),
            "min_kappa": self.min_kappa,
            "seed": self.seed,
            "evidence": {
                "source": self.source,
                "drafts": len(self.split.train) + len(self.split.heldout),
                "met": met,
                "unmet": len(self.split.train) + len(self.split.heldout) - met,
                "train": len(self.split.train),
                "heldout": len(self.split.heldout),
                "without_verdict": self.without_verdict,
            },
            "dropped": [d.to_json() for d in self.dropped],
            "notes": list(self.notes),
            "mining_notes": list(self.mining_notes),
            "model": model,
        }


def propose_checkers(
    rubric: Rubric,
    key: str,
    evidence: Iterable[Any],
    *,
    judge: Any = None,
    use_model: bool = True,
    min_kappa: float = 0.8,
    seed: int = 0,
    registry: Registry | None = None,
    miners: Mapping[str, Miner] | None = None,
    candidates: Sequence[tuple[str, Mapping[str, Any]]] = (),
    model_candidates: int = MODEL_CANDIDATES,
    source: str = "labels",
) -> Proposal:
    """Propose registered checkers for the judge key ``key`` of ``rubric``.

    ``evidence`` is what :func:`~gradeloop.migration.read_labels` returns, or stored drafts
    with the judge's verdicts. With ``use_model`` and a ``judge`` (an
    :class:`~gradeloop.AnthropicJudge`), its model is asked for candidates too, in
    one request for at most ``model_candidates``; its cost is
    :attr:`Proposal.cost_usd`. ``candidates`` adds your own
    ``(checker, options)`` pairs. ``miners`` replaces the table of miners
    (:data:`gradeloop.migration._propose_mine.MINERS`).

    Raises :class:`~gradeloop.errors.InputError` for a key that is not in the rubric
    or is filled by a checker already, and
    :class:`~gradeloop.errors.NotEnoughEvidenceError` for too few drafts.

    >>> proposal = propose_checkers(rubric, "short", labels, use_model=False)  # doctest: +SKIP
    >>> proposal.winner.checker, dict(proposal.winner.options)  # doctest: +SKIP
    ('length', {'max_words': 120})
    """
    if not 0 < min_kappa <= 1:
        raise InputError(f"min_kappa must be above 0 and at most 1, not {min_kappa}")
    reg = registry or default_registry()
    c = _judge_key(rubric, key)
    examples, without = examples_from(evidence, c)
    require_enough(examples, key, "labels" if source == "labels" else "history")
    sp = split(examples, seed)
    data = MiningData(key, c.description, sp.train, reg)
    raw: list[tuple[Raw, Origin]] = [(p, "mined") for p in mine(data, miners)]
    fitted = {ident for ident, _ in _validate(raw, rubric, key, reg)[0]}  # fitted to the drafts
    raw += [((name, dict(opts), "given by the caller"), "mined") for name, opts in candidates]
    answer = None
    notes: list[str] = []
    if use_model and judge is not None:
        answer = ask_model(judge, c, sp.train, reg, model_candidates)
        raw += [(p, "model") for p in answer.proposals]
        notes.extend(answer.notes)
    elif use_model:
        notes.append("no judge was given, so the model proposed nothing; mined candidates only")
    found, dropped = _validate(raw, rubric, key, reg)
    kept = [cand for _, cand in found]
    if answer is not None:
        dropped += [Dropped("?", {}, "model", d) for d in answer.dropped]
    scored, slow = _score(kept, c, sp, reg)
    chosen = [(ident in fitted, *s) for (ident, _), s in zip(found, scored, strict=True) if s]

    def mined_in(train: Sequence[int]) -> set[str]:
        fold = MiningData(key, c.description, [sp.train[i] for i in train], reg)
        fold.probes = data.probes  # each draft's own values, found once
        raw_fold: list[tuple[Raw, Origin]] = [(p, "mined") for p in mine(fold, miners)]
        return {shape(cand) for _, cand in _validate(raw_fold, rubric, key, reg)[0]}

    scores = cv_scores(
        [r.candidate for _, r, _ in chosen],
        [f for f, _, _ in chosen],
        [answers for _, _, answers in chosen],
        [e.met for e in sp.train],
        folds(sp.train, seed=seed),
        mined_in,
    )
    results = _ranked(
        [replace(r, cv=k) for (_, r, _), k in zip(chosen, scores, strict=True)], c.description
    )
    return Proposal(
        key=key,
        candidates=results,
        min_kappa=min_kappa,
        seed=seed,
        split=sp,
        source=source,
        without_verdict=without,
        dropped=dropped + slow,
        notes=notes,
        mining_notes=data.notes,
        model=answer,
    )


def _judge_key(rubric: Rubric, key: str) -> Criterion:
    if key not in rubric.keys:
        close = difflib.get_close_matches(key, rubric.keys, n=1)
        hint = f"did you mean {close[0]!r}?" if close else "its keys: " + ", ".join(rubric.keys)
        raise InputError(f"the rubric has no criterion {key!r}; {hint}")
    c = rubric[key]
    if c.checker is not None:
        raise InputError(
            f"{key!r} is filled by the checker {c.checker!r} already; propose looks for a "
            "checker for a key the judge fills"
        )
    return c


def _validate(
    raw: Sequence[tuple[Raw, Origin]], rubric: Rubric, key: str, reg: Registry
) -> tuple[list[tuple[str, Candidate]], list[Dropped]]:
    """Candidates bound as the key's shadow (as a rubric's are), distinct, in order,
    each with its identity (:func:`_identity`)."""
    kept: dict[str, Candidate] = {}
    dropped: list[Dropped] = []
    for (name, options, why), origin in raw:
        try:
            # what the model wrote is vetted before validation, which may read a file
            risk = model_risk(reg.info(name), options) if origin == "model" else None
            if risk is None:
                bound = bind(rubric, key, name, options, reg)
        except GradeloopError as exc:
            unknown = isinstance(exc, UnknownCheckerError) or isinstance(
                exc.__cause__, UnknownCheckerError
            )
            reason = f"no checker named {name!r} is registered" if unknown else str(exc)
            dropped.append(Dropped(name, options, origin, _reason(reason, key)))
            continue
        if risk is not None:
            dropped.append(Dropped(name, options, origin, risk))
            continue
        ident = _identity(reg, name, bound)
        seen = kept.get(ident)
        if seen is None:
            kept[ident] = Candidate(name, bound, origin, why)
        elif seen.origin != origin:
            kept[ident] = Candidate(seen.checker, seen.options, "both", seen.why)
    return list(kept.items()), dropped


def _identity(reg: Registry, name: str, options: Mapping[str, Any]) -> str:
    """The same checker with the same effective options (defaults filled) is one candidate."""
    model = reg.info(name).options_model
    if model is not None:
        try:
            full = model.model_validate(dict(options)).model_dump(by_alias=True, mode="json")
        except Exception:  # a validator with side conditions: compare as given
            full = dict(options)
        return canonical(name, full)
    return canonical(name, options)


def _reason(message: str, key: str) -> str:
    """A rubric error's message without the location prefix (the key is known)."""
    return (
        message.removeprefix(f"criterion {key!r}: ")
        .removeprefix("shadow: ")
        .removeprefix("shadow_options: ")
    )


def _score(
    kept: Sequence[Candidate], c: Criterion, sp: Split, reg: Registry
) -> tuple[list[tuple[CandidateResult, list[bool]] | None], list[Dropped]]:
    """Each candidate's figures and its answers on the training drafts (None for one
    too slow to keep), in the order of ``kept``."""
    examples: list[Example] = [*sp.train, *sp.heldout]
    texts = [e.draft for e in examples]
    contexts = [make_context(e.task, e.reference, e.metadata, e.transcript) for e in examples]
    truth = [e.met for e in examples]
    cut = len(sp.train)
    out: list[tuple[CandidateResult, list[bool]] | None] = []
    slow: list[Dropped] = []
    checks = [(reg.info(cand.checker), dict(cand.options)) for cand in kept]
    ran_all = predict(checks, c, texts, contexts, CANDIDATE_SECONDS)
    for cand, ran in zip(kept, ran_all, strict=True):
        if ran is None:
            reason = (
                f"used more than {CANDIDATE_SECONDS:g} s over the drafts: too slow to "
                "check every draft"
            )
            slow.append(Dropped(cand.checker, cand.options, cand.origin, reason))
            out.append(None)
            continue
        predicted, errors = ran
        result = CandidateResult(
            cand,
            train=figures(predicted[:cut], truth[:cut]),
            heldout=figures(predicted[cut:], truth[cut:]),
            errors=errors,
        )
        out.append((result, predicted[:cut]))
    return out, slow


def _ranked(results: Sequence[CandidateResult], description: str) -> list[CandidateResult]:
    """Best first by the cross-validated score; among those within :data:`NEAR` of the
    best, the simplest first (:func:`complexity`); then agreement, errors, a value
    the key's description names ("40 words", "please"), the shorter."""
    best = max((r.cv for r in results if r.cv is not None), default=0.0)

    def rank(r: CandidateResult) -> tuple[Any, ...]:
        score = r.cv if r.cv is not None else -2.0
        near = score >= best - NEAR and score > 0
        return (
            not near,
            complexity(r.candidate)[0] if near else 0,
            -score,
            -(r.train.agreement or 0.0),
            r.errors,
            not _named_in(description, r.options),
            len(canonical(r.checker, r.options)),
            r.candidate.label,
        )

    return sorted(results, key=rank)


def _named_in(description: str, options: Mapping[str, Any]) -> bool:
    """Whether a number or a phrase of ``options`` appears in ``description``."""
    text = description.casefold()
    numbers = set(re.findall(r"\d+", text))
    stack: list[Any] = list(options.values())
    while stack:
        v = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int) and str(v) in numbers:
            return True
        if isinstance(v, str) and len(v) >= 3 and v.casefold() in text:
            return True
        if isinstance(v, list | tuple):
            stack.extend(v)
    return False
