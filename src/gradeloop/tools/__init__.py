"""Four function-calling tools, for a model that drives the loop itself.

:data:`TOOL_DEFINITIONS` are the tools in the Anthropic format (pass them as
``tools=``); :class:`ToolRunner` carries out a call and returns its JSON::

    from gradeloop.tools import ToolRunner, tool_definitions

    with ToolRunner(generator=AnthropicGenerator(), judge=AnthropicJudge()) as runner:
        reply = client.messages.create(..., tools=tool_definitions())
        results = [runner.tool_result(block) for block in reply.content
                   if block.type == "tool_use"]

Every call returns a JSON-ready dict. A call that cannot be carried out returns
``{"error": {"type": ..., "message": ...}}`` instead of raising, so an agent reads
what went wrong and can retry. The error types:

``unknown_tool``, ``invalid_arguments``, ``invalid_criteria``, ``unknown_checker``,
``judge_required`` (judge-filled criteria and no judge), ``judge_failed``,
``model_not_configured`` (no generator), ``generation_failed``, ``loop_not_found``,
``loop_finished`` (a revision asked of a loop that is over), ``history_error`` and
``internal_error``.

How calls link into loops, and what reaches the history store, is described in
:mod:`gradeloop.tools._ledger`; ``gradeloop history`` lists tool-driven loops like
any other.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import GradeloopError, HistoryError, JudgeError, JudgeRequiredError, LoopNotFoundError
from ..grading._grade import Judge, grade
from ..grading._jsonout import dumps
from ..grading._registry import Registry
from ..grading._rubric import Rubric
from ..grading._verdict import as_feedback
from ..history._closing import Closing
from ..history._store import HistoryStore
from ..loop._records import Generator, generator_task
from ..models._failure import failure_line
from ..models._usage import metered
from ._args import (
    ToolFailure,
    check_arguments,
    criteria_arg,
    feedback_arg,
    optional_text,
    required_text,
)
from ._ledger import Ledger, LoopState, Output
from ._schema import TOOL_DEFINITIONS, TOOL_NAMES, tool_definitions

__all__ = ["TOOL_DEFINITIONS", "TOOL_NAMES", "ToolFailure", "ToolRunner", "tool_definitions"]

_NO_MODEL = "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server) where the tools run"


class ToolRunner(Closing):
    """Carries out tool calls against a generator, a judge and a history store.

    ``generator`` and ``judge`` may be None: code-only evaluations and the history
    tool still work, and the other calls answer with an error object saying what is
    missing. ``store`` is a :class:`HistoryStore`, a path, or None for the default
    store (one the runner opened itself is closed by :meth:`close`).
    ``max_iterations`` caps the outputs of one loop (None: no cap);
    ``stagnation_rounds`` ends a loop whose judged scores stop improving (0: never).
    Every output is also kept in the store, so only the ``keep_loops`` most recently
    used loops stay in memory; another loop is read back when a call names one of
    its outputs (also after a restart, from the same history file).

    Calls are carried out one at a time (a lock), so one runner may serve a server's
    worker threads.

    ``file_dirs``: when given, a criterion's file option (``json_schema``'s
    ``schema_file``, any :data:`~gradeloop.grading.RubricPath` option) must name a path inside
    one of these folders, and with none every file option is refused; None (the
    default) reads files anywhere, as a rubric file may.
    """

    def __init__(
        self,
        generator: Generator | None = None,
        judge: Judge | None = None,
        store: HistoryStore | str | os.PathLike[str] | None = None,
        *,
        max_iterations: int | None = 3,
        stagnation_rounds: int = 2,
        registry: Registry | None = None,
        config: Mapping[str, Any] | None = None,
        keep_loops: int = 64,
        file_dirs: Sequence[str | os.PathLike[str]] | None = None,
    ) -> None:
        if keep_loops < 1:
            raise ValueError(f"keep_loops must be at least 1, not {keep_loops}")
        if max_iterations is not None and max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1 (or None), not {max_iterations}")
        if stagnation_rounds < 0:
            raise ValueError(f"stagnation_rounds must be >= 0, not {stagnation_rounds}")
        self.generator, self.judge, self.registry = generator, judge, registry
        self.file_dirs = None if file_dirs is None else tuple(file_dirs)
        self._owns_store = not isinstance(store, HistoryStore)
        self.store = store if isinstance(store, HistoryStore) else HistoryStore(store)
        settings = {
            "max_iterations": max_iterations,
            "stagnation_rounds": stagnation_rounds,
            "generator_model": getattr(generator, "model", None),
            "judge_model": getattr(judge, "model", None),
            **(config or {}),
        }
        self.ledger = Ledger(
            self.store,
            max_iterations=max_iterations,
            stagnation_rounds=stagnation_rounds,
            config=settings,
            registry=registry,
            keep_loops=keep_loops,
        )
        self._lock = threading.RLock()
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "generate_initial_output": self._generate,
            "evaluate_output": self._evaluate,
            "optimize_output": self._optimize,
            "get_optimization_history": self._history,
        }

    # -- lifecycle -------------------------------------------------------------------

    def close(self) -> None:
        """Close the history store if the runner opened it."""
        if self._owns_store:
            self.store.close()

    def definitions(self) -> list[dict[str, Any]]:
        """The tool definitions, listing the checkers this runner's registry has."""
        return tool_definitions(self.registry)

    # -- calls -----------------------------------------------------------------------

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """Carry out tool ``name``; the result JSON, or an ``{"error": ...}`` object."""
        handler = self._handlers.get(name)
        if handler is None:
            return ToolFailure(
                "unknown_tool", f"there is no tool {name!r}; the tools are: {', '.join(TOOL_NAMES)}"
            ).to_json()
        with self._lock:
            try:
                return handler(check_arguments(name, arguments))
            except ToolFailure as failure:
                return failure.to_json()
            except LoopNotFoundError as exc:
                return ToolFailure("loop_not_found", str(exc)).to_json()
            except HistoryError as exc:
                return ToolFailure("history_error", str(exc)).to_json()
            except Exception as exc:  # an agent gets an error object, never a traceback
                return ToolFailure(
                    "internal_error", f"{name} failed: {failure_line(exc)}"
                ).to_json()

    def tool_result(self, block: Any) -> dict[str, Any]:
        """Answer one ``tool_use`` block (an SDK object or a dict) with a ``tool_result``."""
        result = self.call(str(_field(block, "name")), _field(block, "input"))
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": _field(block, "id"),
            "content": dumps(result, ensure_ascii=False),
        }
        if "error" in result:
            out["is_error"] = True
        return out

    # -- the four tools ----------------------------------------------------------------

    def _generate(self, args: dict[str, Any]) -> dict[str, Any]:
        task = required_text(args, "task")
        rubric = criteria_arg(args, self.registry, self.file_dirs)
        assert rubric is not None  # a required argument
        generator = self._require_generator()
        text, elapsed, usage = self._write(generator, generator_task(task, rubric))
        loop = self.ledger.start(task, rubric, origin="generate_initial_output")
        out = self.ledger.add(loop, text, source="generated", generation_ms=elapsed, usage=usage)
        return _generation(out)

    def _evaluate(self, args: dict[str, Any]) -> dict[str, Any]:
        text = required_text(args, "output")
        found, rubric = self._find(text, criteria_arg(args, self.registry, self.file_dirs))
        started = time.perf_counter()
        try:
            with metered() as meter:
                ev = grade(
                    found.it.content if found else text,
                    rubric,
                    task=found.loop.task if found else "",
                    judge=self.judge,
                    registry=self.registry,
                )
        except JudgeRequiredError as exc:
            raise ToolFailure("judge_required", _judge_required(exc.keys)) from None
        except JudgeError as exc:
            raise ToolFailure(
                "judge_failed",
                f"the judge could not grade this output ({exc.reason}): {exc}. Nothing was "
                "recorded; call evaluate_output again to retry.",
            ) from None
        elapsed = (time.perf_counter() - started) * 1000
        out = self._adopt(found, text, rubric, "evaluate_output")
        linked = self.ledger.evaluated(out, ev, elapsed, meter.usage)
        result = {
            **linked.to_json(),
            "issues": list(linked.verdict.issues),
            "loop_id": out.loop.loop_id,
            "iteration": out.it.iteration,
        }
        if out.loop.stop_reason is not None:
            result["stop_reason"] = out.loop.stop_reason
            result["final_output_id"] = out.loop.final_output_id
        return result

    def _optimize(self, args: dict[str, Any]) -> dict[str, Any]:
        text = required_text(args, "output")
        issues = feedback_arg(args)
        found, rubric = self._find(text, criteria_arg(args, self.registry, self.file_dirs))
        if found is not None:
            _require_open(self.ledger, found.loop)
        if issues is None:
            issues = _issues_of(found)
        generator = self._require_generator()
        task = generator_task((found.loop.task if found else "") or "Improve the draft.", rubric)
        draft = found.it.content if found else text
        revised, elapsed, usage = self._write(generator, task, draft, issues)
        out = self._adopt(found, text, rubric, "optimize_output")
        feedback = as_feedback(issues)
        if not out.recorded and out.it.evaluation is None:
            out.it.feedback = feedback  # revised unjudged: record what it was revised on
            self.ledger.record(out)
        new = self.ledger.add(
            out.loop,
            revised,
            source="revised",
            generation_ms=elapsed,
            usage=usage,
            parent=out,
            revision_feedback=feedback,
        )
        return _generation(new)

    def _history(self, args: dict[str, Any]) -> dict[str, Any]:
        loop_id = optional_text(args, "loop_id")
        try:
            return self.ledger.history(loop_id.strip() if loop_id else None)
        except LoopNotFoundError as exc:
            hint = (
                ". Omit loop_id for the most recent loop"
                if loop_id
                else "; call generate_initial_output to start one"
            )
            raise ToolFailure("loop_not_found", f"{exc}{hint}") from None

    # -- helpers -----------------------------------------------------------------------

    def _require_generator(self) -> Generator:
        if self.generator is None:
            raise ToolFailure(
                "model_not_configured",
                "no model is configured to write "
                f"outputs; {_NO_MODEL}. evaluate_output with code-filled "
                "criteria works without one.",
            )
        return self.generator

    def _write(
        self, generator: Generator, task: str, draft: str = "", issues: list[str] | None = None
    ) -> tuple[str, float, Any]:
        """One generator call: the text, the time it took (ms) and its usage."""
        started = time.perf_counter()
        try:
            with metered() as meter:
                if draft:
                    text = generator.generate(task, draft, issues)
                else:
                    text = generator.generate(task)
        except GradeloopError as exc:
            raise ToolFailure("generation_failed", f"the writer failed: {exc}") from None
        except Exception as exc:  # API errors after the client's retries, and the like
            raise ToolFailure(
                "generation_failed", f"the writer failed: {failure_line(exc)}"
            ) from None
        if not isinstance(text, str) or not text.strip():
            raise ToolFailure("generation_failed", "the writer returned no text; try again")
        return text, (time.perf_counter() - started) * 1000, meter.usage

    def _find(self, text: str, rubric: Rubric | None) -> tuple[Output | None, Rubric]:
        """The output ``text`` is, if any, and the criteria to use for it."""
        found = self.ledger.find(text)
        if found is not None:
            return found, rubric if rubric is not None else found.loop.rubric
        if rubric is None:
            raise ToolFailure(
                "invalid_arguments",
                "'criteria' is required here: this text "
                "matches no output of this session, so there is no loop to "
                "take criteria from. Pass the output text exactly as a tool "
                "returned it, or give 'criteria'.",
            )
        return None, rubric

    def _adopt(self, found: Output | None, text: str, rubric: Rubric, tool: str) -> Output:
        """``found``; or, for text never seen, a new loop holding it (once the call worked)."""
        if found is not None:
            return found
        loop = self.ledger.start("", rubric, origin=tool)
        return self.ledger.add(loop, text, source="external")


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def _generation(out: Output) -> dict[str, Any]:
    return {**out.it.generation_json(), "loop_id": out.loop.loop_id}


def _issues_of(out: Output | None) -> list[str]:
    ev = out.it.evaluation if out is not None else None
    if out is None or ev is None:
        raise ToolFailure(
            "invalid_arguments",
            "'feedback' is required: this output was never "
            "evaluated. Call evaluate_output first, or say what to fix.",
        )
    if not ev.verdict.issues:
        raise ToolFailure(
            "invalid_arguments",
            f"'feedback' is required: the evaluation of {out.output_id} listed no issues",
        )
    return list(ev.verdict.issues)


def _require_open(ledger: Ledger, loop: LoopState) -> None:
    if loop.stop_reason is not None:
        raise ToolFailure(
            "loop_finished",
            f"loop {loop.loop_id} is over ({loop.stop_reason}); its final output is "
            f"{loop.final_output_id}. Use it, or call generate_initial_output to start again.",
        )
    if ledger.at_cap(loop):
        latest = loop.outputs[-1]
        raise ToolFailure(
            "loop_finished",
            f"loop {loop.loop_id} has reached its cap of {len(loop.outputs)} iterations; no "
            f"more revisions. Evaluate {latest.output_id} if you have not, then use the best "
            "output (get_optimization_history shows them all).",
        )


def _judge_required(keys: tuple[str, ...]) -> str:
    return (
        f"these criteria are filled by the LLM judge and no judge model is configured: "
        f"{', '.join(keys)}. Give them a 'checker' (code-filled criteria work without a key), "
        f"or {_NO_MODEL}."
    )
