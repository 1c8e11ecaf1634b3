"""Plain fakes for loop and merge logic: no SDK, no network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradeloop import Criterion, Verdict


def verdict(
    passed: bool = True,
    met: dict[str, bool] | None = None,
    issues: Sequence[str] = (),
    scores: dict[str, float] | None = None,
    reasoning: str = "cited section 4.2",
) -> Verdict:
    return Verdict(
        reasoning=reasoning,
        criteria_met=met or {},
        passed=passed,
        issues=list(issues),
        scores=scores or {},
    )


class FakeJudge:
    """Returns scripted verdicts (or raises scripted exceptions) and records each call."""

    def __init__(self, *script: Verdict | BaseException, calls: list[str] | None = None) -> None:
        self.script = list(script)
        self.seen: list[dict[str, Any]] = []
        self.calls = calls if calls is not None else []

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.calls.append("evaluate")
        self.seen.append({"task": task, "draft": draft, "keys": [c.key for c in criteria]})
        if not self.script:
            raise AssertionError(f"the judge was called {len(self.seen)} times; script ran out")
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


class AllMet:
    """A judge that says every key it is asked about is met."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        self.asked.append([c.key for c in criteria])
        return verdict(
            True,
            {c.key: True for c in criteria},
            scores={c.key: 10 for c in criteria if c.scale == "score"},
        )


class FakeGenerator:
    """Returns d0, d1, ... (or scripted texts) and records each prompt."""

    def __init__(self, texts: Sequence[str] | None = None, calls: list[str] | None = None) -> None:
        self.texts = list(texts) if texts is not None else None
        self.prompts: list[dict[str, Any]] = []
        self.calls = calls if calls is not None else []

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.calls.append("generate")
        self.prompts.append({"task": task, "draft": draft, "issues": issues})
        n = len(self.prompts) - 1
        if self.texts is None:
            return f"d{n}"
        return self.texts[min(n, len(self.texts) - 1)]
