"""Generated drafts whose verdicts follow a known rule, for the propose tests.

Each corpus is a list of :class:`Example` rows: short multi-sentence texts from a
small vocabulary in which the words of the rule also appear where they do not
decide anything ("refund" outside "refund policy"), so that only the rule itself
separates the met drafts from the unmet ones.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from gradeloop import Rubric
from gradeloop.migration._propose_evidence import Example

WORDS = [
    "order",
    "shipping",
    "customer",
    "refund",
    "parcel",
    "invoice",
    "delivery",
    "account",
    "payment",
    "support",
    "address",
    "tracking",
    "warehouse",
    "return",
    "label",
    "courier",
    "receipt",
    "balance",
    "policy",
    "update",
    "our",
    "as",
    "an",
    "ai",
    "your",
    "days",
    "thirty",
    "gives",
    "cannot",
    "see",
    "i",
]

RUBRIC = {
    "criteria": [
        {"key": "short", "description": "The reply is at most 80 words long."},
        {"key": "refund", "description": "The reply states the refund policy."},
        {"key": "no_ai", "description": "The reply never says 'as an AI'."},
        {"key": "tone", "description": "The reply sounds warm."},
        {"key": "cites", "description": "Cites the section, e.g. (see 4.2)."},
    ]
}


def rubric() -> Rubric:
    return Rubric.from_dict(RUBRIC)


def sentence(rng: random.Random, words: int) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(words))
    return body[0].upper() + body[1:] + "."


def text(rng: random.Random, words: int, extra: str = "") -> str:
    parts, left = [], words
    while left > 0:
        n = min(left, rng.randint(5, 12))
        parts.append(sentence(rng, n))
        left -= n
    if extra:
        parts.insert(rng.randrange(len(parts) + 1), extra)
    return " ".join(parts)


def length_rule(n: int = 60, seed: int = 0) -> list[Example]:
    """Met when the reply has at most 80 words."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = rng.randint(40, 120)
        draft = text(rng, words)
        out.append(Example(f"L{i}", "", draft, len(draft.split()) <= 80))
    return out


def _says(draft: str, phrase: str) -> bool:
    return f" {phrase} " in " " + " ".join(draft.lower().replace(".", " ").split()) + " "


def required_phrase(n: int = 60, seed: int = 0) -> list[Example]:
    """Met when the reply says "refund policy" (its words also occur apart, and the
    phrase itself may turn up by chance: the verdict is whether it is there)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        extra = "Our refund policy gives you thirty days." if i % 2 == 0 else ""
        draft = text(rng, rng.randint(30, 70), extra)
        out.append(Example(f"R{i}", "", draft, _says(draft, "refund policy")))
    return out


def forbidden_phrase(n: int = 60, seed: int = 0) -> list[Example]:
    """Met unless the reply says "as an AI" (its words also occur apart)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        extra = "As an AI I cannot see your parcel." if i % 3 == 0 else ""
        draft = text(rng, rng.randint(30, 70), extra)
        out.append(Example(f"F{i}", "", draft, not _says(draft, "as an ai")))
    return out


def unexplained(n: int = 60, seed: int = 0) -> list[Example]:
    """Verdicts drawn by coin, independent of the text: no checker can explain them."""
    rng = random.Random(seed)
    return [
        Example(f"U{i}", "", text(rng, rng.randint(30, 70)), rng.random() < 0.5) for i in range(n)
    ]


def write_labels(path: Path, key: str, examples: list[Example]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for e in examples:
            line = {"id": e.output_id, "task": "Answer the customer.", "draft": e.draft}
            f.write(json.dumps({**line, "labels": {key: e.met}}) + "\n")
    return path
