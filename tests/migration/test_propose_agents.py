"""propose on agent runs: the trajectory checkers are candidates like any other.

Generated transcripts where the truth is known: a key met exactly when the run looked
the order up, one met exactly when it never deleted anything, one met exactly when
the calls came in the expected order. The text of every run's final answer is the
same, so no text checker can explain any of them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from gradeloop import Rubric, Transcript
from gradeloop.migration import propose_checkers, read_labels
from gradeloop.migration._propose_evidence import Example, examples_from
from tests.support.cli_helpers import cli

RUBRIC = {
    "criteria": [
        {"key": "looked_up", "description": "The agent looked the order up before answering."},
        {"key": "no_deletes", "description": "The agent never deleted anything."},
        {"key": "in_order", "description": "Lookup, then refund, then notify."},
    ]
}
TOOLS = ["lookup_order", "refund", "notify", "search_faq", "delete_account"]
ORDER = ["lookup_order", "refund", "notify"]


def run(calls: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Please refund order A1."}]
    for i, name in enumerate(calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    messages.append({"role": "assistant", "content": "Done: your refund is on its way."})
    return messages


def runs(n: int = 48, seed: int = 0) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            calls = list(ORDER)
            rng.shuffle(calls) if rng.random() < 0.3 else None
        else:
            calls = rng.sample(TOOLS, rng.randint(1, 4))
        out.append(calls)
    return out


def examples(truth: Any) -> list[Example]:
    return [
        Example.of(f"r{i}", "t", Transcript.from_messages(run(calls)), truth(calls))
        for i, calls in enumerate(runs())
    ]


def propose(key: str, truth: Any) -> Any:
    return propose_checkers(Rubric.from_dict(RUBRIC), key, examples(truth), use_model=False)


def test_a_tool_that_must_be_called_is_found() -> None:
    p = propose("looked_up", lambda calls: "lookup_order" in calls)
    assert p.winner is not None
    assert (p.winner.checker, dict(p.winner.options)) == ("tool_called", {"name": "lookup_order"})
    assert p.winner.heldout.kappa == 1.0


def test_a_tool_that_must_never_be_called_is_found() -> None:
    p = propose("no_deletes", lambda calls: "delete_account" not in calls)
    assert p.winner is not None and p.winner.checker == "tool_not_called"
    assert list(p.winner.options["names"]) == ["delete_account"]


def test_a_sequence_of_calls_is_found() -> None:
    p = propose("in_order", lambda calls: calls == ORDER)
    assert p.winner is not None and p.winner.checker == "tool_sequence"
    assert p.winner.options["mode"] == "strict"
    assert [c["name"] for c in p.winner.options["expected"]] == ORDER


def test_text_drafts_get_no_trajectory_candidates() -> None:
    text = [Example(f"t{i}", "t", f"reply {i} " * (i + 1), i % 2 == 0) for i in range(30)]
    p = propose_checkers(Rubric.from_dict(RUBRIC), "looked_up", text, use_model=False)
    mined = [c for c in p.candidates if c.checker.startswith("tool_") and c.options]
    assert mined == []  # nothing read off tool calls (the defaults alone are tried)


def test_labels_with_messages_reach_the_trajectory_checkers(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    with labels.open("w", encoding="utf-8") as f:
        for i, calls in enumerate(runs()):
            line = {"id": f"r{i}", "task": "t", "messages": run(calls)}
            f.write(json.dumps({**line, "labels": {"looked_up": "lookup_order" in calls}}) + "\n")
    rubric_file = tmp_path / "r.json"
    rubric_file.write_text(json.dumps(RUBRIC), encoding="utf-8")
    items = read_labels(labels, Rubric.from_dict(RUBRIC))
    found, _ = examples_from(items, Rubric.from_dict(RUBRIC)["looked_up"])
    assert all(e.transcript is not None for e in found)
    assert found[0].draft == "Done: your refund is on its way."  # text checkers' text
    out = tmp_path / "r2.json"
    ran = cli(
        "propose",
        "looked_up",
        "--rubric",
        str(rubric_file),
        "--labels",
        str(labels),
        "--no-model",
        "--out",
        str(out),
        "--json",
    )
    assert ran.code == 0, ran.err
    winner = json.loads(ran.out)["winner"]
    assert (winner["checker"], winner["options"]) == ("tool_called", {"name": "lookup_order"})
    assert Rubric.load(out)["looked_up"].shadow == "tool_called"


def test_the_judges_stored_verdicts_on_agent_runs_are_evidence(tmp_path: Path) -> None:
    # graded runs in the history come back as transcripts, so --from-history can
    # propose a trajectory checker for what the judge decided
    from gradeloop import HistoryStore, Verdict, grade
    from gradeloop.history._grading import GradedDraft

    class ReadsTheCalls:  # the judge sees the rendering, with the calls in it
        def evaluate(self, task: str, draft: str, criteria: Any) -> Verdict:
            met = {c.key: "lookup_order(" in draft for c in criteria}
            return Verdict(reasoning="r", criteria_met=met, passed=all(met.values()), issues=[])

    rubric = Rubric.from_dict({"criteria": RUBRIC["criteria"][:1]})
    graded = []
    for i, calls in enumerate(runs()):
        t = Transcript.from_messages(run(calls))
        graded.append(GradedDraft(f"r{i}", t, grade(t, rubric, judge=ReadsTheCalls()), "t"))
    db = tmp_path / "h.db"
    with HistoryStore(db) as store:
        store.add_grading_run(graded, rubric=rubric.to_dict())
    rubric_file = tmp_path / "r.json"
    rubric_file.write_text(json.dumps(rubric.to_dict()), encoding="utf-8")
    ran = cli(
        "propose",
        "looked_up",
        "--rubric",
        str(rubric_file),
        "--from-history",
        "--db",
        str(db),
        "--no-model",
        "--json",
    )
    assert ran.code == 0, ran.err
    winner = json.loads(ran.out)["winner"]
    assert (winner["checker"], winner["options"]) == ("tool_called", {"name": "lookup_order"})
