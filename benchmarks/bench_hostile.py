"""Growth curves of every path that reads model text: linear, or it shows here.

Run: ``python benchmarks/bench_hostile.py [--only NAME ...] [--budget SECONDS] [--repeat N]
[--system-allocator] [--list]``

Each path is one function below, registered with ``@path``. It times its work on a
pathological input and on ordinary text at sizes n, 4n and 16n, and prints the
time at each size and the growth ratio from one size to the next. A linear path
shows ratios near 4; the target is every ratio <= 5. The 1 MB figures of the
checkers' pathological inputs have their own limit (2 s), printed in the summary.

A size is skipped (and shown as ``skip``) when the previous size's time times 20
would exceed ``--budget`` (default 60 s), so the quadratic code on an old checkout
still finishes; a skipped size means the growth was already far past linear. Times
are CPU seconds of this process (best of several runs for short ones). The checker
paths time their sizes in ``--repeat`` interleaved rounds (default 3) and keep each
size's minimum, which tames the noise of a shared machine: one call at 1 MB is long
enough for a burst of other work to land in it and fake a super-linear ratio. And
glibc is asked to keep freed memory for reuse (:func:`keep_freed_memory`), so that
the page faults of fresh megabyte buffers do not fake one either.

Sections: ``history and loop`` (scrubber, similarity, token_budget, draft reuse)
and ``checkers`` (sentence_len, code_runs). To add a path, write a function that
calls :func:`curve` once per input kind, and decorate it with ``@path(section)``.
Nothing here asserts on time; the regression guards are tests with generous bounds.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradeloop import Criterion, Rubric, Verdict, run_loop
from gradeloop.history._scrub import scrub_text
from gradeloop.loop import _similarity
from gradeloop.loop._similarity import similar
from gradeloop.models import CallRecord, Usage, record_call

TARGET = 5.0  # the largest acceptable time ratio for 4x the input
GROWTH = 4  # each size is this many times the one before
Make = Callable[[int], Any]  # size -> input
Run = Callable[[Any], object]  # input -> (ignored)


# -- measuring ---------------------------------------------------------------------------


@dataclass
class Curve:
    """One input kind of one path: the seconds at each size (None when skipped)."""

    path: str
    kind: str
    sizes: list[int]
    seconds: list[float | None] = field(default_factory=list)
    note: str = ""
    limit: float | None = None  # the most seconds the largest size may take

    @property
    def within_limit(self) -> bool:
        last = self.seconds[-1] if self.seconds else None
        return self.limit is None or (last is not None and last <= self.limit)

    @property
    def ratios(self) -> list[float | None]:
        out: list[float | None] = []
        for a, b in zip(self.seconds, self.seconds[1:], strict=False):
            out.append(b / a if a and b else None)
        return out

    @property
    def worst(self) -> float | None:
        known = [r for r in self.ratios if r is not None]
        return max(known) if known else None

    @property
    def complete(self) -> bool:
        return None not in self.seconds


def seconds(run: Run, value: Any) -> float:
    """Best-of-k CPU time of ``run(value)``: k >= 3 unless one call takes over 1 s.

    CPU time of this process, not wall time: on a machine shared with other work the
    wall clock mostly measures the neighbours. A call shorter than a few milliseconds
    is timed in batches that long (the batch's time over its calls): one call of ten
    microseconds is at the mercy of a single cache miss or clock tick, and its ratios
    swing between x2 and x8 from run to run. What the process holds before the timing
    starts is collected and then frozen (``gc.freeze``) until it ends: the collector's
    full passes inside a timed span then walk only what the code under test made,
    not the heap the earlier paths have grown (a pass over that, landing in one size's
    span and not another's, moved ratios from x4.2 to x5.2).
    """
    gc.collect()
    gc.freeze()
    try:
        return _best_time(run, value)
    finally:
        gc.unfreeze()


def _best_time(run: Run, value: Any) -> float:
    start = time.process_time()
    run(value)
    once = time.process_time() - start
    calls = 1 if once >= BATCH_SECONDS else min(100_000, int(BATCH_SECONDS / max(once, 1e-7)) + 1)
    best, spent, runs = once if calls == 1 else float("inf"), once, 1
    while spent < 0.3 or runs < 3:
        start = time.process_time()
        for _ in range(calls):
            run(value)
        took = time.process_time() - start
        best, spent, runs = min(best, took / calls), spent + took, runs + 1
        if took > 1.0:
            break
    return best


BATCH_SECONDS = 0.005  # the shortest span timed as one measurement


@dataclass
class Bench:
    budget: float
    repeat: int = 1  # rounds for the paths that ask for them (the checkers)
    curves: list[Curve] = field(default_factory=list)

    def curve(
        self,
        path: str,
        kind: str,
        make: Make,
        run: Run,
        n: int,
        *,
        unit: str = "chars",
        repeat: int = 1,
        limit: float | None = None,
        count: int = 3,
    ) -> Curve:
        """Time ``run(make(size))`` at n, 4n and 16n (``count`` sizes) and print the row.

        With ``repeat`` > 1 the three sizes are timed in that many interleaved
        rounds (n, 4n, 16n, n, 4n, 16n...) and each keeps its minimum, so a burst of
        load from other work inflates no single ratio. ``limit``: the most seconds
        the largest size may take (the summary FAILs a curve past it).
        """
        c = Curve(path, kind, [n * GROWTH**i for i in range(count)], limit=limit)
        inputs: dict[int, Any] = {}
        best: list[float | None] = [None] * len(c.sizes)
        for _ in range(max(1, repeat)):
            for i, size in enumerate(c.sizes):
                last = best[i - 1] if i else 0.0
                if last is None or last * 20 > self.budget:
                    best[i] = None
                    continue
                if size not in inputs:
                    inputs[size] = make(size)
                took = seconds(run, inputs[size])
                previous = best[i]
                best[i] = took if previous is None else min(previous, took)
        c.seconds = best
        self.curves.append(c)
        _print_row(c, unit)
        return c


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "skip"
    return f"{s * 1000:.2f} ms" if s < 1 else f"{s:.2f} s"


def _print_row(c: Curve, unit: str) -> None:
    cells = []
    for i, (size, s) in enumerate(zip(c.sizes, c.seconds, strict=True)):
        ratio = "" if i == 0 else f" (x{c.ratios[i - 1]:.1f})" if c.ratios[i - 1] else ""
        cells.append(f"{_fmt_size(size, unit)} {_fmt_time(s)}{ratio}")
    print(f"  {c.kind:<28}" + "   ".join(f"{cell:<28}" for cell in cells).rstrip())


def _fmt_size(size: int, unit: str) -> str:
    if unit != "chars":
        return f"{size:,} {unit}"
    if size >= 1_000_000:
        return f"{size / 1_000_000:g} MB"
    return f"{size / 1000:g} KB"


def keep_freed_memory() -> bool:
    """Ask glibc to keep the memory a call frees for the next call; False if it cannot.

    By default glibc hands large freed blocks back to the kernel, so every call
    that builds megabyte-sized buffers takes fresh page faults while the smaller
    sizes reuse warm memory: measured on ``'>' * n``, that alone turns the 250 KB
    -> 1 MB ratio from x4.2 into x10 (1.2 ms against 2.8 ms). Page faults are the
    allocator's policy, not the growth of the code under test, so they are kept
    out of the curves (``--system-allocator`` leaves the default in place).
    """
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        return False
    if mallopt is None:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's malloc.h
    return bool(mallopt(m_trim_threshold, 1 << 30)) and bool(mallopt(m_mmap_threshold, 1 << 25))


# -- inputs ------------------------------------------------------------------------------

_RNG = random.Random(12)
_VOCAB = [
    "".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_RNG.randint(2, 10)))
    for _ in range(3000)
]
_EXTRAS = [
    "state-of-the-art",
    "e.g.",
    "https://example.com/docs/a-b.html",
    "v1.2.3",
    "`x.y()`",
    "(see 4.2)",
    "foo@example.com",
]


def prose(size: int, seed: int = 0) -> str:
    """About ``size`` characters of Markdown-ish prose: sentences, links, a code block."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        words = [rng.choice(_VOCAB) for _ in range(rng.randint(6, 22))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), rng.choice(_EXTRAS))
        sentence = " ".join(words).capitalize() + rng.choice(".!?.")
        if rng.random() < 0.05:
            sentence += "\n\n```python\nx = compute(1, 2)\nprint(x)\n```\n\n"
        elif rng.random() < 0.15:
            sentence += "\n\n"
        parts.append(sentence)
        total += len(sentence) + 1
    return " ".join(parts)[:size]


def edited(text: str, fraction: float = 0.005, seed: int = 1) -> str:
    """``text`` with about ``fraction`` of its words replaced (a near-identical revision)."""
    rng = random.Random(seed)
    words = text.split(" ")
    for _ in range(max(1, int(len(words) * fraction))):
        words[rng.randrange(len(words))] = "changed"
    return " ".join(words)


# -- the paths ---------------------------------------------------------------------------

PATHS: dict[str, tuple[str, Callable[[Bench], None]]] = {}


def path(section: str) -> Callable[[Callable[[Bench], None]], Callable[[Bench], None]]:
    """Register a path function under its name (the function's name) and section."""

    def register(fn: Callable[[Bench], None]) -> Callable[[Bench], None]:
        PATHS[fn.__name__] = (section, fn)
        return fn

    return register


# history and loop (issue 12, items 4-7)


@path("history and loop")
def scrubber(b: Bench) -> None:
    """scrub_text runs on every string stored in the history database."""
    inputs: list[tuple[str, Make]] = [
        ("'ab-' * n/3", lambda n: "ab-" * (n // 3)),
        ("'a.' * n/2", lambda n: "a." * (n // 2)),
        ("'a://' * n/4", lambda n: "a://" * (n // 4)),
        ("'a://b@' * n/6", lambda n: "a://b@" * (n // 6)),
        ("ordinary prose", prose),
    ]
    for kind, make in inputs:
        b.curve("scrubber", kind, make, scrub_text, 100_000, repeat=b.repeat)


@path("history and loop")
def similarity(b: Bench) -> None:
    """The unchanged-revision check: a draft against its revision, once a round."""

    def pair_bad(n: int) -> tuple[str, str]:
        text = "alpha beta gamma " * (n // 17)
        return text, text + " delta"

    def pair_ok(n: int) -> tuple[str, str]:
        text = prose(n)
        return text, edited(text)

    def run(pair: tuple[str, str]) -> bool:
        forget = getattr(_similarity, "_profile", None)
        if forget is not None:  # both drafts profiled afresh: the worst case of a round
            forget.cache_clear()
        return similar(*pair)

    # Up to EXACT_UP_TO bigrams (~280-330 KB here) a draft is compared exactly, past it
    # on a sample; the switch costs a constant ~1.2-1.3x a bigram (each hash is tested
    # against the sample), so each regime is timed on its own side of it.
    k = b.repeat
    for kind, pair in (("repeated words", pair_bad), ("prose 0.5% edited", pair_ok)):
        b.curve("similarity", f"{kind}, exact", pair, run, 64_000, repeat=k, count=2)
    for kind, pair in (("repeated words", pair_bad), ("prose 0.5% edited", pair_ok)):
        b.curve("similarity", f"{kind}, sampled", pair, run, 512_000, repeat=k)
    _print_switch(pair_bad, run)


def _print_switch(make: Make, run: Run) -> None:
    """The cost per MB just below and just above the exact/sampled switch."""
    below, above = make(256_000), make(512_000)
    per = [seconds(run, x) / len(x[0]) * 1e9 for x in (below, above, below, above)]
    print(
        f"  {'(the switch)':<28}ms per MB: {min(per[0], per[2]):.1f} exact at 256 KB, "
        f"{min(per[1], per[3]):.1f} sampled at 512 KB"
    )


_RUBRIC = Rubric.from_dict({"criteria": [{"key": "tone", "description": "Warm."}]})
_FAIL = Verdict(reasoning="r", criteria_met={"tone": False}, passed=False, issues=["warmer"])


class _Judge:
    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Verdict:
        record_call(CallRecord("evaluate", "m", "end_turn", Usage(500, 50), 1.0))
        return _FAIL


class _Gen:
    """Distinct drafts; ``prefix`` makes every draft share a long common start."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix, self.n = prefix, 0

    def generate(self, task: str, draft: str = "", issues: list[str] | None = None) -> str:
        self.n += 1
        record_call(CallRecord("generate", "m", "end_turn", Usage(300, 400), 1.0))
        return f"{self.prefix}draft {self.n}"


def _loop(rounds: int, *, prefix: str = "", **kw: Any) -> None:
    run_loop(
        "t",
        _RUBRIC,
        generator=_Gen(prefix),
        judge=_Judge(),
        max_rounds=rounds,
        stagnation_rounds=0,
        similarity=None,
        **kw,
    )


@path("history and loop")
def token_budget(b: Bench) -> None:
    """A loop of n rounds with a token budget that is never reached, and without one."""
    b.curve(
        "token_budget",
        "token_budget=10**12",
        lambda n: n,
        lambda n: _loop(n, token_budget=10**12, reuse_identical=False),
        250,
        unit="rounds",
        repeat=b.repeat,
    )
    b.curve(
        "token_budget",
        "no budget",
        lambda n: n,
        lambda n: _loop(n, reuse_identical=False),
        250,
        unit="rounds",
        repeat=b.repeat,
    )


@path("history and loop")
def draft_reuse(b: Bench) -> None:
    """Identical-draft reuse: each new draft looked up among the judged ones."""
    shared = "x" * 4000  # distinct drafts that only differ after 4 KB
    b.curve(
        "draft_reuse",
        "4 KB common prefix",
        lambda n: n,
        lambda n: _loop(n, prefix=shared, reuse_identical=True),
        250,
        unit="rounds",
        repeat=b.repeat,
    )
    b.curve(
        "draft_reuse",
        "short distinct drafts",
        lambda n: n,
        lambda n: _loop(n, reuse_identical=True),
        250,
        unit="rounds",
        repeat=b.repeat,
    )


# checkers (issue 12, items 1-3): sentence_len and code_runs, through the one
# Markdown scanner. 16n is 1 MB: the pathological inputs must take <= 2 s there.
# These run --repeat interleaved rounds and keep each size's minimum: one checker
# call at 1 MB lasts long enough for a burst of load from other work to land in a
# single measurement and fake a super-linear ratio.

PATHOLOGICAL_LIMIT = 2.0  # seconds for a 1 MB pathological draft (issue 12)


def _uncached(fn: Callable[[str], object]) -> Run:
    """``fn`` with the Markdown scan cache cleared before each call.

    The scanner keeps the scans of the last drafts; timing the same input again
    would time the cache. A checkout from before the scanner has nothing to clear
    and runs these paths unchanged (the "before" figures of benchmarks/README.md).
    """
    from gradeloop_checkers import markdown

    clear = getattr(getattr(markdown, "scan", None), "cache_clear", None)

    def run(text: str) -> object:
        if clear is not None:
            clear()
        return fn(text)

    return run


def _fence_finder() -> Callable[[str], object]:
    from gradeloop_checkers import markdown

    finder = getattr(markdown, "fences", None)
    if finder is None:  # before the one scanner
        from gradeloop_checkers.markdown import _fences  # type: ignore[attr-defined]

        finder = _fences.fences
    return finder  # type: ignore[no-any-return]


def _backtick_runs(n: int) -> str:
    """Runs of 1, 2, 3... backticks between letters: the old code-span regex backtracked.

    Every run has its own length, so none closes another: the text stays prose at
    every size. (Cutting the text at ``n`` inside a run used to leave a short last
    run that closed an earlier one: a code span over 99 %, 63 % and 49 % of the text
    at the three sizes, so they measured different work.)
    """
    out, k, size = [], 1, 0
    while size + k + 1 <= n:
        out.append("`" * k + "a")
        size += k + 1
        k += 1
    return "".join(out) + "a" * (n - size)


def _nested_items(n: int) -> str:
    """One line of ``- `` markers (nested list items), then blank lines."""
    return "- " * (n // 4) + "x\n" + "\n" * (n // 2)


@path("checkers")
def sentence_len_paths(b: Bench) -> None:
    """sentence_len: backtick runs, a line of '>', nested list markers, ordinary prose."""
    from gradeloop_checkers.sentence_len import sentence_len

    run = _uncached(sentence_len)
    k, lim = b.repeat, PATHOLOGICAL_LIMIT
    b.curve("sentence_len", "backtick runs", _backtick_runs, run, 62_500, repeat=k, limit=lim)
    b.curve("sentence_len", "'>' * n", lambda n: ">" * n, run, 62_500, repeat=k, limit=lim)
    b.curve(
        "sentence_len", "'- ' nesting + blanks", _nested_items, run, 62_500, repeat=k, limit=lim
    )
    b.curve("sentence_len", "ordinary prose", prose, run, 62_500, repeat=k)


@path("checkers")
def code_runs_fences(b: Bench) -> None:
    """code_runs' fence finding: many small blocks, bare fence lines, quoted fences."""
    run = _uncached(_fence_finder())
    k, lim = b.repeat, PATHOLOGICAL_LIMIT
    b.curve(
        "fences",
        "many python blocks",
        lambda n: "```python\nx = 1\n```\n" * (n // 20),
        run,
        62_500,
        repeat=k,
        limit=lim,
    )
    b.curve(
        "fences", "bare fence lines", lambda n: "```\n" * (n // 4), run, 62_500, repeat=k, limit=lim
    )
    b.curve(
        "fences", "'> ```' lines", lambda n: "> ```\n" * (n // 6), run, 62_500, repeat=k, limit=lim
    )
    b.curve("fences", "ordinary prose", prose, run, 62_500, repeat=k)


# -- the report --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="path names to run")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds a size may take")
    parser.add_argument("--list", action="store_true", help="list the paths and exit")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="interleaved rounds of the checker paths (the minimum of each size is kept)",
    )
    parser.add_argument(
        "--system-allocator",
        action="store_true",
        help="leave glibc's default of returning freed memory to the kernel",
    )
    args = parser.parse_args(argv)
    if args.list:
        for name, (group, fn) in PATHS.items():
            print(f"{group:<18} {name:<16} {(fn.__doc__ or '').strip()}")
        return 0
    unknown = sorted(set(args.only or ()) - set(PATHS))
    if unknown:
        parser.error(f"unknown path(s) {', '.join(unknown)}; --list shows them")
    bench = Bench(args.budget, repeat=max(1, args.repeat))
    kept = not args.system_allocator and keep_freed_memory()
    print(f"Growth for {GROWTH}x the input (linear ~{GROWTH}; target <= {TARGET:g})")
    print("freed memory kept for reuse (glibc mallopt)" if kept else "default allocator")
    section: str | None = None
    for name, (sec, fn) in PATHS.items():
        if args.only and name not in args.only:
            continue
        if sec != section:
            section = sec
            print(f"\n== {sec}")
        print(f"{name}")
        fn(bench)
    print(
        "\nsummary (worst ratio per input; FAIL when > target, a size was skipped, "
        "or the largest size took longer than its limit)"
    )
    failed = 0
    for c in bench.curves:
        ok = c.complete and c.worst is not None and c.worst <= TARGET and c.within_limit
        failed += not ok
        worst = f"x{c.worst:.1f}" if c.worst is not None else "-"
        limit = ""
        if c.limit is not None:
            limit = f"  {_fmt_time(c.seconds[-1])} at {_fmt_size(c.sizes[-1], 'chars')}"
            limit += f" (limit {c.limit:g} s)"
        print(f"  {'ok  ' if ok else 'FAIL'} {c.path:<14} {c.kind:<28} {worst}{limit}")
    print(f"\n{len(bench.curves) - failed}/{len(bench.curves)} inputs within the target")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
