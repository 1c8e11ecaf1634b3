"""Judges for the reward tests: answers that depend on the draft, failures on cue."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from gradeloop import Criterion, Rubric, Verdict
from gradeloop.errors import JudgeError

RUBRIC = Rubric.from_dict(
    {
        "name": "greetings",
        "criteria": [
            {
                "key": "short",
                "description": "At most 5 words.",
                "checker": "length",
                "options": {"max_words": 5},
            },
            {"key": "polite", "description": "The reply is polite."},
        ],
    }
)
CODE_ONLY = Rubric.from_dict(
    {
        "criteria": [
            {
                "key": "short",
                "description": "At most 5 words.",
                "checker": "length",
                "options": {"max_words": 5},
            },
            {
                "key": "greets",
                "description": "Says hello.",
                "checker": "contains",
                "options": {"values": ["hello"], "ignore_case": True},
            },
        ]
    }
)


class WordJudge:
    """Every asked key met unless the draft says ``rude``; a draft that says ``fail``
    makes it raise a JudgeError (an outage on that draft). Thread-safe call log."""

    def __init__(self, model: str = "judge-a", unmet_word: str = "rude") -> None:
        self.model = model
        self.unmet_word = unmet_word
        self.drafts: list[str] = []
        self.tasks: list[str] = []
        self._lock = threading.Lock()

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        with self._lock:
            self.drafts.append(draft)
            self.tasks.append(task)
        if "fail" in draft:
            raise JudgeError("the API answered 500 three times", reason="api_error")
        met = self.unmet_word not in draft
        return Verdict(
            reasoning="read it",
            criteria_met={c.key: met for c in criteria if c.scale == "pass_fail"},
            passed=met,
            issues=[] if met else [f"{criteria[0].key}: {self.unmet_word}"],
            scores={c.key: 9 if met else 2 for c in criteria if c.scale == "score"},
        )


def columns(n: int, **extra: Any) -> dict[str, Any]:
    """What TRL passes besides prompts and completions, for ``n`` completions."""
    return {
        "completion_ids": [[1, 2, 3]] * n,
        "trainer_state": None,
        "log_extra": lambda *a: None,
        "log_metric": lambda *a: None,
        **extra,
    }
