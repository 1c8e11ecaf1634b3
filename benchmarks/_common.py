"""The zero-latency fakes bench_graph, bench_history and bench_loop drive the loop with:
five judge criteria, every round failing (so each loop runs to its cap), and a
different ~1 KB draft each time, as a real revision would be."""

from __future__ import annotations

from collections.abc import Sequence

from gradeloop import Criterion, Rubric, Verdict

KEYS = ("api_cited", "errors_named", "no_invention", "tone", "structure")
RUBRIC = Rubric.from_dict({"criteria": [{"key": k, "description": f"{k} holds."} for k in KEYS]})


def failing(reasoning: str = "r") -> Verdict:
    """A verdict that fails every key, with two issues to revise against."""
    return Verdict(
        reasoning=reasoning,
        criteria_met=dict.fromkeys(KEYS, False),
        passed=False,
        issues=["cite the section", "name the error codes"],
    )


FAIL = failing()


class Gen:
    """Each draft a different ~1 KB text, as a real revision would be."""

    def __init__(self) -> None:
        self.n = 0

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.n += 1
        return " ".join(f"w{self.n}x{i % 97}" for i in range(160))


class Judge:
    """Answers :attr:`verdict` (every key failing) every time."""

    verdict = FAIL

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        return self.verdict
