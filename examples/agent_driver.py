"""A Claude model drives gradeloop's evaluator-optimizer loop through the four tools.

The model gets :func:`gradeloop.tools.tool_definitions` as ``tools``; every
``tool_use`` block it sends is carried out by a :class:`gradeloop.tools.ToolRunner`
and answered with a ``tool_result`` block (the runner's JSON) in the next user turn.
The conversation ends when the model stops asking for tools (``end_turn``) or at a
turn cap. Each loop the model runs is recorded, so ``gradeloop history`` shows it.

As a script::

    python examples/agent_driver.py --task-file examples/payments-guide/task.md \\
        --rubric examples/payments-guide/rubric.toml

As a library::

    from agent_driver import drive
    result = drive(client, task, criteria)   # client: an anthropic.Anthropic
    print(result.answer, result.loop_ids)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic

from gradeloop import AnthropicGenerator, AnthropicJudge, Rubric, make_client
from gradeloop.errors import GradeloopError
from gradeloop.models import DEFAULT_MODEL, model_configured
from gradeloop.tools import ToolRunner

SYSTEM = """\
You improve a piece of writing with gradeloop's tools until it meets its criteria.
1. Call generate_initial_output once, with the task and the criteria exactly as given.
2. Call evaluate_output on the `content` it returns.
3. While the evaluation has not passed and has no `stop_reason`, call optimize_output \
with that output and the evaluation's `issues`, then evaluate the revision.
4. When an evaluation passes or carries a `stop_reason`, call get_optimization_history, \
then reply with the final output's text and a one-line summary of the scores.
If a tool returns an `error`, read its message and correct the call."""

DEFAULT_MAX_TURNS = 12


@dataclass
class ToolCall:
    """One tool call the model made, and what the runner answered."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]


@dataclass
class DriveResult:
    """How the conversation ended.

    ``stop`` is the last reply's ``stop_reason`` (``"end_turn"`` normally) or
    ``"max_turns"`` when the cap cut the conversation short.
    """

    answer: str
    stop: str
    turns: int
    calls: list[ToolCall] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def loop_ids(self) -> list[str]:
        """The loops the tool calls touched, in first-seen order."""
        ids = (c.result.get("loop_id") for c in self.calls)
        return list(dict.fromkeys(i for i in ids if isinstance(i, str)))


def opening(task: str, criteria: list[dict[str, Any]]) -> str:
    """The first user message: the task, and the criteria as JSON to pass on."""
    return (
        f"<task>\n{task.strip()}\n</task>\n\n"
        "Criteria (pass this array as `criteria`):\n"
        f"```json\n{json.dumps(criteria, indent=2, ensure_ascii=False)}\n```"
    )


def drive(
    client: Any,
    task: str,
    criteria: list[dict[str, Any]],
    *,
    runner: ToolRunner | None = None,
    model: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tokens: int = 8192,
) -> DriveResult:
    """Let the model run the loop through the tools; returns how it ended.

    ``client`` is an :class:`anthropic.Anthropic` (or anything shaped like it).
    Without ``runner`` one is built on the same client, writing to the default
    history store. ``model`` defaults to gradeloop's generator model.
    """
    own = runner is None
    if runner is None:
        runner = ToolRunner(AnthropicGenerator(client), AnthropicJudge(client))
    chosen = model or getattr(runner.generator, "model", None) or DEFAULT_MODEL
    messages: list[dict[str, Any]] = [{"role": "user", "content": opening(task, criteria)}]
    result = DriveResult(answer="", stop="max_turns", turns=0, messages=messages)
    try:
        tools = runner.definitions()
        while result.turns < max_turns:
            result.turns += 1
            reply = client.messages.create(
                model=chosen, max_tokens=max_tokens, system=SYSTEM, tools=tools, messages=messages
            )
            messages.append({"role": "assistant", "content": [_as_dict(b) for b in reply.content]})
            if reply.stop_reason == "pause_turn":
                continue  # the server paused a long turn: send it back to resume
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                result.answer = "".join(b.text for b in reply.content if b.type == "text")
                result.stop = str(reply.stop_reason)
                return result
            messages.append({"role": "user", "content": _answer(runner, uses, result)})
        return result
    finally:
        if own:
            runner.close()


def _answer(runner: ToolRunner, uses: list[Any], result: DriveResult) -> list[dict[str, Any]]:
    """One tool_result block per tool_use block, in order, in one user turn."""
    blocks = []
    for use in uses:
        block = runner.tool_result(use)
        arguments = use.input if isinstance(use.input, dict) else {}
        result.calls.append(ToolCall(use.name, arguments, json.loads(block["content"])))
        blocks.append(block)
    return blocks


def _as_dict(block: Any) -> dict[str, Any]:
    # The reply's blocks go back as they came, thinking signatures included.
    data: dict[str, Any] = block.to_dict() if hasattr(block, "to_dict") else dict(block)
    return data


def one_line(exc: Exception) -> str:
    """An API error in one line: its class, status and the first line of its message."""
    status = getattr(exc, "status_code", None)
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "") + f": {first}"


def parser() -> argparse.ArgumentParser:
    """The script's options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", help="the task text")
    p.add_argument("--task-file", help="read the task from this file")
    p.add_argument("--rubric", required=True, help="rubric file (TOML or JSON)")
    p.add_argument("--model", help="the driving model (default: gradeloop's)")
    p.add_argument(
        "--base-url",
        help="Messages API base URL, e.g. a local server (default: $ANTHROPIC_BASE_URL)",
    )
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS)
    p.add_argument("--db", help="history database (default: $GRADELOOP_HOME/history.db)")
    return p


def main(argv: list[str] | None = None) -> int:
    """The command line: run the conversation, print the answer and the loop ids."""
    options = parser()
    args = options.parse_args(argv)
    if bool(args.task) == bool(args.task_file):
        options.error("give --task or --task-file (one of them)")
    try:
        task = args.task or Path(args.task_file).read_text(encoding="utf-8")
        criteria = Rubric.load(args.rubric).to_dict()["criteria"]
        if not (args.base_url or model_configured()):
            print(
                "agent_driver: no model is configured: set ANTHROPIC_API_KEY, "
                "or give --base-url URL for a local server",
                file=sys.stderr,
            )
            return 2
        client = make_client(base_url=args.base_url)
        with ToolRunner(AnthropicGenerator(client), AnthropicJudge(client), args.db) as runner:
            result = drive(
                client, task, criteria, runner=runner, model=args.model, max_turns=args.max_turns
            )
    except (GradeloopError, OSError) as exc:
        print(f"agent_driver: {exc}", file=sys.stderr)
        return 2
    except anthropic.APIError as exc:  # the driving model's own call failed, after retries
        print(f"agent_driver: the model's API call failed: {one_line(exc)}", file=sys.stderr)
        return 2
    print(result.answer)
    print(
        f"[{result.stop} after {result.turns} turn(s), {len(result.calls)} tool call(s); "
        f"loops: {', '.join(result.loop_ids) or 'none'}]",
        file=sys.stderr,
    )
    return 0 if result.stop == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(main())
