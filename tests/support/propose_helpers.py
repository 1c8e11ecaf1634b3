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


_OPENERS = [
    "Thanks for reaching out.",
    "Sorry about the trouble with your order.",
    "I looked into your order.",
    "Thank you for your patience.",
    "Happy to help with this.",
]
_MIDDLES = [
    "Your parcel left our warehouse yesterday.",
    "Shipping usually takes three to five days.",
    "We have updated your account with the new address.",
    "Our team checked the tracking number.",
    "The courier will contact you before delivery.",
    "You can print the return label from your account.",
    "Changes to your order are possible until it ships.",
    "Our shipping partner handles the delivery.",
    "Our support line answers within 30 minutes.",
    "Your order of 30 items is complete.",
    "The refund desk is open every day.",
    "A refund needs the original receipt.",
]
_CLOSERS = [
    "Let me know if there is anything else.",
    "Have a great day.",
    "We are here if you need us.",
    "Thanks again for shopping with us.",
]
_RIGHT = [
    "You are covered by our 30-day refund policy.",
    "Our 30-day refund applies to this item.",
    "Send it back within the 30-day refund window.",
]
NEAR_MISSES = [
    "You are covered by our 30 day return policy.",
    "Our 60-day refund applies to this item.",
    "Send it back within the 14-day refund window.",
    "You will get a full refund once it arrives.",
    "Our 30-day return policy covers this item.",
]


def exact_phrase(n: int = 60, seed: int = 0) -> list[Example]:
    """Support replies, met exactly when they state the "30-day refund": the unmet ones
    hold a near miss instead ("30 day return", "60-day refund", "14-day refund",
    "full refund"), and "30", "day" and "refund" also turn up where they decide nothing."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        met = i % 2 == 0
        parts = [rng.choice(_OPENERS), *rng.sample(_MIDDLES, rng.randint(1, 3))]
        parts.insert(rng.randrange(1, len(parts) + 1), rng.choice(_RIGHT if met else NEAR_MISSES))
        parts.append(rng.choice(_CLOSERS))
        out.append(Example(f"P{i}", "Answer the customer.", " ".join(parts), met))
    return out


def write_labels(path: Path, key: str, examples: list[Example]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for e in examples:
            line = {"id": e.output_id, "task": "Answer the customer.", "draft": e.draft}
            f.write(json.dumps({**line, "labels": {key: e.met}}) + "\n")
    return path
