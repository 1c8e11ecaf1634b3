"""Accuracy and speed of the ``sentence_len`` checker on the English Golden Rules.

Run: ``python benchmarks/bench_sentence_len.py [--repeat N]``

For each of the 48 cases, with L the word count of its longest gold sentence, a
method scores the case when a limit of L passes and a limit of L - 1 fails. The
checker is measured next to a naive split on ``[.!?]`` followed by whitespace, run
in the same process, and next to pySBD and sentencex when they are installed. Times
are milliseconds per case (the best of ``--repeat`` passes over the suite) and the
ratio to the naive split.

A second table times the checker on large and hostile drafts (unclosed brackets,
runs of dots, many abbreviations) against the naive split of the same text, to show
that the cost stays linear in the length of the draft.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from gradeloop_checkers.sentence_len import sentence_len
from gradeloop_checkers.sentence_len._segment import count_words

DATA = Path(__file__).parent / "data" / "golden_rules_en.json"
Case = dict[str, object]
Passes = Callable[[str, int], bool]  # (text, max_words) -> passed


def load_cases() -> list[Case]:
    """The 48 cases: ``text``, gold ``sentences`` and pySBD's own ``xfail`` mark."""
    cases: list[Case] = json.loads(DATA.read_text(encoding="utf-8"))
    return cases


def longest_gold(case: Case) -> int:
    """L: the word count of the case's longest gold sentence."""
    gold = case["sentences"]
    assert isinstance(gold, list)
    return max(count_words(str(s)) for s in gold)


def score(passes: Passes, cases: list[Case]) -> tuple[int, list[int]]:
    """How many cases pass at L and fail at L - 1, and the indexes of the others."""
    missed = []
    for i, case in enumerate(cases):
        text, limit = str(case["text"]), longest_gold(case)
        if not (passes(text, limit) and (limit <= 1 or not passes(text, limit - 1))):
            missed.append(i)
    return len(cases) - len(missed), missed


def ms_per_case(passes: Passes, cases: list[Case], repeat: int) -> float:
    """Best-of-``repeat`` milliseconds per case for one pass at the case's L."""
    work = [(str(c["text"]), longest_gold(c)) for c in cases]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text, limit in work:
            passes(text, limit)
        best = min(best, time.perf_counter() - start)
    return best * 1000 / len(work)


def from_splitter(split: Callable[[str], list[str]]) -> Passes:
    """A pass/fail rule built on any sentence splitter and the checker's word count."""
    return lambda text, limit: all(count_words(s) <= limit for s in split(text))


_NAIVE = re.compile(r"(?<=[.!?])\s+")


def methods() -> dict[str, Passes]:
    """The checker, the naive baseline, and the optional third-party splitters."""
    found: dict[str, Passes] = {
        "sentence_len": lambda text, limit: sentence_len(text, max_words=limit).passed,
        "naive regex": from_splitter(_NAIVE.split),
    }
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        found["pysbd"] = from_splitter(segmenter.segment)
    except ImportError:
        pass
    try:
        import sentencex

        found["sentencex"] = from_splitter(lambda t: list(sentencex.segment("en", t)))
    except ImportError:
        pass
    return found


STRESS = {
    "plain prose": "The cache is warm. It serves 5 requests per ms. Dr. Lee agrees. " * 2000,
    "Markdown doc": "## Step\n\n- Run `x.y()` now\n\n```py\nprint(1)\n```\n\nSee [a](b). " * 2000,
    "open brackets": "[a " * 20000,
    "open tags": "<a@b " * 20000,
    "spaced dots": ". " * 20000,
    "A. Mr. chain": "A. Mr. " * 20000,
}


def stress(repeat: int) -> None:
    """Milliseconds per 100,000 characters on large drafts, next to the naive split."""
    naive = from_splitter(_NAIVE.split)
    checker = methods()["sentence_len"]
    print(f"\n{'large draft':<14}{'chars':>8}{'ms/100k':>10}{'naive':>9}{'ratio':>8}")
    for name, text in STRESS.items():
        per = 100_000 / len(text)
        ours = ms_per_case(checker, [{"text": text, "sentences": ["x"]}], repeat) * per
        base = ms_per_case(naive, [{"text": text, "sentences": ["x"]}], repeat) * per
        print(f"{name:<14}{len(text):>8}{ours:>10.1f}{base:>9.2f}{ours / base:>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed passes (best kept)")
    args = parser.parse_args()
    cases = load_cases()
    rows = []
    for name, passes in methods().items():
        right, missed = score(passes, cases)
        rows.append((name, right, ms_per_case(passes, cases, max(1, args.repeat)), missed))
    baseline = next(ms for name, _, ms, _ in rows if name == "naive regex")
    print(f"English Golden Rules: {len(cases)} cases, best of {args.repeat} passes")
    print(f"{'method':<14}{'score':>8}{'ms/case':>10}{'× naive':>9}  missed (0-based)")
    for name, right, ms, missed in rows:
        shown = ", ".join(map(str, missed)) or "-"
        print(f"{name:<14}{right:>5}/{len(cases)}{ms:>10.4f}{ms / baseline:>9.1f}  {shown}")
    stress(max(1, args.repeat // 10))


if __name__ == "__main__":
    main()
