"""What repeated judging costs: samples=k against resample="doubtful", in tokens.

Run: ``python benchmarks/bench_samples.py [--k 3 5] [--flip 0.15] [--seed 7]``

The payments-guide example (its ten drafts and the rubric's three judge keys, plus
a scored ``clarity`` key) is judged through the test suite's Messages-API emulator
and the real ``anthropic`` client, by a *noisy* stand-in judge: for each key it
starts from the example's deterministic stand-in answer (the "truth" here) and
flips a pass/fail answer with probability ``--flip``, and scores ``clarity`` as
the draft's true score plus a random -2..+2. Its reasoning is one sentence per key
asked, so a request about fewer keys gets a shorter reply, as a model's would.

Printed, each against ``samples=1`` measured in the same run: requests, input and
output tokens (the emulator counts four characters a token), and how many of the
ten drafts' key decisions match the truth. Nothing here asserts on anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.support.emulator

from tests.support.emulator import Emulator  # noqa: E402

from gradeloop import AnthropicJudge, Criterion, Rubric, grade  # noqa: E402
from gradeloop.migration import read_drafts  # noqa: E402
from gradeloop.testing import verdict_reply  # noqa: E402

EXAMPLE = ROOT / "examples" / "payments-guide"
CLARITY = Criterion(
    key="clarity", description="A new reader can follow every step.", scale="score", threshold=7
)


def _stand_in() -> Any:
    spec = importlib.util.spec_from_file_location("stand_in", EXAMPLE / "stand_in_judge.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NoisyJudge:
    """Answers a request from the truth table, with seeded noise per request."""

    def __init__(self, truth: dict[str, dict[str, Any]], flip: float, seed: int) -> None:
        self.truth = truth
        self.flip = flip
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def respond(self, body: dict[str, Any]) -> Any:
        text = body["messages"][0]["content"]
        draft = text.split("<draft>\n", 1)[1].rsplit("\n</draft>", 1)[0]
        truth = self.truth[draft]
        defs = body["output_config"]["format"]["schema"].get("$defs", {})
        met_keys = list(defs.get("CriteriaMet", {}).get("properties", {}))
        scored = list(defs.get("Scores", {}).get("properties", {}))
        with self.lock:
            met = {
                k: truth[k] if self.rng.random() >= self.flip else not truth[k] for k in met_keys
            }
            scores = {k: max(1, min(10, truth[k] + self.rng.randint(-2, 2))) for k in scored}
        reasoning = " ".join(
            f"{k}: the draft's evidence for this criterion was read and weighed in full."
            for k in [*scores, *met]
        )
        data: dict[str, Any] = {"reasoning": reasoning}
        if scores:
            data["scores"] = scores
        if met:
            data["criteria_met"] = met
        data["passed"] = all(met.values()) and all(s >= 7 for s in scores.values())
        data["issues"] = [f"{k}: fix it" for k, v in met.items() if not v]
        return verdict_reply(data)


def truth_table(rubric: Rubric, drafts: list[Any], passing: bool) -> dict[str, dict[str, Any]]:
    """The deterministic stand-in's answers plus a clarity score per draft; with
    ``passing``, every key met and clarity 10 (a set of good drafts)."""
    stand_in = _stand_in()
    out: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(drafts):
        if passing:
            out[item.draft] = {
                c.key: 10 if c.scale == "score" else True for c in rubric.judge_criteria
            }
            continue
        keys = [c.key for c in rubric.judge_criteria if c.scale != "score"]
        answers: dict[str, Any] = dict(stand_in.judge(item.draft, "", keys)["criteria_met"])
        answers["clarity"] = [9, 8, 7, 6, 9, 5, 8, 7, 9, 6][i % 10]
        out[item.draft] = answers
    return out


def run(label: str, judge_kw: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    rubric = Rubric([*Rubric.load(EXAMPLE / "rubric.toml"), CLARITY])
    drafts = read_drafts(EXAMPLE / "drafts.jsonl", default_task="Write the guide.")
    truth = truth_table(rubric, drafts, args.passing)
    emulator = Emulator()
    try:
        emulator.responder = NoisyJudge(truth, args.flip, args.seed).respond
        judge = AnthropicJudge(client=emulator.client(max_retries=0), **judge_kw)
        right = total = 0
        for _ in range(args.rounds):
            for item in drafts:
                ev = grade(item.draft, rubric, task=item.task, judge=judge)
                for c in rubric.judge_criteria:
                    want = truth[item.draft][c.key]
                    want = want >= 7 if c.scale == "score" else want
                    right += ev[c.key].passed == want
                    total += 1
        usage = judge.usage
        return {
            "label": label,
            "requests": len(judge.calls),
            "input": usage.total_input,
            "output": usage.output_tokens,
            "right": right,
            "total": total,
        }
    finally:
        emulator.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--flip", type=float, default=0.15)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the ten drafts")
    parser.add_argument(
        "--passing", action="store_true", help="truth: every key met (a set of good drafts)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [run("samples=1", {}, args)]
    for k in args.k:
        rows.append(run(f"samples={k}", {"samples": k}, args))
        rows.append(run(f"samples={k} doubtful", {"samples": k, "resample": "doubtful"}, args))
    base = rows[0]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    truth = "every key met" if args.passing else "the stand-in's answers"
    print(
        f"payments-guide: 10 drafts x {args.rounds} passes, 4 judge keys (1 scored), "
        f"truth: {truth}, noise flip={args.flip}, seed={args.seed}"
    )
    print(
        f"{'setting':<20} {'requests':>8} {'input tok':>10} {'output tok':>10} "
        f"{'tokens vs k=1':>13} {'decisions right':>16}"
    )
    for r in rows:
        ratio = (r["input"] + r["output"]) / (base["input"] + base["output"])
        print(
            f"{r['label']:<20} {r['requests']:>8} {r['input']:>10} {r['output']:>10} "
            f"{ratio:>12.2f}x {r['right']:>9}/{r['total']} ({r['right'] / r['total']:.0%})"
        )


if __name__ == "__main__":
    main()
