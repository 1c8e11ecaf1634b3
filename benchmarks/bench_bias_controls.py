"""What each bias control costs: requests and input tokens per draft, against one judge.

Run: ``python benchmarks/bench_bias_controls.py [--drafts 10] [--k 3] [--seed 7]``

The payments-guide example's ten drafts and its rubric's three judge keys (plus a
scored ``clarity`` key) are judged through the test suite's Messages-API emulator and
the real ``anthropic`` client. The emulator answers as a fixed stand-in judge: each
key met or not, and each score, from a seeded hash of the draft and the key (so some
drafts fail a key (1 in 10 a key) or score near the threshold, and ``doubtful``
re-asks them); a pairwise request is answered consistently (the longer draft wins). Its
cache honours ``cache_control`` with a 128-token minimum, so the criteria block
caches as it would on the real API.

Printed per control, each against one judge with ``samples=1`` measured in the same
run: requests per draft, input tokens per draft split into uncached / cache writes /
cache reads, and the input cost in "base input token" units (writes at 1.25x, reads
at 0.1x: the 5-minute cache's prices) as a ratio. The pairwise row counts a pair's
two requests over its two drafts; the loop rows are per loop (five loops of three
rounds that never pass, their two best drafts always within the margin), against
``select="score"``. The emulator keeps one prompt cache for every model, where the
API keeps one per model: a jury of k models writes k prefixes there, not one. The
batch row sends the jury's requests through the emulator's Message Batches desk (one
client, one batch) and counts its input cost at the batch discount (0.5x).
Nothing here asserts on anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.support.emulator

from tests.support.emulator import Emulator  # noqa: E402

from gradeloop import AnthropicJudge, Criterion, Rubric, grade, run_loop  # noqa: E402
from gradeloop.judging import Jury, compare_many  # noqa: E402
from gradeloop.migration import read_drafts  # noqa: E402
from gradeloop.testing import text_reply, verdict_reply  # noqa: E402

EXAMPLE = ROOT / "examples" / "payments-guide"
CLARITY = Criterion(
    key="clarity", description="A new reader can follow every step.", scale="score", threshold=7
)


def _h(*parts: str, seed: int) -> int:
    return int(hashlib.sha256("\x1f".join([str(seed), *parts]).encode()).hexdigest()[:8], 16)


def stand_in(seed: int) -> Callable[[dict[str, Any]], Any]:
    """The emulator's answers: a verdict, a pairwise choice, or a draft."""

    drafted = {"n": 0}

    def respond(body: dict[str, Any]) -> Any:
        config = body.get("output_config")
        if config is None:  # a loop's draft: a new text each time, never passing below
            drafted["n"] += 1
            return text_reply(f"# Guide (LOOP draft {drafted['n']})\n\nIt cites 4.2.\n")
        schema = config["format"]["schema"]
        defs = schema.get("$defs", {})
        text = body["messages"][0]["content"]
        if "Preferred" in defs:
            first = text.split("<first_draft>\n", 1)[1].split("\n</first_draft>", 1)[0]
            second = text.split("<second_draft>\n", 1)[1].split("\n</second_draft>", 1)[0]
            pick = "first" if len(first) > len(second) else "second"
            keys = list(defs["Preferred"]["properties"])
            return verdict_reply({"reasoning": "compared", "preferred": dict.fromkeys(keys, pick)})
        draft = text.split("<draft>\n", 1)[1].rsplit("\n</draft>", 1)[0]
        met_keys = list(defs.get("CriteriaMet", {}).get("properties", {}))
        scored = list(defs.get("Scores", {}).get("properties", {}))
        met = {k: _h(draft, k, seed=seed) % 10 < 9 and "LOOP" not in draft for k in met_keys}
        scores = {k: 8 + _h(draft, k, seed=seed) % 3 for k in scored}
        data: dict[str, Any] = {"reasoning": " ".join(f"{k}: read." for k in [*met, *scores])}
        if scores:
            data["scores"] = scores
        if met:
            data["criteria_met"] = met
        data["passed"] = all(met.values()) and all(s >= 7 for s in scores.values())
        data["issues"] = [f"{k}: fix it" for k, v in met.items() if not v]
        return verdict_reply(data)

    return respond


def _totals(calls: list[Any]) -> dict[str, float]:
    sent = [c for c in calls if not c.cached]
    return {
        "requests": len(sent),
        "uncached": sum(c.usage.input_tokens for c in sent),
        "writes": sum(c.usage.cache_creation_input_tokens for c in sent),
        "reads": sum(c.usage.cache_read_input_tokens for c in sent),
        # base input token units, a batch's calls at its discount
        "cost": sum(
            (0.5 if c.batch else 1.0)
            * (
                c.usage.input_tokens
                + 1.25 * c.usage.cache_creation_input_tokens
                + 0.1 * c.usage.cache_read_input_tokens
            )
            for c in sent
        ),
    }


def measure(
    label: str,
    unit: str,
    run: Callable[[Emulator], tuple[list[Any], int]],
    seed: int,
) -> dict[str, Any]:
    emulator = Emulator(cache_min_tokens=128)
    try:
        emulator.responder = stand_in(seed)
        calls, units = run(emulator)
    finally:
        emulator.close()
    return {"label": label, "unit": unit, "units": units, **_totals(calls)}


def judge(emulator: Emulator, model: str = "claude-bench", **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(client=emulator.client(max_retries=0), model=model, **kw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=10)
    parser.add_argument("--k", type=int, default=3, help="samples, and jury members")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rubric = Rubric([*Rubric.load(EXAMPLE / "rubric.toml"), CLARITY])
    items = read_drafts(EXAMPLE / "drafts.jsonl", default_task="Write the guide.")[: args.drafts]
    k = args.k

    def grading(**kw: Any) -> Callable[[Emulator], tuple[list[Any], int]]:
        def run(emulator: Emulator) -> tuple[list[Any], int]:
            j = judge(emulator, **kw)
            for item in items:
                grade(item.draft, rubric, task=item.task, judge=j)
            return j.calls, len(items)

        return run

    def jury(on: str) -> Callable[[Emulator], tuple[list[Any], int]]:
        def run(emulator: Emulator) -> tuple[list[Any], int]:
            members = [judge(emulator, model=f"judge-{i}") for i in range(k)]
            j = Jury(members, on=on)  # type: ignore[arg-type]
            for item in items:
                grade(item.draft, rubric, task=item.task, judge=j)
            return j.calls, len(items)

        return run

    def jury_batch(emulator: Emulator) -> tuple[list[Any], int]:
        import tempfile

        from gradeloop import HistoryStore
        from gradeloop.bulk import batches

        client = emulator.client(max_retries=0)  # members on one client: one batch
        members = [AnthropicJudge(client=client, model=f"judge-{i}") for i in range(k)]
        j = Jury(members)
        with tempfile.TemporaryDirectory() as tmp, HistoryStore(Path(tmp) / "h.db") as store:
            job = batches.submit(items, rubric, judge=j, store=store)
            batches.collect(job, judge=j, store=store, record=False)
        return j.calls, len(items)

    def pairwise(emulator: Emulator) -> tuple[list[Any], int]:
        j = judge(emulator)
        pairs = [(a.draft, b.draft) for a, b in zip(items[::2], items[1::2], strict=False)]
        compare_many(pairs, rubric, judge=j, concurrency=4)
        return j.calls, 2 * len(pairs)  # per draft compared

    def loops(select: str) -> Callable[[Emulator], tuple[list[Any], int]]:
        def run(emulator: Emulator) -> tuple[list[Any], int]:
            from gradeloop import AnthropicGenerator

            gen = AnthropicGenerator(client=emulator.client(max_retries=0), model="gen-bench")
            j = judge(emulator)
            n = 5
            for i in range(n):
                run_loop(f"Write the guide, take {i}.", rubric, generator=gen, judge=j,
                         max_rounds=3, stagnation_rounds=0, select=select,  # type: ignore[arg-type]
                         select_margin=10)  # fmt: skip
            return j.calls, n

        return run

    controls = [
        ("one judge (baseline)", "draft", grading()),
        (f"samples={k}, rubric order", "draft", grading(samples=k, shuffle=False)),
        (f"samples={k}, shuffled orders", "draft", grading(samples=k)),
        (f"samples={k}, doubtful", "draft", grading(samples=k, resample="doubtful")),
        (f"jury of {k}, on=all", "draft", jury("all")),
        (f"jury of {k}, on=doubtful", "draft", jury("doubtful")),
        (f"jury of {k}, Message Batches", "draft", jury_batch),
        ("compare_drafts (both orders)", "draft", pairwise),
        ("loop, select=score", "loop", loops("score")),
        ("loop, select=pairwise", "loop", loops("pairwise")),
    ]
    rows = [measure(label, unit, run, args.seed) for label, unit, run in controls]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    # each row against the first row of its unit: one judge per draft, select=score per loop
    per = {}
    for r in rows:
        per.setdefault(r["unit"], r["cost"] / r["units"])
    print(
        f"payments-guide: {len(items)} drafts, 4 judge keys (1 scored), k={k}, seed={args.seed}; "
        "judge requests only; input cost against the first row of the same unit"
    )
    print(
        f"{'control':<32} {'requests':>10} {'uncached':>9} {'writes':>8} {'reads':>8} "
        f"{'input cost':>11}"
    )
    for r in rows:
        n = r["units"]
        ratio = (r["cost"] / n) / per[r["unit"]]
        print(
            f"{r['label']:<32} {r['requests'] / n:>6.2f}/{r['unit']:<4}"
            f"{r['uncached'] / n:>8.0f} {r['writes'] / n:>8.0f} {r['reads'] / n:>8.0f} "
            f"{ratio:>10.2f}x"
        )


if __name__ == "__main__":
    main()
