"""The evaluator-optimizer loop as a LangGraph graph: checkpoint, resume, stream, compose.

Needs the optional extra: ``pip install 'gradeloop[langgraph]'``. Importing this
module never imports langgraph; :func:`build_graph` does, and raises
:class:`~gradeloop.errors.ConfigError` with that install line when it is missing.

The graph makes the same calls as :func:`gradeloop.optimize` on
the same generator and judge: one generate, then per round one evaluate and, unless
the round stops the loop, one revising generate. ``["generate", "evaluate"] * N``
at the cap, two calls on a first-round pass, one generate at caps below 1. The
returned ``draft`` is the last judged one and ``passed`` its own ``accepted()``.

::

    START -> setup -> generate -> evaluate --(passed, or the cap, or the judge gave up)--> END
                         ^            |
                         +--(revise)--+

Judge failures (:class:`~gradeloop.errors.JudgeError`): with ``judge_errors="revise"``
(the default, as ``optimize`` does) the failure is kept in the state, the next
revision gets the last *valid* evaluation's issues, and the graph stops with
``stop_reason="evaluator_failed"`` when nothing was judged yet or after
``max_judge_failures`` failures in a row; the returned draft is then the last
judged one, never the failed one. With ``judge_errors="raise"`` the error leaves the
graph instead, and with a checkpointer ``invoke(None, config)`` retries the judge.
Any exception from the generator always leaves the graph (``run_loop`` would stop
with ``"generator_failed"``): with a checkpointer the thread resumes at that node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, InputError, JudgeRequiredError
from ..grading._grade import Judge
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..judging._family import warn_same_family
from ..loop._records import Generator, HistorySink
from ._nodes import (
    NODE_EVALUATE,
    NODE_GENERATE,
    NODE_SETUP,
    GraphState,
    JudgeErrors,
    Nodes,
)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

__all__ = ["NODES", "GraphState", "build_graph", "final_result", "require_langgraph"]

NODES = (NODE_SETUP, NODE_GENERATE, NODE_EVALUATE)
"""The graph's node names, in the order a run first visits them."""

INSTALL_HINT = "pip install 'gradeloop[langgraph]'"


def require_langgraph() -> None:
    """Raise :class:`~gradeloop.errors.ConfigError` with the install line if langgraph
    (or its SQLite checkpointer, which the CLI uses) cannot be imported."""
    try:
        import langgraph.graph  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"the LangGraph engine needs the optional extra: {INSTALL_HINT} ({exc})"
        ) from None


def build_graph(
    rubric: Rubric | Mapping[str, Any],
    *,
    generator: Generator,
    judge: Judge | None,
    max_rounds: int = 3,
    checkpointer: Any = None,
    max_judge_failures: int = 2,
    judge_errors: JudgeErrors = "revise",
    store: HistorySink | None = None,
    registry: Registry | None = None,
    config: Mapping[str, Any] | None = None,
) -> CompiledStateGraph[GraphState, None, GraphState, GraphState]:
    """Compile the evaluator-optimizer loop into a LangGraph graph.

    The graph has the nodes ``"setup"``, ``"generate"`` and ``"evaluate"``; the
    retry edge ``evaluate -> generate`` is a conditional edge whose condition holds
    the gate (``accepted()`` of the merged code + judge verdict), the round cap and
    the judge-failure stop. Invoke it with ``{"task": ...}``; the final state's
    ``draft`` / ``passed`` are what :func:`gradeloop.optimize` returns. With ``checkpointer``
    (``InMemorySaver``, ``SqliteSaver``...) pass ``{"configurable": {"thread_id":
    ...}}`` and resume a run that raised with ``invoke(None, config)``; use
    ``durability="sync"`` when the process itself may die mid-run.

    ``store`` (a :class:`~gradeloop.HistoryStore`) records every iteration as
    ``run_loop`` does, under the state's ``loop_id``, resumed runs included;
    ``config`` adds entries to the settings recorded there. Raises
    :class:`~gradeloop.errors.JudgeRequiredError` when the rubric has judge-filled
    keys and ``judge`` is None, and :class:`~gradeloop.errors.InputError` for bad
    settings. A generator and judge of the same model family draw a
    :class:`~gradeloop.errors.GradeloopWarning` (self-preference; docs/judging.md).
    """
    require_langgraph()
    from langgraph.graph import END, START, StateGraph

    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_dict(rubric, registry=registry)
    _check_settings(max_rounds, max_judge_failures, judge_errors)
    if rubric.judge_keys and judge is None:
        raise JudgeRequiredError(list(rubric.judge_keys))
    warn_same_family(generator, judge)
    nodes = Nodes(
        rubric,
        generator=generator,
        judge=judge,
        max_rounds=max_rounds,
        max_judge_failures=max_judge_failures,
        judge_errors=judge_errors,
        store=store,
        registry=registry,
        config=config,
    )

    def route(state: GraphState) -> str:
        """The retry edge: END on a pass, at the cap, or when the judge gave up."""
        return END if nodes.decide(state) is not None else NODE_GENERATE

    graph = StateGraph(GraphState)
    graph.add_node(NODE_SETUP, nodes.setup)
    graph.add_node(NODE_GENERATE, nodes.generate)
    graph.add_node(NODE_EVALUATE, nodes.evaluate)
    graph.add_edge(START, NODE_SETUP)
    graph.add_edge(NODE_SETUP, NODE_GENERATE)
    # Below one round nothing is judged, so generate leads straight to END.
    graph.add_edge(NODE_GENERATE, NODE_EVALUATE if max_rounds >= 1 else END)
    graph.add_conditional_edges(NODE_EVALUATE, route, [NODE_GENERATE, END])
    return graph.compile(checkpointer=checkpointer, name="gradeloop")


def _check_settings(max_rounds: Any, max_judge_failures: Any, judge_errors: Any) -> None:
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int):
        raise InputError(f"max_rounds must be an integer, not {max_rounds!r}")
    if (
        isinstance(max_judge_failures, bool)
        or not isinstance(max_judge_failures, int)
        or max_judge_failures < 1
    ):
        raise InputError(f"max_judge_failures must be an integer >= 1, not {max_judge_failures!r}")
    if judge_errors not in ("revise", "raise"):
        raise InputError(f"judge_errors must be 'revise' or 'raise', not {judge_errors!r}")


def final_result(state: Mapping[str, Any]) -> tuple[str, bool]:
    """What :func:`gradeloop.optimize` returns, from a final state: ``(draft, passed)``.

    ``passed`` is True only when the graph stopped on an accepted draft, so a state
    taken from a run that has not finished reads as not passed.
    """
    passed = state.get("stop_reason") == "passed" and state.get("passed") is True
    return str(state.get("draft", "")), passed
