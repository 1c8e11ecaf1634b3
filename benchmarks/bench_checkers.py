"""Speed of the built-in ``code_runs`` and ``sentence_len`` checkers, and of ``grade()``.

Run: ``python benchmarks/bench_checkers.py [--repeat N] [--seconds S] [--per-call N]``

On one realistic ~5 KB Markdown draft with three Python blocks (below), prints:

* drafts per second for ``code_runs`` and for ``sentence_len`` (looked up through
  the registry, so whatever is registered under that name is what gets timed);
* ``code_runs`` time over bare ``ast.parse`` of the same three blocks, both timed
  in this run (target: at most 1.5);
* ``grade()`` on a code-only rubric holding both checkers over calling the two
  checkers directly (target: at most 1.2).

Each figure is the best of ``--repeat`` timed rounds; a round calls the subject in
a loop for about ``--seconds`` of CPU time. ``--per-call N`` (3,000 unless told) adds
the first ratio measured call by call (the two subjects alternating, the fastest quarter of each
kept), which moves less with the machine's load than whole rounds do. Times are CPU
seconds of this process (``time.process_time``), not wall time: on a machine shared
with other work the wall clock mostly measures the neighbours. Nothing here asserts
on time: the script prints.

The Markdown scanner caches the scans of the last few drafts (the checkers of one
rubric read the same draft), so calling a checker on one draft in a loop would time
the cache, not the checker. Every timed call here clears that cache first
(:func:`uncached`), in the checker subjects and in ``grade()`` alike; the bare
``ast.parse`` baseline has nothing to clear and pays for the clearing too, so the
ratios stay fair. A checkout from before the scanner (no ``scan`` to clear) runs
the same script unchanged, which is how the "before" figures in the README are
measured.
"""

from __future__ import annotations

import argparse
import ast
import platform
import time
from collections.abc import Callable
from typing import Any

from gradeloop import Rubric, get_checker, grade
from gradeloop.errors import GradeloopError
from gradeloop_checkers import markdown

CODE_RUNS_TARGET = 1.5
GRADE_TARGET = 1.2

DRAFT = '''\
# Calling a flaky HTTP API from a script, with nothing but the standard library

Most internal services fail now and then: a deploy restarts a pod, a load balancer
drops a connection, a rate limiter answers 429. A script that gives up on the first
error turns each of those blips into a page for whoever runs it. This guide builds a
small client that retries the failures worth retrying, backs off between attempts,
and reports clearly when it finally gives up. Everything here runs on Python 3.9.

## 1. One request, with a timeout

`urllib.request` is enough for JSON APIs. Always pass a timeout: the default is to
wait forever, and a script that hangs is worse than one that fails.

```python
import json
import urllib.error
import urllib.request
from typing import Any, Dict, Optional


def get_json(url: str, token: Optional[str] = None, timeout: float = 10.0) -> Dict[str, Any]:
    """Fetch ``url`` and decode its JSON body."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        charset = response.headers.get_content_charset() or "utf-8"
        return json.loads(response.read().decode(charset))
```

The function raises `urllib.error.HTTPError` for 4xx and 5xx answers and
`urllib.error.URLError` when the connection itself fails. Those two cover almost
every failure you will see; a timeout arrives as `socket.timeout`, which is an
`OSError`.

## 2. Deciding what to retry

Not every error deserves a second try. A 404 will still be a 404 in a second, and
retrying a 401 only locks the account sooner. Retry connection errors, timeouts,
429 and the 5xx family; give up at once on everything else.

```python
import random
import socket
import time
import urllib.error

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def should_retry(error: Exception) -> bool:
    if isinstance(error, urllib.error.HTTPError):
        return error.code in RETRY_STATUS
    return isinstance(error, (urllib.error.URLError, socket.timeout, ConnectionError))


def backoff(attempt: int, base: float = 0.5, cap: float = 8.0) -> float:
    """Full jitter: a random wait up to an exponentially growing ceiling."""
    ceiling = min(cap, base * (2 ** attempt))
    return random.uniform(0, ceiling)


def retry_after(error: Exception) -> float:
    if isinstance(error, urllib.error.HTTPError):
        value = error.headers.get("Retry-After", "")
        if value.isdigit():
            return float(value)
    return 0.0
```

The jitter matters more than it looks. When a service comes back after an outage,
every client that backed off by the same fixed schedule returns at the same moment
and knocks it over again; random waits spread them out.

## 3. Putting it together

The loop below makes at most `attempts` calls, sleeps between them, honours a
server's `Retry-After` header when it sends one, and logs each failure so the
person reading the output knows what happened.

```python
import logging
import time
from typing import Any, Callable, Dict, TypeVar

T = TypeVar("T")
log = logging.getLogger("client")


def with_retries(call: Callable[[], T], attempts: int = 5) -> T:
    last_error: Exception = RuntimeError("no attempt was made")
    for attempt in range(attempts):
        try:
            return call()
        except Exception as error:
            if not should_retry(error) or attempt == attempts - 1:
                raise
            wait = max(backoff(attempt), retry_after(error))
            log.warning("attempt %d failed (%s); retrying in %.1f s", attempt + 1, error, wait)
            last_error = error
            time.sleep(wait)
    raise last_error


def fetch_report(url: str) -> Dict[str, Any]:
    return with_retries(lambda: get_json(url, timeout=5.0))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    print(fetch_report("https://status.example.com/api/report.json"))
```

## Testing it without the network

Retry logic is easy to get subtly wrong, so test it against failures you control
rather than waiting for the real service to misbehave. Pass `with_retries` a small
function that raises a prepared `HTTPError` twice and then returns a value, replace
`time.sleep` with a stub that records how long it was asked to wait, and assert
on both the result and the recorded waits. The same stub makes the test run in
milliseconds instead of the half minute the real backoff would take.

## What to watch for

Keep the total time bounded: five attempts with a cap of eight seconds can still
take half a minute. If the caller has its own deadline, pass it down and stop early.
And log the final failure with the URL and the last status code, because the person
who reads that line at three in the morning will want both.
'''

RUBRIC = {
    "criteria": [
        {
            "key": "code_runs",
            "description": "Every sample is valid Python 3.9, stdlib only.",
            "checker": "code_runs",
            "options": {"python": "3.9"},
        },
        {
            "key": "sentence_len",
            "description": "No sentence longer than 40 words.",
            "checker": "sentence_len",
            "options": {"max_words": 40},
        },
    ]
}


def _clear_scans() -> None:
    """Forget the Markdown scanner's cached scans (nothing to do before the scanner)."""
    scan = getattr(markdown, "scan", None)
    clear = getattr(scan, "cache_clear", None)
    if clear is not None:
        clear()


def _fences(text: str) -> Any:
    """The draft's fenced blocks, from the scanner (or its predecessor before it landed)."""
    finder = getattr(markdown, "fences", None)
    if finder is None:  # a checkout from before the one scanner
        from gradeloop_checkers.markdown import _fences as old  # type: ignore[attr-defined]

        finder = old.fences
    return finder(text)


def uncached(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with the scan cache cleared before each call, so every call scans anew."""

    def call() -> Any:
        _clear_scans()
        return fn()

    return call


def measure(subjects: dict[str, Callable[[], Any]], repeat: int, budget: float) -> dict[str, float]:
    """Best-of-``repeat`` CPU seconds per call of each subject (each made :func:`uncached`).

    Rounds of the subjects alternate (a, b, a, b...) so that a burst of load on
    the machine hits both sides of a ratio alike; one round lasts about
    ``budget`` CPU seconds.
    """
    subjects = {name: uncached(fn) for name, fn in subjects.items()}
    loops = {}
    for name, fn in subjects.items():
        start = time.process_time()
        fn()
        loops[name] = max(1, int(budget / max(time.process_time() - start, 1e-6)))
    best = dict.fromkeys(subjects, float("inf"))
    for _ in range(repeat):
        for name, fn in subjects.items():
            start = time.process_time()
            for _ in range(loops[name]):
                fn()
            best[name] = min(best[name], (time.process_time() - start) / loops[name])
    return best


def measure_per_call(subjects: dict[str, Callable[[], Any]], calls: int) -> dict[str, float]:
    """CPU seconds per call of each subject, the subjects alternating call by call.

    On a busy machine a burst of load lasts longer than one call, so alternating
    every call puts both sides of a ratio under the same load; each figure is the
    mean of the fastest quarter of its calls (the calls least disturbed).
    """
    subjects = {name: uncached(fn) for name, fn in subjects.items()}
    for fn in subjects.values():
        fn()
    clock = time.process_time
    times: dict[str, list[float]] = {name: [] for name in subjects}
    for _ in range(calls):
        for name, fn in subjects.items():
            start = clock()
            fn()
            times[name].append(clock() - start)
    quarter = max(1, calls // 4)
    return {name: sum(sorted(t)[:quarter]) / quarter for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds (best is kept)")
    parser.add_argument("--seconds", type=float, default=0.3, help="length of one round")
    parser.add_argument(
        "--per-call",
        type=int,
        default=3000,
        metavar="N",
        help="also time code_runs against ast.parse alternating call by call, N calls "
        "each (0: skip); the steadier of the two ratios",
    )
    args = parser.parse_args()
    repeat, budget = max(1, args.repeat), max(0.01, args.seconds)

    code_runs = get_checker("code_runs")
    sentence_len = get_checker("sentence_len")
    blocks = [f.source for f in _fences(DRAFT) if f.language == "python"]
    result = code_runs(DRAFT, python="3.9")
    print(
        f"Python {platform.python_version()}; draft: {len(DRAFT.encode())} bytes, "
        f"{len(blocks)} Python blocks, {sum(b.count(chr(10)) for b in blocks)} code lines"
    )
    print(f"code_runs on the draft: passed={result.passed} issues={result.issues}")

    def parse_blocks() -> None:
        for source in blocks:
            ast.parse(source)

    times = measure(
        {
            "bare ast.parse of the 3 blocks": parse_blocks,
            "code_runs": lambda: code_runs(DRAFT, python="3.9"),
            "sentence_len": lambda: sentence_len(DRAFT, max_words=40),
        },
        repeat,
        budget,
    )
    print(f"\n{'subject':<38}{'ms/draft':>10}{'drafts/s':>11}")
    for name, t in times.items():
        print(f"{name:<38}{t * 1e3:>10.3f}{1 / t:>11,.0f}")
    ratio = times["code_runs"] / times["bare ast.parse of the 3 blocks"]
    verdict = "meets" if ratio <= CODE_RUNS_TARGET else "MISSES"
    print(f"\ncode_runs / bare ast.parse: {ratio:.2f} (target <= {CODE_RUNS_TARGET}; {verdict})")
    if args.per_call > 0:
        per_call = measure_per_call(
            {"parse": parse_blocks, "code_runs": lambda: code_runs(DRAFT, python="3.9")},
            args.per_call,
        )
        ratio = per_call["code_runs"] / per_call["parse"]
        verdict = "meets" if ratio <= CODE_RUNS_TARGET else "MISSES"
        print(
            f"alternating call by call ({args.per_call} calls each, fastest quarter): "
            f"{per_call['parse'] * 1e3:.3f} ms vs {per_call['code_runs'] * 1e3:.3f} ms, "
            f"code_runs / bare ast.parse: {ratio:.2f} ({verdict})"
        )

    try:
        rubric = Rubric.from_dict(RUBRIC)
    except GradeloopError as exc:
        print(f"grade() not measured: the rubric does not load ({exc})")
        return

    def direct() -> None:
        code_runs(DRAFT, python="3.9")
        sentence_len(DRAFT, max_words=40)

    times = measure({"direct": direct, "grade": lambda: grade(DRAFT, rubric)}, repeat, budget)
    ratio = times["grade"] / times["direct"]
    verdict = "meets" if ratio <= GRADE_TARGET else "MISSES"
    print(
        f"grade(), code-only rubric: {times['grade'] * 1e3:.3f} ms; the two checkers called "
        f"directly: {times['direct'] * 1e3:.3f} ms"
    )
    print(f"grade() / direct calls: {ratio:.2f} (target <= {GRADE_TARGET}; {verdict})")


if __name__ == "__main__":
    main()
