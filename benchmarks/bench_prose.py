"""Sentence boundaries of ``sentence_len`` on real prose, beside pySBD and sentencex.

Run: ``python benchmarks/bench_prose.py [--show N]``

The comparison splitters are not project dependencies; install them into the
environment that runs this script (the figures in benchmarks/README.md used
pySBD 0.3.4 and sentencex 1.0.32)::

    pip install pysbd==0.3.4 sentencex==1.0.32

The text is 200 paragraphs of CPython's documentation (``data/cpython_prose.json``,
built by ``scripts/cpython_prose/make_paragraphs.py``; source, commit and
licence in ``data/README.md``), rendered as Markdown. For each paragraph the checker's
sentences (:func:`gradeloop_checkers.sentence_len.sentences`) are joined into one
plain text, and that same text is what pySBD and sentencex split: all three see
the prose the checker sees (code spans kept, link addresses dropped), so a
boundary is comparable as "after the k-th word".

It prints:

* agreement: paragraphs where the checker's boundaries equal each splitter's;
* a breakdown of every boundary the checker and a splitter disagree on, by what
  surrounds it (a lower-case next word, an abbreviation, a code span...) and by
  which side splits there;
* the hand check: ``data/cpython_prose_checked.json`` holds the correct sentences
  of a sample of paragraphs, decided by reading them (every paragraph where the
  checker disagreed with either splitter when the sample was made). Each method's
  exact matches on that sample are counted, and the checker's misses listed.

The same script runs on an older checkout (put its ``checkers`` on the path as
``gradeloop_checkers``), which is how the "before" figures were measured.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from gradeloop_checkers.sentence_len import sentences

DATA = Path(__file__).parent / "data"
Splitter = Callable[[str], list[str]]
Boundaries = frozenset[int]

_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.){2,}$|^(?:etc|vs|cf|al|Mr|Dr|No|approx)\.$", re.I)
_TERMINAL = ".!?…"


def load() -> tuple[list[dict[str, str]], dict[str, list[str]]]:
    """The paragraphs and the hand-checked sentences (by paragraph id)."""
    prose = json.loads((DATA / "cpython_prose.json").read_text(encoding="utf-8"))
    checked = json.loads((DATA / "cpython_prose_checked.json").read_text(encoding="utf-8"))
    return prose["paragraphs"], {k: v["sentences"] for k, v in checked["paragraphs"].items()}


def ours(text: str) -> list[str]:
    """The checker's sentences of one Markdown paragraph, as plain text."""
    return [s.text for s in sentences(text)]


def others() -> dict[str, Splitter]:
    """pySBD and sentencex, those of them that are installed."""
    found: dict[str, Splitter] = {}
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        found["pysbd"] = segmenter.segment
    except ImportError:
        print("pySBD is not installed: pip install pysbd==0.3.4")
    try:
        import sentencex

        found["sentencex"] = lambda t: list(sentencex.segment("en", t))
    except ImportError:
        print("sentencex is not installed: pip install sentencex==1.0.32")
    return found


def boundaries(parts: list[str]) -> Boundaries:
    """The non-blank character counts after which a sentence ends (the last one excluded)."""
    cuts, chars = [], 0
    for part in parts:
        chars += _solid(part)
        cuts.append(chars)
    return frozenset(cuts[:-1])


def _solid(text: str) -> int:
    """The number of non-blank characters of ``text``."""
    return len(text) - sum(text.count(c) for c in " \t\n\r\xa0")


def chars_of(parts: list[str]) -> int:
    return sum(_solid(p) for p in parts)


def kind(flat: str, cut: int) -> str:
    """What surrounds the boundary after non-blank character ``cut`` of ``flat``."""
    words, seen, k = flat.split(), 0, 0
    while k < len(words) and seen + len(words[k]) < cut:
        seen += len(words[k])
        k += 1
    if k < len(words) and seen + len(words[k]) != cut:  # a cut inside a word
        if "".join(words)[:cut].count("`") % 2:
            return "inside a code span"
        return "inside a word (io. | TextIOBase)"
    before, after = words[k], words[k + 1] if k + 1 < len(words) else ""
    bare = before.rstrip("\"')]*_")
    nxt = after.lstrip("\"'([*_“‘")
    if "`" in before or after.startswith("`"):
        return "code span next to it"
    if not bare or bare[-1] not in _TERMINAL:
        return "no terminator (a colon, a list)"
    if _ABBREVIATION.search(bare) or bare.lower() in ("e.g.", "i.e."):
        return "after an abbreviation"
    if bare[-1] == "." and bare[:-1].replace(".", "").isdigit():
        return "after a number"
    if nxt[:1].islower():
        return "lower-case next word"
    if before != bare:
        return "quote or bracket after the mark"
    return "capitalised next word" if nxt[:1].isupper() else "a digit or symbol next"


def compare(
    paragraphs: list[dict[str, str]], splitters: dict[str, Splitter]
) -> tuple[dict[str, int], dict[str, Counter[tuple[str, str]]], list[tuple[str, str, list[str]]]]:
    """Agreement counts, the disagreement breakdown, and the paragraphs that differ."""
    agree: dict[str, int] = dict.fromkeys(splitters, 0)
    agree["all three"] = 0
    breakdown: dict[str, Counter[tuple[str, str]]] = {name: Counter() for name in splitters}
    differ: list[tuple[str, str, list[str]]] = []
    for p in paragraphs:
        mine = ours(p["text"])
        flat = " ".join(mine)
        cuts = boundaries(mine)
        same_all = True
        for name, split in splitters.items():
            theirs = split(flat)
            other = boundaries(theirs) if chars_of(theirs) == _solid(flat) else None
            if other == cuts:
                agree[name] += 1
                continue
            same_all = False
            differ.append((p["id"], name, theirs))
            if other is None:
                breakdown[name][("(their text differs from ours)", "-")] += 1
                continue
            for cut in sorted(cuts ^ other):
                side = "only sentence_len splits" if cut in cuts else f"only {name} splits"
                breakdown[name][(kind(flat, cut), side)] += 1
        agree["all three"] += same_all
    return agree, breakdown, differ


def hand_check(
    paragraphs: list[dict[str, str]], checked: dict[str, list[str]], splitters: dict[str, Splitter]
) -> tuple[dict[str, int], list[tuple[str, list[str], list[str]]]]:
    """Exact matches with the hand-checked sentences, and the checker's misses."""
    right: dict[str, int] = dict.fromkeys(["sentence_len", *splitters], 0)
    misses: list[tuple[str, list[str], list[str]]] = []
    by_id = {p["id"]: p for p in paragraphs}
    for pid, gold in checked.items():
        mine = ours(by_id[pid]["text"])
        flat = " ".join(mine)
        want = boundaries(gold) if chars_of(gold) == _solid(flat) else None
        if want is None:
            print(f"  {pid}: the hand-checked sentences do not add up to the text; skipped")
            continue
        if boundaries(mine) == want:
            right["sentence_len"] += 1
        else:
            misses.append((pid, gold, mine))
        for name, split in splitters.items():
            theirs = split(flat)
            right[name] += chars_of(theirs) == _solid(flat) and boundaries(theirs) == want
    return right, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=0, help="print N differing paragraphs")
    args = parser.parse_args()
    paragraphs, checked = load()
    splitters = others()
    agree, breakdown, differ = compare(paragraphs, splitters)
    total = len(paragraphs)
    print(f"{total} paragraphs of CPython's documentation")
    for name, count in agree.items():
        label = f"sentence_len = {name}" if name != "all three" else "all three agree"
        print(f"  {label:<28}{count:>4}/{total}")
    for name, counts in breakdown.items():
        print(f"\nboundaries where sentence_len and {name} differ")
        for (why, side), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {count:>4}  {why:<34}{side}")
    right, misses = hand_check(paragraphs, checked, splitters)
    print(f"\nhand check: {len(checked)} paragraphs read and split by hand")
    for name, count in right.items():
        print(f"  {name:<14}{count:>4}/{len(checked)} exactly right")
    for pid, gold, mine in misses:
        print(f"\n  sentence_len misses {pid}\n    right:  {gold}\n    ours:   {mine}")
    for pid, name, theirs in differ[: max(0, args.show)]:
        text = next(p["text"] for p in paragraphs if p["id"] == pid)
        print(f"\n{pid} ({name})\n  ours:   {ours(text)}\n  theirs: {theirs}")


if __name__ == "__main__":
    main()
