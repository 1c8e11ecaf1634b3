"""The four tools' definitions, in the Anthropic tool format (name, description, input_schema).

The descriptions are written for the model that calls the tools: when to call each
one and what comes back. None of the tools is ``strict``: strict tool use needs
``additionalProperties: false`` on every object and every property required, but a
criterion's ``options`` is a free-form object (each checker takes its own keyword
options) and most criterion fields are optional. The runner validates every argument
itself and answers a bad one with an error object the model can act on.
"""

from __future__ import annotations

import copy
from typing import Any

from ..grading._registry import Registry, default_registry
from ..grading._rubric import KEY_PATTERN

__all__ = ["TOOL_DEFINITIONS", "TOOL_NAMES", "tool_definitions"]

CHECKER_HINT = (
    "Name of a code checker that fills this criterion deterministically (free, no model "
    'call). Omit it, or give "judge", to have the LLM judge fill it instead.'
)

CRITERION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One named criterion. Mix code-filled ones (with `checker`) and "
    "judge-filled ones (without) freely.",
    "properties": {
        "key": {
            "type": "string",
            "pattern": KEY_PATTERN.pattern,
            "description": 'Unique name of the criterion, e.g. "clarity" or "code_runs".',
        },
        "description": {
            "type": "string",
            "minLength": 1,
            "description": "What the output must do to meet it. The writer and the judge "
            "both read this.",
        },
        "checker": {"type": "string", "description": CHECKER_HINT},
        "options": {
            "type": "object",
            "description": 'Keyword options for the checker, e.g. {"max_words": 40}. '
            "Only with `checker`.",
        },
        "scale": {
            "type": "string",
            "enum": ["pass_fail", "score"],
            "description": '"pass_fail" (default; counts 10 or 0) or "score" (1-10, met '
            "when the score reaches `threshold`).",
        },
        "weight": {
            "type": "number",
            "minimum": 0,
            "description": "Weight in the overall score (default 1).",
        },
        "threshold": {
            "type": "number",
            "minimum": 1,
            "maximum": 10,
            "description": 'Score a "score" criterion needs to be met (default 7).',
        },
    },
    "required": ["key", "description"],
    "additionalProperties": False,
}


def _criteria(required: bool) -> dict[str, Any]:
    when = (
        "The criteria the output will be graded against."
        if required
        else "The criteria to grade against. Omit to reuse the criteria of the loop this "
        "output belongs to."
    )
    return {"type": "array", "minItems": 1, "items": CRITERION_SCHEMA, "description": when}


_OUTPUT = {
    "type": "string",
    "minLength": 1,
    "description": "The output text, exactly as a previous tool call returned it in `content` "
    "(that is how it is linked to its loop).",
}

#: The four tools in the Anthropic format; pass as ``tools=`` (see :func:`tool_definitions`).
TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "generate_initial_output",
        "description": (
            "Start a new optimization loop: write the first output for a task, aware of "
            "every criterion it will be graded on. Call it once per task, first. Returns "
            "JSON {loop_id, output_id, content, iteration: 1, generation_time_ms}. Next, "
            "pass `content` to evaluate_output."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What to write, in full: the writer sees only this and "
                    "the criteria.",
                },
                "criteria": _criteria(required=True),
            },
            "required": ["task", "criteria"],
            "additionalProperties": False,
        },
    },
    {
        "name": "evaluate_output",
        "description": (
            "Grade an output against the criteria: criteria with a `checker` are checked "
            "by code, the rest by an LLM judge. Returns JSON {loop_id, output_id, "
            "iteration, criteria: [{name, weight, score (0-10), passed, feedback?}], "
            "overall_score (weighted mean, 0-10), passed, issues, "
            "improvement_from_previous?}. If `passed` is true, stop: that output is done. "
            "Otherwise pass the output and `issues` to optimize_output. When the loop is "
            "over (passed, no improvement, or the iteration cap) the result also has "
            "`stop_reason` and `final_output_id`: stop and use that output."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"output": _OUTPUT, "criteria": _criteria(required=False)},
            "required": ["output"],
            "additionalProperties": False,
        },
    },
    {
        "name": "optimize_output",
        "description": (
            "Revise an output so that it fixes the given feedback while keeping what "
            "already works; the revision joins the same loop as the next iteration. "
            "Returns JSON {loop_id, output_id, content, iteration, generation_time_ms}. "
            "Next, evaluate the new `content`. Refused once the loop is over."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "output": _OUTPUT,
                "feedback": {
                    "anyOf": [
                        {"type": "string", "minLength": 1},
                        {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    ],
                    "description": "What to fix: the `issues` list from evaluate_output, "
                    "or your own text. Omit to use the issues of this output's evaluation.",
                },
                "criteria": _criteria(required=False),
            },
            "required": ["output"],
            "additionalProperties": False,
        },
    },
    {
        "name": "get_optimization_history",
        "description": (
            "The full history of a loop: every output, its overall score and pass/fail, "
            "the feedback it got, the improvement trajectory, and the final output. "
            "Returns JSON {loop_id, iterations: [{output_id, content, evaluation: "
            "{overall_score, passed}, feedback?}], final_output_id, total_time_ms, "
            "improvement_trajectory, status, stop_reason}. Call it to report on a loop."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "loop_id": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The loop's id (a unique prefix will do). Omit for the "
                    "most recent loop.",
                },
            },
            "additionalProperties": False,
        },
    },
]

#: The tools' names, in order.
TOOL_NAMES: tuple[str, ...] = tuple(d["name"] for d in TOOL_DEFINITIONS)


def tool_definitions(registry: Registry | None = None) -> list[dict[str, Any]]:
    """A fresh copy of :data:`TOOL_DEFINITIONS` naming the checkers registered now.

    ``generate_initial_output``'s ``checker`` field then lists each checker with its
    options, so a model can pick one without guessing names; the other tools point
    there rather than repeat the list on every request.
    """
    reg = registry or default_registry()
    listing = "; ".join(_describe(c.name, c.description, c.option_names()) for c in reg)
    out = [copy.deepcopy(d) for d in TOOL_DEFINITIONS]  # one copy each: no shared dicts
    for definition in out:
        criteria = definition["input_schema"]["properties"].get("criteria")
        if criteria is None or not listing:
            continue
        checker = criteria["items"]["properties"]["checker"]
        if definition["name"] == "generate_initial_output":
            checker["description"] = f"{CHECKER_HINT} Available checkers: {listing}."
        else:
            checker["description"] = (
                f"{CHECKER_HINT} The available checkers are listed in generate_initial_output."
            )
    return out


def _describe(name: str, description: str, options: list[str]) -> str:
    what = description.replace("``", "`").strip().rstrip(".") or "no description"
    return f"{name} ({what}" + (f"; options: {', '.join(options)})" if options else ")")
