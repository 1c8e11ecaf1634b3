"""What scoring candidates costs over running their checks directly (``gradeloop propose``).

Run: ``python benchmarks/bench_propose.py [--drafts N] [--candidates K] [--repeat R]``

Builds ``--drafts`` (2,000 unless told) ~1 KB Markdown drafts with a known verdict,
and ``--candidates`` (50) candidates of the kinds mining produces (``length`` and
``sentence_len`` thresholds, ``contains`` / ``not_contains`` phrases, ``regex``
patterns, ``required_sections``, checkers with their defaults), each validated as a
rubric's shadow. Then times, in CPU seconds of this process (``time.process_time``),
best of ``--repeat`` rounds:

* **direct**: every check called on every draft (``fn(text, **options)``, draft by
  draft as ``grade()`` does, so the Markdown scan cache helps both sides alike);
* **scoring**: what ``propose_checkers`` does with the same candidates and drafts
  (``_score``: the calls, each answer read as a shadow's, the per-check time budget,
  and the figures on train and held-out).

It prints scoring ÷ direct (target: at most 1.5), and for reference the time of the
whole ``propose_checkers`` (mining included) on the same drafts. Nothing asserts.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradeloop import Rubric
from gradeloop.grading._registry import default_registry
from gradeloop.migration import propose_checkers
from gradeloop.migration._propose import _score
from gradeloop.migration._propose_candidates import Candidate, bind
from gradeloop.migration._propose_evidence import Example, split

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.support.propose_helpers
from tests.support.propose_helpers import WORDS

TARGET = 1.5
RUBRIC = Rubric.from_dict({"criteria": [{"key": "k", "description": "At most 150 words."}]})


def draft(rng: random.Random) -> str:
    """A ~1 KB Markdown reply: a heading, two or three paragraphs, sometimes a list."""
    parts = ["# Your order", ""]
    for _ in range(rng.randint(2, 3)):
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30))).capitalize() + "."
            for _ in range(rng.randint(2, 4))
        ]
        parts += [" ".join(sentences), ""]
    if rng.random() < 0.5:
        parts += ["## Next steps", "", "- check the tracking page", "- reply to this mail", ""]
    if rng.random() < 0.3:
        parts.append("Our refund policy gives you 30 days (see 4.2).")
    return "\n".join(parts)


def candidates(rng: random.Random) -> list[Candidate]:
    raw: list[tuple[str, dict[str, Any]]] = []
    for t in range(100, 240, 20):
        raw += [("length", {"max_words": t}), ("length", {"max_chars": t * 7})]
    raw += [("length", {"min_words": t}) for t in (60, 80, 100)]
    raw += [("length", {"min_chars": t}) for t in (300, 500, 700)]
    raw += [("starts_with", {"value": "# Your order"}), ("ends_with", {"value": "mail"})]
    raw += [("sentence_len", {"max_words": t}) for t in (20, 25, 30, 35, 40)]
    for w in rng.sample(WORDS, 8):
        raw.append(("contains", {"values": [w], "ignore_case": True, "whole_word": True}))
        raw.append(("not_contains", {"values": [w], "ignore_case": True, "whole_word": True}))
    raw.append(
        (
            "contains",
            {
                "values": ["refund policy", "days"],
                "mode": "all",
                "ignore_case": True,
                "whole_word": True,
            },
        )
    )
    raw += [
        ("regex", {"pattern": r"(?<!\w)see \d{1,9}\.\d{1,9}(?!\w)", "ignore_case": True}),
        ("regex", {"pattern": r"(?<!\w)\d{1,9} days(?!\w)", "must_match": False}),
        ("required_sections", {"sections": ["next steps"]}),
        ("required_sections", {"sections": ["your order", "next steps"]}),
        ("json_valid", {}),
        ("no_placeholders", {}),
    ]
    reg = default_registry()
    return [Candidate(name, bind(RUBRIC, "k", name, opts, reg)) for name, opts in raw]


def best_of(repeat: int, fn: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=2000)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(33)
    texts = [draft(rng) for _ in range(args.drafts)]
    examples = [Example(str(i), "", t, len(t.split()) <= 150) for i, t in enumerate(texts)]
    chosen = candidates(rng)[: args.candidates]
    reg = default_registry()
    checks = [(reg.info(c.checker).fn, dict(c.options)) for c in chosen]
    sp = split(examples, 0)
    ordered = [e.draft for e in (*sp.train, *sp.heldout)]

    def direct() -> None:
        for text in ordered:
            for fn, options in checks:
                fn(text, **options)

    def scoring() -> None:
        _score(chosen, RUBRIC["k"], sp, reg)

    direct(), scoring()  # warm: the regex and option caches, the imports
    d = best_of(args.repeat, direct)
    s = best_of(args.repeat, scoring)
    started = time.process_time()
    proposal = propose_checkers(RUBRIC, "k", examples, use_model=False)
    whole = time.process_time() - started
    print(f"python {platform.python_version()}, {len(texts)} drafts, {len(chosen)} candidates")
    print(f"direct:  {d:.3f} s CPU ({d / (len(texts) * len(chosen)) * 1e6:.1f} us a check)")
    print(f"scoring: {s:.3f} s CPU")
    ratio = s / d
    verdict = "met" if ratio <= TARGET else "NOT met"
    print(f"scoring / direct: {ratio:.2f} (target <= {TARGET}: {verdict})")
    winner = proposal.winner
    label = winner.candidate.label if winner else "none"
    print(
        f"whole propose_checkers (mining {len(proposal.candidates)} candidates, scoring): "
        f"{whole:.3f} s CPU; winner {label}"
    )


if __name__ == "__main__":
    main()
