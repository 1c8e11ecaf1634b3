"""Accuracy and speed of the ``sentence_len`` checker on the English Golden Rules.

Run: ``python benchmarks/bench_sentence_len.py [--repeat N]``

For each of the 48 cases, with L the word count of its longest gold sentence, a
method scores the case when a limit of L passes and a limit of L - 1 fails. The
checker is measured next to a naive split on ``[.!?]`` followed by whitespace, run
in the same process, and next to pySBD and sentencex when they are installed. Times
are milliseconds per case (the best of ``--repeat`` passes over the suite) and the
ratio to the naive split.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from gradeloop_checkers._segment import count_words
from gradeloop_checkers.sentence_len import sentence_len

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


if __name__ == "__main__":
    main()
