"""Phrases, number patterns and headings that separate met drafts from unmet ones.

Each draft is read once per pass into a set of *features* (word n-grams, number
patterns, Markdown headings), and each feature is counted in met and unmet drafts:
every pass is linear in the text, with no regular expression that can backtrack.
Word n-grams are grown a word at a time from n-grams frequent enough to matter, so
a long or hostile draft adds its length to the work, never its length squared. A
word keeps its digits and inner hyphens (``30-day``), so the exact phrase a rule
names is a feature of its own, apart from its near misses (``60-day refund``).

From the counts come single-feature candidates (``contains`` a phrase, or
``not_contains`` it; ``regex`` for a number pattern; ``required_sections`` for a
heading) and greedy combinations: the phrases that together best reproduce the
verdicts (``contains`` all of them, any of them, or ``not_contains`` any of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial

__all__ = ["Features", "Proposal", "heading_features", "kappa_of", "phrase_features"]

Proposal = tuple[str, dict[str, object], str]  # (checker, options, why)

MAX_N = 3  # words in a phrase
MAX_WORD = 40  # characters: a longer "word" is no phrase anyone would require
MAX_SEPARATOR = 3  # characters between the words of a number pattern
SINGLES = 3  # single-feature candidates kept per checker and direction
POOL = 30  # features considered for combinations
MAX_VALUES = 6  # features in one combination

_WORD = re.compile(r"\w+")  # one run of word characters: linear, no backtracking
# A phrase's word keeps its inner hyphens ("30-day", "follow-up"): the exact phrase a
# rule names ("30-day refund") is then a phrase, and "60-day refund" is another.
# Each hyphen must be followed by a word character: no run can be tried twice.
_PHRASE_WORD = re.compile(r"\w+(?:-\w+)*+")


def kappa_of(a: int, b: int, c: int, d: int) -> float:
    """Cohen's kappa of predicted met (``a`` + ``b``) against labelled met (``a`` + ``c``);
    ``b``: predicted met, labelled unmet; ``d``: both unmet. 0 when undefined."""
    n = a + b + c + d
    if not n:
        return 0.0
    po = (a + d) / n
    pred, label = (a + b) / n, (a + c) / n
    pe = pred * label + (1 - pred) * (1 - label)
    return 0.0 if pe >= 1 else (po - pe) / (1 - pe)


@dataclass
class Features:
    """Document frequency of each feature among met and unmet drafts."""

    texts: Sequence[str]
    met: Sequence[bool]
    min_support: int

    hint: str = ""  # the key's description: among equals, a feature it names comes first

    def __post_init__(self) -> None:
        self.hint = self.hint.casefold()
        self.n_met = sum(1 for m in self.met if m)
        self.n_unmet = len(self.met) - self.n_met
        self.counts: dict[str, list[int]] = {}

    def count(self, featurize: Callable[[str], Iterable[str]]) -> dict[str, list[int]]:
        """Count every feature ``featurize`` finds (each once per draft); keep and
        return those in at least ``min_support`` drafts."""
        found: dict[str, list[int]] = {}
        for text, met in zip(self.texts, self.met, strict=True):
            slot = 0 if met else 1
            for feature in set(featurize(text)):
                found.setdefault(feature, [0, 0])[slot] += 1
        kept = {f: c for f, c in found.items() if c[0] + c[1] >= self.min_support}
        self.counts.update(kept)
        return kept

    def ranked(self, present_means_met: bool, among: Iterable[str] | None = None) -> list[str]:
        """Features best first by kappa when presence predicts met (or unmet)."""
        scored = []
        for feature in self.counts if among is None else among:
            k = self.kappa([feature], present_means_met, any_of=True)
            named = feature in self.hint
            scored.append((-k, not named, -sum(self.counts[feature]), feature.count(" "), feature))
        scored.sort()
        return [s[-1] for s in scored if s[0] < 0]

    def kappa(self, features: Sequence[str], present_means_met: bool, *, any_of: bool) -> float:
        """Kappa of "met iff any (or all) of ``features`` present" (negated when
        ``present_means_met`` is False), from the counts of a single feature, or from
        the masks of several."""
        if len(features) == 1:
            in_met, in_unmet = self.counts[features[0]]
        else:
            mask = self._combined(features, any_of)
            in_met = (mask & self._met_mask).bit_count()
            in_unmet = mask.bit_count() - in_met
        if present_means_met:
            return kappa_of(in_met, in_unmet, self.n_met - in_met, self.n_unmet - in_unmet)
        return kappa_of(self.n_met - in_met, self.n_unmet - in_unmet, in_met, in_unmet)

    def load_masks(self, featurize: Callable[[str], Iterable[str]], pool: Sequence[str]) -> None:
        """One more pass: which drafts hold each feature of ``pool`` (bit i: draft i)."""
        wanted = set(pool)
        self._masks = dict.fromkeys(wanted, 0)
        self._met_mask = sum(1 << i for i, m in enumerate(self.met) if m)
        for i, text in enumerate(self.texts):
            for feature in set(featurize(text)) & wanted:
                self._masks[feature] |= 1 << i

    def _combined(self, features: Sequence[str], any_of: bool) -> int:
        masks = [self._masks[f] for f in features]
        out = masks[0]
        for m in masks[1:]:
            out = out | m if any_of else out & m
        return out

    def greedy(self, start: Sequence[str], present_means_met: bool, any_of: bool) -> list[str]:
        """Add features from ``start`` (best first) while the combination's kappa rises."""
        pool = [f for f in start if f in self._masks]
        if not pool:
            return []
        chosen = [pool[0]]
        best = self.kappa(chosen, present_means_met, any_of=any_of)
        while len(chosen) < MAX_VALUES:
            trials = [
                (self.kappa([*chosen, f], present_means_met, any_of=any_of), f)
                for f in pool
                if f not in chosen
            ]
            if not trials:
                break
            k, f = max(trials, key=lambda t: t[0])
            if k <= best + 1e-12:
                break
            chosen.append(f)
            best = k
        return chosen


# -- featurizers ----------------------------------------------------------------------


def _words(text: str) -> Iterator[tuple[str, bool]]:
    """Each word (lowercased, inner hyphens kept) and whether exactly one space
    separates it from the last."""
    lowered = text.lower()
    end = -1
    for m in _PHRASE_WORD.finditer(lowered):
        start = m.start()
        yield m.group(), start == end + 1 and lowered[end] == " " if end > 0 else False
        end = m.end()


def _grams(text: str, n: int, allowed: set[str] | None) -> Iterator[str]:
    """Runs of ``n`` words joined by single spaces (the form ``contains`` searches),
    each (n-1)-word part in ``allowed`` when given; words over :data:`MAX_WORD` break runs."""
    run: list[str] = []
    for word, joined in _words(text):
        if len(word) > MAX_WORD:
            run = []
            continue
        run = [*run[-(n - 1) :], word] if joined and n > 1 else [word]
        if len(run) == n and (
            allowed is None
            or n == 1
            or (" ".join(run[:-1]) in allowed and " ".join(run[1:]) in allowed)
        ):
            yield " ".join(run)


def phrase_features(f: Features) -> Callable[[str], Iterable[str]]:
    """Count phrases of 1 to :data:`MAX_N` words, each grown from frequent parts; the
    featurizer of every kept phrase (for :meth:`Features.load_masks`)."""
    allowed: set[str] | None = None
    kept: set[str] = set()
    for n in range(1, MAX_N + 1):
        found = f.count(partial(_grams, n=n, allowed=allowed))
        allowed = set(found)
        kept |= allowed
        if not allowed:
            break
    return lambda text: (g for n in range(1, MAX_N + 1) for g in _grams(text, n, None) if g in kept)


def number_patterns(text: str) -> Iterator[str]:
    """Patterns of up to :data:`MAX_N` words with each number generalised (``see 4.4``
    and ``see 12.1`` are both ``see \\d{1,9}\\.\\d{1,9}``); only those with a number."""
    run: list[tuple[str, str]] = []  # (pattern part, separator before it)
    last_end = -1
    for m in _WORD.finditer(text):
        word, gap = m.group(), m.start() - last_end
        # the separator is sliced only when short: a long one breaks the run anyway
        sep = text[last_end : m.start()] if last_end >= 0 and gap <= MAX_SEPARATOR else ""
        last_end = m.end()
        if len(word) > MAX_WORD or (word.isdecimal() and len(word) > 9):
            run = []
            continue
        part = _NUMBER if word.isdecimal() else _escape(word.lower())
        joined = bool(sep) and "\n" not in sep
        run = [*run[-(MAX_N - 1) :], (part, sep)] if joined else [(part, "")]
        for size in range(1, len(run) + 1):
            tail = run[-size:]
            numbers = sum(1 for p, _ in tail if p == _NUMBER)
            if 0 < numbers < size:
                body = tail[0][0] + "".join(_escape(s) + p for p, s in tail[1:])
                yield rf"(?<!\w){body}(?!\w)"


_NUMBER = r"\d{1,9}"
_SPECIAL = frozenset(".^$*+?{}[]\\|()")


def _escape(text: str) -> str:
    """``re.escape`` for the characters that need it only (a space stays a space)."""
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)


def heading_features(text: str) -> Iterator[str]:
    """The titles of the Markdown ATX headings outside fenced code, casefolded."""
    fence = ""
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) > 3:
            continue
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            fence = "" if fence == marker else (fence or marker)
            continue
        if fence or not stripped.startswith("#"):
            continue
        level = len(stripped) - len(stripped.lstrip("#"))
        rest = stripped[level:]
        if level > 6 or not rest[:1].isspace():
            continue
        title = " ".join(rest.strip().rstrip("#").split()).casefold()
        if title and len(title) <= 80:
            yield title


def combinations(f: Features, featurize: Callable[[str], Iterable[str]]) -> list[Proposal]:
    """Single phrases and greedy combinations for ``contains`` / ``not_contains``."""
    out: list[Proposal] = []
    required, forbidden = f.ranked(True), f.ranked(False)
    common = {"ignore_case": True, "whole_word": True}
    for phrase in required[:SINGLES]:
        why = f"in {_share(f, phrase, 0)} of met drafts, {_share(f, phrase, 1)} of unmet"
        out.append(("contains", {"values": [phrase], **common}, why))
    for phrase in forbidden[:SINGLES]:
        why = f"in {_share(f, phrase, 1)} of unmet drafts, {_share(f, phrase, 0)} of met"
        out.append(("not_contains", {"values": [phrase], **common}, why))
    f.load_masks(featurize, [*required[:POOL], *forbidden[:POOL]])
    for checker, mode, pool, means_met, any_of in (
        ("contains", "all", required, True, False),
        ("contains", "any", required, True, True),
        ("not_contains", "any", forbidden, False, True),
    ):
        chosen = f.greedy(pool[:POOL], means_met, any_of)
        if len(chosen) > 1:
            why = f"the {len(chosen)} phrases that together best match the verdicts"
            out.append((checker, {"values": chosen, "mode": mode, **common}, why))
    return out


def _share(f: Features, feature: str, slot: int) -> str:
    total = f.n_met if slot == 0 else f.n_unmet
    return f"{f.counts[feature][slot]}/{total}"
