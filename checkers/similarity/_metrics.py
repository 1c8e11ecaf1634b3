"""Text similarity figures, 0.0 to 1.0, each linear in Python steps.

The metrics of OpenAI's ``text_similarity`` grader that need no model: ``fuzzy_match``
(the normalised indel similarity of the two strings, as rapidfuzz's ``fuzz.ratio``
/ 100), ``bleu`` (BLEU-4 over whitespace tokens: uniform weights, the brevity penalty,
add-one smoothing of the 2- to 4-gram precisions as Lin and Och 2004 propose), ``gleu``
(Google-BLEU: the smaller of n-gram precision and recall, 1- to 4-grams pooled),
``rouge_1`` ... ``rouge_5`` (the F1 of n-gram overlap) and ``rouge_l`` (the F1 of the
longest common subsequence), ROUGE over lower-cased alphanumeric tokens as the
``rouge_score`` package tokenises them. OpenAI does not publish its implementations, so
figures near a threshold may differ from its own.

The longest common subsequence is the bit-parallel algorithm (Hyyrö 2004): one pass
over the longer sequence with integer operations on a bit vector as long as the shorter
one, so its Python steps grow linearly; the machine work grows as n x m / 64.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence

__all__ = ["METRICS", "lcs_length", "similarity"]

_WORD = re.compile(r"[a-z0-9]+")


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``."""
    if len(a) > len(b):
        a, b = b, a
    if not a:
        return 0
    masks: dict[Hashable, int] = {}
    for i, x in enumerate(a):
        masks[x] = masks.get(x, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for y in b:
        u = v & masks.get(y, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def _fuzzy(text: str, reference: str) -> float:
    total = len(text) + len(reference)
    return 1.0 if total == 0 else 2 * lcs_length(text, reference) / total


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _bleu(text: str, reference: str) -> float:
    hyp, ref = text.split(), reference.split()
    if not hyp or not ref:
        return 1.0 if hyp == ref else 0.0
    logs = 0.0
    for n in range(1, 5):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        matched, total = sum((h & r).values()), sum(h.values())
        if n > 1:  # add-one smoothing: a short text is not zeroed by one missing order
            matched, total = matched + 1, total + 1
        if matched == 0 or total == 0:
            return 0.0
        logs += math.log(matched / total) / 4
    brevity = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return brevity * math.exp(logs)


def _gleu(text: str, reference: str) -> float:
    hyp, ref = text.split(), reference.split()
    matched = hyp_total = ref_total = 0
    for n in range(1, 5):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        matched += sum((h & r).values())
        hyp_total += sum(h.values())
        ref_total += sum(r.values())
    if hyp_total == 0 or ref_total == 0:
        return 1.0 if hyp_total == ref_total else 0.0
    return min(matched / hyp_total, matched / ref_total)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _f1(overlap: int, produced: int, wanted: int) -> float:
    if produced == 0 or wanted == 0:
        return 1.0 if produced == wanted else 0.0
    precision, recall = overlap / produced, overlap / wanted
    return 0.0 if overlap == 0 else 2 * precision * recall / (precision + recall)


def _rouge(n: int) -> Callable[[str, str], float]:
    def rouge(text: str, reference: str) -> float:
        h, r = _ngrams(_words(text), n), _ngrams(_words(reference), n)
        return _f1(sum((h & r).values()), sum(h.values()), sum(r.values()))

    return rouge


def _rouge_l(text: str, reference: str) -> float:
    h, r = _words(text), _words(reference)
    return _f1(lcs_length(h, r), len(h), len(r))


METRICS: dict[str, Callable[[str, str], float]] = {
    "fuzzy_match": _fuzzy,
    "bleu": _bleu,
    "gleu": _gleu,
    **{f"rouge_{n}": _rouge(n) for n in range(1, 6)},
    "rouge_l": _rouge_l,
}


def similarity(metric: str, text: str, reference: str) -> float:
    """``metric``'s figure for ``text`` against ``reference``, 0.0 to 1.0."""
    return float(METRICS[metric](text, reference))
