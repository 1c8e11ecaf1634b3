"""Random judge scripts for the loop invariants: run_loop, the graph and the tool loops.

A script fixes a rubric (judge keys, maybe a code key), what the judge answers round
after round (verdicts, failures, invalid dicts), what the writer returns (repeats
included, so identical drafts and reused verdicts happen) and the loop's settings.
:func:`loop_violations` lists every invariant a finished loop broke:

* ``stop_reason == "passed"`` if and only if ``passed is True``;
* the returned draft is one that was judged (when any was);
* if any judged draft was accepted, the returned one is;
* ``passed`` is the returned draft's own ``accepted()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from gradeloop import CheckResult, Criterion, Rubric, Verdict
from gradeloop.errors import JudgeError
from gradeloop.grading import Registry

CODE_KEY = "mentions_x"


def has_x(text: str) -> CheckResult:
    return CheckResult("x" in text, [] if "x" in text else ["say x"])


def registry() -> Registry:
    reg = Registry(autoload=False)
    reg.add("has_x", has_x)
    return reg


@dataclass
class Script:
    """One random loop: the rubric, the judge's answers, the writer's drafts, the settings."""

    criteria: tuple[Criterion, ...]
    pass_score: float | None
    answers: list[Any]
    drafts: list[str]
    fail_revision_at: int | None
    settings: dict[str, Any] = field(default_factory=dict)

    def rubric(self, reg: Registry) -> Rubric:
        data: dict[str, Any] = {
            "criteria": [c.model_dump(exclude_none=True) for c in self.criteria]
        }
        if self.pass_score is not None:
            data["pass_score"] = self.pass_score
        return Rubric.from_dict(data, registry=reg)


class ScriptJudge:
    """Answers from the script in order, over and over; records each draft it saw."""

    def __init__(self, answers: Sequence[Any]) -> None:
        self.answers, self.seen = list(answers), []  # type: list[Any], list[str]

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        item = self.answers[len(self.seen) % len(self.answers)]
        self.seen.append(draft)
        if isinstance(item, BaseException):
            raise item
        return item


class ScriptWriter:
    """Returns the script's drafts in order; may fail one revision."""

    def __init__(self, drafts: Sequence[str], fail_at: int | None) -> None:
        self.drafts, self.fail_at, self.n = list(drafts), fail_at, 0
        self.asked: list[tuple[str, list[str] | None]] = []  # (draft, issues) per call

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.asked.append((draft, issues))
        n, self.n = self.n, self.n + 1
        if self.fail_at is not None and n == self.fail_at and n > 0:
            raise RuntimeError("the writer fell over")
        return self.drafts[n % len(self.drafts)]


_KEYS = ["a", "b", "s", "t"]


@st.composite
def answers_for(draw: st.DrawFn, criteria: Sequence[Criterion]) -> Any:
    """One judge answer: a valid verdict (mostly), a failure, or an invalid dict."""
    kind = draw(st.sampled_from(["verdict"] * 6 + ["error", "invalid"]))
    judged = [c for c in criteria if c.source == "judge"]
    if kind == "error":
        return JudgeError("scripted failure", reason="invalid")
    likely = st.sampled_from([True, True, False])  # passes must be common enough to matter
    met = {c.key: draw(likely) for c in judged if c.scale != "score"}
    score = st.sampled_from([1, 3, 5, 6, 7, 7, 8, 9, 10, 10])
    scores = {c.key: draw(score) for c in judged if c.scale == "score"}
    claim = draw(st.sampled_from(["honest", "honest", "true", "false"]))
    passed = (
        all(met.values()) and all(v >= 7 for v in scores.values())
        if claim == "honest"
        else claim == "true"
    )
    if kind == "invalid":
        junk = draw(st.sampled_from(["yes", 1, "true", 11, 100, 0]))
        if met and draw(st.booleans()):
            met[next(iter(met))] = junk
        elif scores:
            scores[next(iter(scores))] = junk
        else:
            passed = junk
        return {
            "reasoning": "r",
            "criteria_met": met,
            "passed": passed,
            "issues": ["fix"],
            "scores": scores,
        }
    issues = [] if passed else [f"{k}: fix it" for k, v in met.items() if not v] or ["better"]
    return Verdict(
        reasoning="r",
        criteria_met=met,
        passed=passed,
        issues=issues,
        scores={k: float(v) for k, v in scores.items()},
    )


def near_miss(criteria: Sequence[Criterion]) -> Verdict:
    """Top scores, one pass/fail key failed: a high overall score that is not a pass."""
    judged = [c for c in criteria if c.source == "judge"]
    pass_fail = [c.key for c in judged if c.scale != "score"]
    met = {k: k != pass_fail[0] for k in pass_fail} if pass_fail else {}
    scores = {c.key: 10.0 for c in judged if c.scale == "score"}
    if not pass_fail and scores:
        scores[next(iter(scores))] = 6.0  # just under the threshold of 7
    return Verdict(reasoning="r", criteria_met=met, passed=False, issues=["almost"], scores=scores)


def bare_pass(criteria: Sequence[Criterion]) -> Verdict:
    """Every key met at the lowest passing score: accepted, with a modest overall score."""
    judged = [c for c in criteria if c.source == "judge"]
    return Verdict(
        reasoning="r",
        criteria_met={c.key: True for c in judged if c.scale != "score"},
        passed=True,
        issues=[],
        scores={c.key: 7.0 for c in judged if c.scale == "score"},
    )


@st.composite
def scripts(draw: st.DrawFn, max_rounds: tuple[int, int] = (-1, 5)) -> Script:
    """A random loop: 1-3 judge keys (weights 0.1-5), maybe a code key, random answers."""
    weights = st.sampled_from([0.1, 0.1, 0.5, 1.0, 2.0, 5.0, 5.0])
    n = draw(st.integers(1, 3))
    keys = draw(st.lists(st.sampled_from(_KEYS), min_size=n, max_size=n, unique=True))
    criteria: list[Criterion] = []
    for k in keys:
        if draw(st.booleans()):
            criteria.append(Criterion(key=k, description=k, weight=draw(weights)))
        else:
            criteria.append(
                Criterion(key=k, description=k, scale="score", weight=draw(weights), threshold=7)
            )
    if draw(st.booleans()):
        criteria.append(
            Criterion(key=CODE_KEY, description="says x", checker="has_x", weight=draw(weights))
        )
    answers = draw(st.lists(answers_for(criteria), min_size=2, max_size=8))
    if draw(st.integers(0, 3)) == 0:
        answers[: draw(st.integers(1, 3))] = [near_miss(criteria)] * 3
        answers.insert(draw(st.integers(1, 3)), bare_pass(criteria))
    pool = st.sampled_from(["d0", "d1", "x d2", "x d3", "d4 x", "d5", "x d6", "d7"])
    drafts = draw(
        st.lists(pool, min_size=2, max_size=8, unique=True)  # mostly new text each round
        | st.lists(pool, min_size=1, max_size=8)
    )
    low, high = max_rounds
    settings = {
        "max_rounds": draw(st.sampled_from([low, *range(max(low, 0), high + 1)] + [high] * 3)),
        "stagnation_rounds": draw(st.none() | st.integers(0, 3)),
        "return_policy": draw(st.sampled_from(["best", "last"])),
        "similarity": draw(st.sampled_from([None, 0.97])),
        "reuse_identical": draw(st.booleans()),
        "max_judge_failures": draw(st.integers(1, 3)),
    }
    return Script(
        criteria=tuple(criteria),
        pass_score=draw(st.none() | st.sampled_from([5.0, 7.0, 9.0])),
        answers=answers,
        drafts=drafts,
        fail_revision_at=draw(st.sampled_from([None, None, None, 1, 2, 3])),
        settings=settings,
    )


# -- the invariants ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Judged:
    """One draft as a loop saw it: its id, text, whether judged, whether accepted."""

    output_id: str
    content: str
    judged: bool
    accepted: bool


def violations(
    drafts: Sequence[Judged], returned_id: str, returned_draft: str, passed: Any, stop: Any
) -> list[str]:
    """The invariants every loop engine promises, over what it did and what it returned."""
    problems = []
    if (stop == "passed") != (passed is True):
        problems.append(f"stop_reason={stop!r} but passed={passed!r}")
    chosen = next((d for d in drafts if d.output_id == returned_id), None)
    if chosen is None:
        return [*problems, f"returned {returned_id!r}, which is not one of the drafts"]
    if chosen.content != returned_draft:
        problems.append("the returned text is not the returned draft's")
    judged = [d for d in drafts if d.judged]
    if judged and not chosen.judged:
        problems.append(f"returned the unjudged draft {returned_id}")
    if any(d.accepted for d in judged) and not chosen.accepted:
        problems.append(
            f"returned {returned_id} (not accepted) though "
            f"{[d.output_id for d in judged if d.accepted]} was accepted"
        )
    if passed is not chosen.accepted:
        problems.append(
            f"passed={passed!r} but the returned draft's accepted() is {chosen.accepted}"
        )
    return problems


def run_loop_violations(script: Script, driver: str = "sync") -> list[str]:
    """Run ``script`` through run_loop (``driver="async"``: arun_loop) and list the
    invariants it broke."""
    import asyncio

    from gradeloop import arun_loop, run_loop

    reg = registry()
    args = ("the task", script.rubric(reg))
    kw: dict[str, Any] = {
        "generator": ScriptWriter(script.drafts, script.fail_revision_at),
        "judge": ScriptJudge(script.answers),
        "registry": reg,
        **script.settings,
    }
    result = run_loop(*args, **kw) if driver == "sync" else asyncio.run(arun_loop(*args, **kw))
    drafts = [
        Judged(
            h.output_id,
            h.content,
            h.evaluation is not None,
            bool(h.evaluation is not None and h.evaluation.accepted),
        )
        for h in result.history
    ]
    return violations(drafts, result.output_id, result.draft, result.passed, result.stop_reason)


def run_loop_trace(script: Script, driver: str) -> tuple[Any, ...]:
    """What ``script`` did through one driver: every call the models saw, in order, and
    what the loop returned and recorded (ids aside)."""
    import asyncio

    from gradeloop import arun_loop, run_loop

    reg = registry()
    writer, judge = (
        ScriptWriter(script.drafts, script.fail_revision_at),
        ScriptJudge(script.answers),
    )
    args = ("the task", script.rubric(reg))
    kw: dict[str, Any] = {"generator": writer, "judge": judge, "registry": reg, **script.settings}
    result = run_loop(*args, **kw) if driver == "sync" else asyncio.run(arun_loop(*args, **kw))

    def judged(ev: Any) -> Any:
        return None if ev is None else {k: v for k, v in ev.to_json().items() if k != "output_id"}

    rounds = [
        (
            h.content,
            judged(h.evaluation),
            h.judge_error,
            h.reused_from is not None,
            h.feedback,
        )
        for h in result.history
    ]
    returned = (
        result.draft,
        result.passed,
        result.stop_reason,
        result.error,
        judged(result.evaluation),
    )
    return writer.asked, judge.seen, rounds, returned


class RecordingSink:
    """A history sink that keeps every record in memory."""

    def __init__(self) -> None:
        self.records: list[Mapping[str, Any]] = []
        self.finished: dict[str, Any] = {}

    def start_loop(self, loop_id: str, **kw: Any) -> None:
        pass

    def add_iteration(self, loop_id: str, record: Mapping[str, Any]) -> None:
        self.records.append(record)

    def finish_loop(self, loop_id: str, **kw: Any) -> None:
        self.finished = dict(kw)

    def drafts(self) -> list[Judged]:
        return [
            Judged(
                r["output_id"],
                r["content"],
                r["evaluation"] is not None,
                bool(r["evaluation"] is not None and r["evaluation"]["passed"]),
            )
            for r in self.records
        ]


def graph_violations(script: Script) -> list[str]:
    """Run ``script`` through the LangGraph engine (no checkpointer)."""
    from gradeloop.graph import build_graph

    reg, sink = registry(), RecordingSink()
    max_rounds = script.settings["max_rounds"]
    graph = build_graph(
        script.rubric(reg),
        generator=ScriptWriter(script.drafts, None),
        judge=ScriptJudge(script.answers),
        max_rounds=max_rounds,
        max_judge_failures=script.settings["max_judge_failures"],
        store=sink,
        registry=reg,
    )
    final = graph.invoke({"task": "the task"})
    problems = violations(
        sink.drafts(), final["output_id"], final["draft"], final["passed"], final["stop_reason"]
    )
    if sink.finished.get("final_output_id") != final["output_id"]:
        problems.append("the history's final output is not the returned one")
    if sink.finished.get("passed") is not final["passed"]:
        problems.append("the history's passed flag is not the returned one")
    return problems


def tools_violations(script: Script) -> list[str]:
    """Drive ``script`` through the four tools until the loop finishes (or 8 rounds)."""
    from gradeloop import HistoryStore
    from gradeloop.tools import ToolRunner

    with HistoryStore(":memory:") as store:
        return _tools_violations(script, store, ToolRunner)


def _tools_violations(script: Script, store: Any, tool_runner: Any) -> list[str]:
    reg = registry()
    criteria = [c.model_dump(exclude_none=True) for c in script.criteria]
    runner = tool_runner(
        generator=ScriptWriter(script.drafts, script.fail_revision_at),
        judge=ScriptJudge(script.answers),
        store=store,
        max_iterations=max(1, script.settings["max_rounds"]),
        stagnation_rounds=script.settings["stagnation_rounds"] or 0,
        registry=reg,
    )
    out = runner.call("generate_initial_output", {"task": "the task", "criteria": criteria})
    for _ in range(8):
        if "error" in out:
            return []  # a writer failure ends the session with no loop result to check
        result = runner.call("evaluate_output", {"output": out["content"]})
        if "stop_reason" in result:
            break
        if "error" not in result:
            out = runner.call("optimize_output", {"output": out["content"]})
    loop = next(iter(runner.ledger.loops.values()))
    if loop.stop_reason is None:
        return []  # still open: nothing was returned yet
    history = runner.call("get_optimization_history", {"loop_id": loop.loop_id})
    drafts = [
        Judged(
            o.output_id,
            o.it.content,
            o.it.evaluation is not None,
            bool(o.it.evaluation is not None and o.it.evaluation.accepted),
        )
        for o in loop.outputs
    ]
    final = next(o for o in loop.outputs if o.output_id == loop.final_output_id)
    summary = next(s for s in runner.store.list_loops() if s.loop_id == loop.loop_id)
    problems = violations(
        drafts, loop.final_output_id or "", final.it.content, summary.passed, summary.stop_reason
    )
    if history.get("final_output_id") != loop.final_output_id:
        problems.append("the stored history names another final output")
    return problems
