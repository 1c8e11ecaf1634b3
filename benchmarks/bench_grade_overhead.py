"""The fixed cost of ``grade()`` per draft, where the checks themselves are cheap.

Run: ``python benchmarks/bench_grade_overhead.py [--drafts 2000] [--repeat 5]``

2,000 different short drafts (a paragraph, a JSON block, a Python block), five cheap
checks each: ``contains``, ``regex``, ``length``, ``json_valid`` and ``code_runs``.
Timed in this run, as CPU seconds of this process, the best of ``--repeat`` rounds
(the subjects alternate within a round, so a drift of the machine hits each):

* ``bare`` - five one-liners (``in``, ``re.search``, ``len(split())``, ``json.loads``,
  ``ast.parse``): what the checks cost with no library at all;
* ``wrapper`` - the same one-liners, each wrapped as a thin evaluator library wraps
  them (a result dict per check with key, score and comment; openevals' shape);
* ``checkers`` - gradeloop's five checkers called directly (looked up once);
* ``grade`` - ``grade(draft, rubric, skip_judge=True)`` per draft;
* ``grade_many`` - ``grade_many(drafts, rubric, skip_judge=True)`` over all of them.

Printed: each subject's microseconds per draft and its ratio to ``checkers`` and to
``bare``. Targets (issue 38): ``grade`` <= 2.0x ``checkers``; ``grade_many`` per
draft <= 1.1x ``grade``. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import time
from collections.abc import Callable
from typing import Any

from gradeloop import Rubric, get_checker, grade, grade_many

CRITERIA: list[dict[str, Any]] = [
    {
        "key": "mentions_refund",
        "description": "Mentions the refund policy.",
        "checker": "contains",
        "options": {"values": ["refund"]},
    },
    {
        "key": "cites_order",
        "description": "Cites an order number.",
        "checker": "regex",
        "options": {"pattern": r"order #\d{4,}"},
    },
    {
        "key": "short",
        "description": "At most 200 words.",
        "checker": "length",
        "options": {"max_words": 200},
    },
    {
        "key": "json_ok",
        "description": "The JSON block is valid.",
        "checker": "json_valid",
        "options": {"block": True},
    },
    {
        "key": "code_ok",
        "description": "The Python sample runs on 3.9.",
        "checker": "code_runs",
        "options": {},
    },
]
RUBRIC = Rubric.from_dict({"criteria": CRITERIA})
ORDER = re.compile(r"order #\d{4,}")
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


def draft(n: int) -> str:
    """A short support reply, different for every n; some fail a check or two."""
    refund = "refund" if n % 5 else "credit"
    return (
        f"Thanks for writing about order #{10_000 + n}. We have issued a {refund} of "
        f"{n % 90 + 10} euros; it reaches your card in 3-5 days.\n\n"
        "```json\n"
        f'{{"order": {10_000 + n}, "amount": {n % 90 + 10}, "status": "sent"}}\n'
        "```\n\n"
        "```python\n"
        f"def refund_status(order: int = {n}) -> str:\n"
        "    return 'sent' if order else 'pending'\n"
        "```\n"
    )


def _blocks(text: str, lang: str) -> list[str]:
    return [body for tag, body in FENCE.findall(text) if tag == lang]


def _json_ok(text: str) -> bool:
    try:
        for body in _blocks(text, "json"):
            json.loads(body)
    except ValueError:
        return False
    return True


def _code_ok(text: str) -> bool:
    try:
        for body in _blocks(text, "python"):
            ast.parse(body, feature_version=(3, 9))
    except SyntaxError:
        return False
    return True


def bare(text: str) -> list[bool]:
    return [
        "refund" in text,
        ORDER.search(text) is not None,
        len(text.split()) <= 200,
        _json_ok(text),
        _code_ok(text),
    ]


ONE_LINERS: list[tuple[str, Callable[[str], bool]]] = [
    ("mentions_refund", lambda t: "refund" in t),
    ("cites_order", lambda t: ORDER.search(t) is not None),
    ("short", lambda t: len(t.split()) <= 200),
    ("json_ok", _json_ok),
    ("code_ok", _code_ok),
]


def wrapper(text: str) -> list[dict[str, Any]]:
    """Each one-liner wrapped the way a thin evaluator library returns a result."""
    out = []
    for key, check in ONE_LINERS:
        ok = check(text)
        out.append({"key": key, "score": ok, "comment": None if ok else f"{key} failed"})
    return out


CHECKS = [(get_checker(c["checker"]), c["options"]) for c in CRITERIA]


def checkers(text: str) -> list[Any]:
    return [fn(text, **options) for fn, options in CHECKS]


def graded(text: str) -> Any:
    return grade(text, RUBRIC, skip_judge=True)


def subjects_over(n: int) -> dict[str, Callable[[], Any]]:
    """Each subject, over ``n`` drafts; checked to agree first."""
    drafts = [draft(i) for i in range(n)]
    # the same verdicts from every subject that decides (a check on the benchmark itself)
    assert [list(bare(d)) for d in drafts] == [[r.passed for r in checkers(d)] for d in drafts], (
        "the one-liners and the checkers disagree"
    )
    assert [[c.passed for c in graded(d).criteria] for d in drafts[:50]] == [
        bare(d) for d in drafts[:50]
    ]
    return {
        "bare": lambda: [bare(d) for d in drafts],
        "wrapper": lambda: [wrapper(d) for d in drafts],
        "checkers": lambda: [checkers(d) for d in drafts],
        "grade": lambda: [graded(d) for d in drafts],
        "grade_many": lambda: grade_many(drafts, RUBRIC, skip_judge=True),
    }


def timed(fn: Callable[[], Any]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drafts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    subjects = subjects_over(args.drafts)
    best = dict.fromkeys(subjects, float("inf"))
    for _ in range(args.repeat):
        for name, fn in subjects.items():
            best[name] = min(best[name], timed(fn))
    print(
        f"{args.drafts} drafts, 5 cheap checks each (contains, regex, length, json_valid, "
        f"code_runs); CPU time, best of {args.repeat}"
    )
    print(f"{'subject':>11} {'us/draft':>9} {'x checkers':>11} {'x bare':>8}")
    for name, seconds in best.items():
        per = seconds / args.drafts * 1e6
        print(
            f"{name:>11} {per:>9.1f} {seconds / best['checkers']:>11.2f} "
            f"{seconds / best['bare']:>8.2f}"
        )
    print(
        f"\ngrade / checkers = {best['grade'] / best['checkers']:.2f} (target <= 2.0); "
        f"grade_many / grade = {best['grade_many'] / best['grade']:.2f} (target <= 1.1)"
    )


if __name__ == "__main__":
    main()
