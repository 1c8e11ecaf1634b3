"""The loop's invariants over random judge scripts, on every engine that returns a draft.

For run_loop and arun_loop (both return policies; the two drivers of one flow, which
must also take the same steps to the same result), the LangGraph engine and the
tool-driven loop:
``stop_reason == "passed"`` if and only if ``passed``; the returned draft was judged
(when any was); if any judged draft was accepted, the returned one is; ``passed``
is the returned draft's own ``accepted()``. Scripts mix valid verdicts, judge
failures and invalid answers, identical drafts, failing revisions and every
stopping rule; a quarter plant issue 11's trap (a high-scoring near miss before a
bare pass). ``GRADELOOP_HOSTILE_EXAMPLES`` raises the example count.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.support import hostile, hostile_loops

SETTINGS = settings(
    max_examples=hostile.examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(script=hostile_loops.scripts())
def test_run_loop_keeps_its_invariants(script: hostile_loops.Script) -> None:
    assert hostile_loops.run_loop_violations(script) == []


@settings(SETTINGS, max_examples=hostile.examples(100))
@given(script=hostile_loops.scripts())
def test_arun_loop_keeps_them(script: hostile_loops.Script) -> None:
    assert hostile_loops.run_loop_violations(script, "async") == []


@settings(SETTINGS, max_examples=hostile.examples(60))
@given(script=hostile_loops.scripts())
def test_both_drivers_take_the_same_steps_to_the_same_result(
    script: hostile_loops.Script,
) -> None:
    assert hostile_loops.run_loop_trace(script, "sync") == hostile_loops.run_loop_trace(
        script, "async"
    )


@settings(SETTINGS, max_examples=hostile.examples(40))
@given(script=hostile_loops.scripts(max_rounds=(0, 4)))
def test_the_graph_engine_keeps_them(script: hostile_loops.Script) -> None:
    assert hostile_loops.graph_violations(script) == []


@settings(SETTINGS, max_examples=hostile.examples(60))
@given(script=hostile_loops.scripts(max_rounds=(1, 5)))
def test_the_tool_driven_loop_keeps_them(script: hostile_loops.Script) -> None:
    assert hostile_loops.tools_violations(script) == []


def test_the_checks_can_fail() -> None:
    """A loop that returned a failing draft beside an accepted one is caught."""
    drafts = [
        hostile_loops.Judged("o1", "d0", judged=True, accepted=False),
        hostile_loops.Judged("o2", "d1", judged=True, accepted=True),
    ]
    found = hostile_loops.violations(drafts, "o1", "d0", False, "passed")
    assert any("not accepted" in p for p in found)
    assert any("stop_reason='passed'" in p for p in found)
    assert hostile_loops.violations(drafts, "o2", "d1", True, "passed") == []  # the twin
    unjudged = [*drafts[:1], hostile_loops.Judged("o3", "d2", judged=False, accepted=False)]
    assert hostile_loops.violations(unjudged, "o3", "d2", False, "max_rounds") != []
