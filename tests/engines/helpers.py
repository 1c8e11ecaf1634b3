"""What the engine tests share: drafts, a rubric of code and judge keys, the
emulator's deterministic verdicts, and a judge each Ray actor builds for itself."""

from __future__ import annotations

import hashlib
from typing import Any

from gradeloop import Rubric
from gradeloop.testing import verdict_reply

MODEL = "claude-haiku-4-5"

RUBRIC = Rubric.from_dict(
    {
        "name": "engines",
        "criteria": [
            {"key": "short", "description": "No sentence is longer than 12 words.",
             "checker": "sentence_len", "options": {"max_words": 12}, "shadow": "judge"},
            {"key": "cites", "description": "Cites a section number."},
            {"key": "polite", "description": "The tone is polite."},
        ],
    }
)  # fmt: skip

WORDS = ("alpha", "beta", "gamma", "delta", "see", "section", "please", "thanks", "now")


def drafts(n: int, *, start: int = 0) -> list[dict[str, Any]]:
    """``n`` different drafts with ids ``d00000``...; some sentences run long, and
    each belongs to one of 7 clusters (its "source")."""
    out = []
    for i in range(start, start + n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(8 + i % 9)]
        out.append(
            {
                "id": f"d{i:05d}",
                "draft": f"Draft {i}: " + " ".join(words) + ".",
                "task": "Write a short, polite note.",
                "source": f"s{i % 7}",
                "labels": {"cites": i % 3 != 0, "polite": i % 5 != 0},
            }
        )
    return out


def met(text: str, key: str) -> bool:
    """The emulator's verdict on ``key``: a fixed coin per request text and key."""
    return hashlib.sha256(f"{key}|{text}".encode()).digest()[0] % 3 != 0


def verdict_for(body: dict[str, Any]) -> Any:
    """A verdict on exactly the keys the request asks about, decided by :func:`met`
    on the request's messages."""
    schema = (body.get("output_config") or {}).get("format", {}).get("schema", {})
    keys = schema.get("$defs", {}).get("CriteriaMet", {}).get("required", [])
    text = "".join(
        m["content"] if isinstance(m["content"], str) else str(m["content"])
        for m in body["messages"]
    )
    verdict = {k: met(text, k) for k in keys}
    return verdict_reply(
        {
            "reasoning": "Checked.",
            "criteria_met": verdict,
            "passed": all(verdict.values()),
            "issues": [f"{k} is not met" for k, v in verdict.items() if not v],
        }
    )


def emulator_judge(base_url: str) -> Any:
    """A judge on a real SDK client pointed at the emulator (built in each actor)."""
    from gradeloop import AnthropicJudge, make_client

    return AnthropicJudge(make_client(api_key="test-key", base_url=base_url), model=MODEL)
