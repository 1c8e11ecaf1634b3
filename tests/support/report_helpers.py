"""A fixture history database for the report, viewer and browser tests.

Three loops and two grading runs, recorded through the real loop and store with
fake models: a loop that passes in round 3 whose round-2 draft holds a script tag,
a loop whose judge fails in round 2, a loop that stagnates, and two grading runs of
the same drafts where one key changes between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gradeloop import HistoryStore, Rubric, grade, run_loop
from gradeloop.errors import JudgeError
from gradeloop.history._grading import GradedDraft
from tests.support.fakes import FakeGenerator, FakeJudge, verdict

#: What a hostile draft carries: it must be shown, never run.
SCRIPT = "<script>window.__pwned = 1; document.title = 'pwned'</script>"
# a loopback address other than 127.0.0.1: were it ever requested, the browser
# tests would see it, and no traffic would leave the machine
IMG = '<img src="http://127.0.0.2:9/x.png" onerror="window.__pwned = 2">'


def rubric(name: str | None = "demo") -> Rubric:
    data: dict[str, object] = {
        "pass_score": 7.5,
        "criteria": [
            {
                "key": "short",
                "description": "At most 400 characters.",
                "checker": "length",
                "options": {"max_chars": 400},
            },
            {
                "key": "persuasive",
                "description": "Gives the reader a concrete reason.",
                "scale": "score",
                "threshold": 7,
            },
            {"key": "accurate", "description": "Makes no false <claims>."},
        ],
    }
    if name:
        data["name"] = name
    return Rubric.from_dict(data)


@dataclass
class FixtureIds:
    passed: str
    judge_failed: str
    stagnated: str
    run_a: str
    run_b: str


def build_history(path: Path) -> FixtureIds:
    """Write the fixture history to ``path``; the ids of what it holds."""
    r = rubric()
    with HistoryStore(path) as store:
        gen = FakeGenerator(
            [
                "First draft, with <b>bold</b> claims.\nLine two.",
                f"Second draft {SCRIPT} {IMG}\nLine two.",
                "Third draft.\nLine two.\nA reason to buy.",
            ]
        )
        judge = FakeJudge(
            verdict(
                False,
                {"accurate": False},
                ["claims <everything>"],
                {"persuasive": 4},
                reasoning=f"Weak. {SCRIPT}",
            ),
            verdict(False, {"accurate": True}, ["still vague"], {"persuasive": 6}),
            verdict(True, {"accurate": True}, [], {"persuasive": 9}, reasoning="Good."),
        )
        passed = run_loop("Write a <blurb>", r, generator=gen, judge=judge, store=store).loop_id

        judge = FakeJudge(
            verdict(False, {"accurate": False}, ["wrong"], {"persuasive": 5}),
            JudgeError("the reply was not JSON", reason="invalid"),
            verdict(False, {"accurate": True}, ["thin"], {"persuasive": 6}),
        )
        failed = run_loop(
            "Describe the product", r, generator=FakeGenerator(), judge=judge, store=store
        ).loop_id

        plain = Rubric.from_dict({k: v for k, v in r.to_dict().items() if k != "name"})
        judge = FakeJudge(*[verdict(False, {"accurate": False}, ["no"], {"persuasive": 3})] * 4)
        stagnated = run_loop(
            "Sell it", plain, generator=FakeGenerator(), judge=judge, store=store, max_rounds=4
        ).loop_id

        run_ids = []
        for met in (False, True):
            j = FakeJudge(
                verdict(True, {"accurate": True}, [], {"persuasive": 8}),
                verdict(met, {"accurate": met}, [] if met else ["wrong"], {"persuasive": 8}),
            )
            drafts = [
                GradedDraft(f"d{i}", text, grade(text, r, judge=j), "task")
                for i, text in enumerate(["A fine draft.", f"Draft {SCRIPT}"])
            ]
            drafts.append(GradedDraft("d2", "x", None, "task", error="invalid: not JSON"))
            run_ids.append(store.add_grading_run(drafts, rubric=r.to_dict(), rubric_name="demo"))
    return FixtureIds(passed, failed, stagnated, run_ids[0], run_ids[1])
