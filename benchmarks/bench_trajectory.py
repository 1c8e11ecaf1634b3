"""Grading agents' transcripts with the five trajectory checkers, against the bare matching.

Run: ``python benchmarks/bench_trajectory.py [--drafts N] [--repeat N] [--calls N]``

Builds ``--drafts`` agent runs (2,000 unless told; each ``--calls`` tool calls, 8
unless told: an order lookup, knowledge-base searches, a refund; each with its result,
then an answer; in the OpenAI or the Anthropic shape by turns; one in seven with a
forbidden call) and, for each, the run a correct agent makes as its reference. Five
trajectory keys: ``tool_called``, ``tool_not_called``, ``tool_sequence`` (strict,
``args = "superset"``, the expected calls the reference's), ``tool_args_match`` and
``step_count``. Timed as CPU seconds of this process (``time.process_time``), the
best of ``--repeat`` rounds:

* ``match``: the five checks made by calling the match functions directly on each
  transcript's tool calls (``match_strict`` against the reference's calls, and the
  counts and the comparison the other four checkers make);
* ``checkers``: the five checker functions called directly, with a context each;
* ``grade``: ``grade(transcript, rubric, reference=...)``;
* from the agent's message dicts, what a caller holds: ``read + match`` (reading the
  messages with ``Transcript.from_messages``, then ``match``) against
  ``grade(messages, rubric, reference=...)``.

Printed: microseconds a transcript and the ratios; the target (issue 38) is grading at
most 2.0x calling the match functions directly. Then each match mode on one transcript of
10,000 calls, and the hostile pairing that stops at the work limit. The subjects are
checked to agree before they are timed. Nothing here asserts on time: it prints.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any

from gradeloop import Rubric, Transcript, grade
from gradeloop.grading import ToolCall
from gradeloop.grading._context import make_context
from gradeloop_checkers.trajectory import CHECKERS, MODES, Want, match_strict
from gradeloop_checkers.trajectory._args import covers

TARGET = 2.0
FORBIDDEN = ("delete_account", "change_email")


def rubric(calls: int) -> Rubric:
    """Five trajectory keys; tool_sequence's expected calls are the reference's."""
    return Rubric.from_dict(
        {
            "criteria": [
                {"key": "looked_up", "description": "d", "checker": "tool_called",
                 "options": {"name": "lookup_order"}},
                {"key": "no_deletes", "description": "d", "checker": "tool_not_called",
                 "options": {"names": list(FORBIDDEN)}},
                {"key": "right_tools", "description": "d", "checker": "tool_sequence",
                 "options": {"mode": "strict", "args": "superset"}},
                {"key": "reason", "description": "d", "checker": "tool_args_match",
                 "options": {"name": "issue_refund", "args": {"reason": "damaged"},
                             "match": "subset"}},
                {"key": "concise", "description": "d", "checker": "step_count",
                 "options": {"max": calls + 1}},
            ]
        }
    )  # fmt: skip


def plan(n: int, calls: int, *, wrong: bool) -> list[tuple[str, dict[str, Any]]]:
    """The calls of agent run ``n``: a lookup, knowledge-base searches, a refund."""
    order = f"A{n:05d}"
    steps = [("lookup_order", {"order_id": order})]
    steps += [("search_kb", {"query": f"damaged item {i}", "limit": 5}) for i in range(calls - 2)]
    steps.append(("issue_refund", {"order_id": order, "amount": 10 + n % 50, "reason": "damaged"}))
    if wrong:  # some runs go wrong: a forbidden call in place of a search
        steps[1] = ("delete_account", {"user_id": f"u{n}"})
    return steps


def messages(n: int, steps: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The run as messages, OpenAI and Anthropic shapes by turns; results and an answer."""
    out: list[dict[str, Any]] = [{"role": "user", "content": f"Order {n} arrived broken."}]
    for i, (name, args) in enumerate(steps):
        result = json.dumps({"status": "ok", "items": list(range(i % 5))})
        if n % 2:
            cid = f"call_{i}"
            call = {"id": cid, "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            out.append({"role": "tool", "tool_call_id": cid, "content": result})
        else:
            cid = f"toolu_{i}"
            out.append({"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": cid, "name": name, "input": args}]})  # fmt: skip
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": cid, "content": result}]})  # fmt: skip
    out.append({"role": "assistant", "content": f"I refunded order {n}."})
    return out


def direct(t: Transcript, reference: Transcript, max_steps: int) -> list[bool]:
    """The five checks, made by calling the match functions on the tool calls."""
    calls: tuple[ToolCall, ...] = t.calls  # the tuple itself, as the checkers read it
    wants = [Want(c.name, c.args, i) for i, c in enumerate(reference.calls)]
    return [
        sum(1 for c in calls if c.name == "lookup_order") >= 1,
        not any(c.name in FORBIDDEN for c in calls),
        match_strict(calls, wants, "superset").passed,
        any(covers({"reason": "damaged"}, c.args) for c in calls if c.name == "issue_refund"),
        t.assistant_turns <= max_steps,
    ]


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def checkers(t: Transcript, reference: Transcript, r: Rubric) -> list[bool]:
    """The five checker functions, called directly with the transcript's context."""
    context = make_context("", reference, None, t)
    out = []
    for c in r:
        said = CHECKERS[c.checker](t.final_text, **c.options, context=context)  # type: ignore[index]
        out.append(said if isinstance(said, bool) else said.passed)  # True, or a CheckResult
    return out


def subjects(calls: int, drafts: int, wrong_every: int = 7) -> dict[str, Callable[[], Any]]:
    """Each subject, over every one of ``drafts`` runs (one in ``wrong_every`` with a
    forbidden call); checked to agree first."""
    r = rubric(calls)
    runs = [(n, plan(n, calls, wrong=n % wrong_every == 3 % wrong_every)) for n in range(drafts)]
    raw = [messages(n, steps) for n, steps in runs]
    refs = [Transcript.from_messages(messages(n, plan(n, calls, wrong=False))) for n, _ in runs]
    transcripts = [Transcript.from_messages(m) for m in raw]
    pairs = list(zip(transcripts, refs, strict=True))
    for t, ref in pairs:  # the subjects must agree before their times mean anything
        expected = direct(t, ref, calls + 1)
        assert [c.passed for c in grade(t, r, reference=ref).criteria] == expected
        assert checkers(t, ref, r) == expected
    both = list(zip(raw, refs, strict=True))
    out: dict[str, Callable[[], Any]] = {
        "match": lambda: [direct(t, ref, calls + 1) for t, ref in pairs],
        "checkers": lambda: [checkers(t, ref, r) for t, ref in pairs],
        "grade": lambda: [grade(t, r, reference=ref) for t, ref in pairs],
        "read + match": lambda: [
            direct(Transcript.from_messages(m), ref, calls + 1) for m, ref in both
        ],
        "grade(messages)": lambda: [grade(m, r, reference=ref) for m, ref in both],
    }
    return out


def timings(calls: int, drafts: int, repeat: int, wrong_every: int = 7) -> dict[str, float]:
    timed = subjects(calls, drafts, wrong_every)
    return {name: best(fn, repeat) / drafts * 1e6 for name, fn in timed.items()}


def big_transcripts(repeat: int) -> None:
    big = Transcript.from_messages(
        [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{i}",
                        "name": "search",
                        "input": {"q": i, "page": 1},
                    }
                ],
            }
            for i in range(10_000)
        ]
    )
    calls = big.tool_calls
    wants = [Want(c.name, c.args, i) for i, c in enumerate(calls)]
    for mode, fn in MODES.items():
        took = best(lambda fn=fn: fn(calls, wants, "superset"), repeat)
        print(f"10,000 calls against themselves, mode={mode}, args=superset: {took * 1e3:6.1f} ms")
    hostile = [Want("search", {"q": i}, i) for i in range(10_000, 20_000)]
    took = best(lambda: MODES["unordered"](calls, hostile, "superset"), 1)
    print(
        f"10,000 calls against 10,000 others by containment (the work limit): {took * 1e3:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drafts", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--wrong-every", type=int, default=7, help="one run in N goes wrong (1: every run)"
    )
    args = parser.parse_args()
    if args.wrong_every < 1:
        parser.error("--wrong-every must be 1 or more")
    us = timings(args.calls, args.drafts, args.repeat, args.wrong_every)
    print(
        f"python {platform.python_version()}, {args.drafts:,} agent runs of {args.calls} "
        f"tool calls (one in {args.wrong_every} wrong), five trajectory keys; CPU time, "
        f"best of {args.repeat}"
    )
    for name, value in us.items():
        print(f"{name:>16} {value:8.1f} us a transcript")
    for top, bottom in (("grade", "match"), ("grade", "checkers"),
                        ("grade(messages)", "read + match")):  # fmt: skip
        ratio = us[top] / us[bottom]
        verdict = "ok" if ratio <= TARGET else "above"
        print(f"{top} / {bottom} = {ratio:.2f} (target <= {TARGET}: {verdict})")
    big_transcripts(max(1, args.repeat // 2))


if __name__ == "__main__":
    main()
