"""The checkers over real corpora a user already has: counts, failures, MB per CPU-second.

Run: ``python benchmarks/bench_corpora.py [--only stdlib,readmes,docs] [--show N]``

Three corpora, none written for gradeloop, all on the machine already:

* **stdlib**: every ``.py`` file of the running interpreter's standard library (the
  test suite, ``idlelib``, ``turtledemo`` and ``site-packages`` left out), each
  checked whole as one Python block by ``code_runs`` at the running version. Code
  that version ships runs on it, so a failure is by design (a relative import: one
  file of a package checked alone; a private or test module; a module not in the
  library at all) or a false failure. Beside it, bare ``ast.parse`` of the same
  files: the ratio is what checking costs over parsing.
* **readmes**: the long descriptions (READMEs) of the installed packages, from their
  ``METADATA``, when Markdown. ``code_runs`` checks their ``python`` and ``pycon``
  blocks with every installed top-level module allowed (a README's reader has its
  package); ``sentence_len`` and ``no_placeholders(ignore_code = true)`` read their
  prose.
* **docs**: this project's ``README.md`` and ``docs/*.md``, the same three checkers.

Printed per corpus and checker: documents, blocks or sentences, failures (by cause
for ``code_runs``), and MB of input per CPU-second. ``--show N`` prints N failing
blocks, long sentences and placeholder lines of each corpus, to be read by a person:
a failure there is either a real problem in the document or a false failure of the
checker. docs/checkers.md states what reading them found.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import platform
import re
import sys
import sysconfig
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from gradeloop_checkers.code_runs import SESSION_LANGUAGES, code_runs
from gradeloop_checkers.markdown import fences
from gradeloop_checkers.sentence_len import sentences
from gradeloop_checkers.text import no_placeholders

ROOT = Path(__file__).resolve().parents[1]
MINOR = f"{sys.version_info.major}.{sys.version_info.minor}"
SKIP_PARTS = frozenset({"test", "tests", "idlelib", "turtledemo", "site-packages", "__pycache__"})
SKIP_NAMES = re.compile(r"^(bad|badsyntax|test_).*\.py$")
LONG = 40  # sentence_len's default max_words
BY_DESIGN = (
    ("relative import", re.compile(r"relative import")),
    ("private module", re.compile(r"a private CPython module")),
    ("test.* import", re.compile(r"imports 'test(\.|')")),
    ("not in the library", re.compile(r"which is not in the Python 3\.\d+ standard library")),
)
_CAUSES = (
    ("does not parse", re.compile(r"does not parse")),
    ("import not installed", re.compile(r"which is not in the Python 3\.\d+ standard library")),
    ("await outside async", re.compile(r"'await' outside")),
    ("new in a later Python", re.compile(r"new in Python 3\.\d+")),
    ("removed from Python", re.compile(r"removed")),
    ("malformed prompt", re.compile(r"prompt is malformed")),
    ("encoding", re.compile(r"source encoding")),
)


def cpu(fn: Callable[[], object]) -> tuple[object, float]:
    started = time.process_time()
    out = fn()
    return out, time.process_time() - started


def mb_per_s(chars: int, seconds: float) -> str:
    return f"{chars / 1e6 / seconds:.2f} MB/CPU-s" if seconds > 0 else "-"


# -- the standard library --------------------------------------------------------------


def stdlib_files() -> list[Path]:
    lib = Path(sysconfig.get_paths()["stdlib"])
    return sorted(
        p
        for p in lib.rglob("*.py")
        if not SKIP_PARTS.intersection(p.relative_to(lib).parts) and not SKIP_NAMES.match(p.name)
    )


def stdlib(show: int) -> None:
    files = stdlib_files()
    texts = [p.read_text(encoding="utf-8", errors="surrogateescape") for p in files]
    drafts = [f"```python\n{t}\n```\n" for t in texts]
    chars = sum(len(t) for t in texts)

    def check() -> list[list[str]]:
        return [
            code_runs(d, python=MINOR, max_block_chars=10**7).issues  # type: ignore[arg-type]
            for d in drafts
        ]

    def parse() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in texts:
                with contextlib.suppress(SyntaxError):
                    ast.parse(t)

    parse()
    issues, checked = cpu(check)
    _, parsed = cpu(parse)
    causes: Counter[str] = Counter()
    false: list[tuple[Path, str]] = []
    for path, found in zip(files, issues, strict=True):  # type: ignore[call-overload]
        for issue in found:
            if issue.startswith("... and"):
                continue  # the count of issues past the listed ones
            cause = next((c for c, p in BY_DESIGN if p.search(issue)), None)
            causes[cause or "FALSE FAILURE"] += 1
            if cause is None:
                false.append((path, issue))
    print(f"stdlib ({MINOR}): {len(files)} files, {chars / 1e6:.1f} MB")
    print(
        f"  code_runs: {sum(1 for i in issues if i)} files with issues "  # type: ignore[union-attr]
        f"({', '.join(f'{c}: {n}' for c, n in sorted(causes.items()))}); "
        f"{mb_per_s(chars, checked)}; bare ast.parse {mb_per_s(chars, parsed)}; "
        f"code_runs / ast.parse = {checked / parsed:.2f}"
    )
    for path, issue in false[:show]:
        print(f"    {path.name}: {issue}")


# -- README long descriptions ------------------------------------------------------------


def readmes() -> list[tuple[str, str]]:
    """``(distribution name, Markdown long description)`` of each installed package."""
    out = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        name = dist.metadata.get("Name") or "?"
        kind = (dist.metadata.get("Description-Content-Type") or "").lower()
        body = dist.metadata.get_payload() or dist.metadata.get("Description") or ""  # type: ignore[attr-defined]
        if name.lower() in seen or "markdown" not in kind or not body.strip():
            continue
        seen.add(name.lower())
        out.append((name, body))
    return sorted(out)


def installed_modules() -> tuple[str, ...]:
    names = set(metadata.packages_distributions())
    return tuple(sorted(n for n in names if n.isidentifier()))


def text_checks(label: str, docs: Iterable[tuple[str, str]], show: int) -> None:
    docs = list(docs)
    chars = sum(len(t) for _, t in docs)
    found, spent = cpu(lambda: [(n, sentences(t)) for n, t in docs])
    long = [(n, s) for n, ss in found for s in ss if s.words > LONG]  # type: ignore[union-attr]
    total = sum(len(ss) for _, ss in found)  # type: ignore[union-attr]
    print(
        f"  sentence_len: {total:,} sentences, {len(long)} over {LONG} words; "
        f"{mb_per_s(chars, spent)}"
    )
    for name, s in long[:show]:
        print(f"    {name}: {s.words} words: {s.text[:160]!r}")
    results, spent = cpu(lambda: [(n, no_placeholders(t, ignore_code=True)) for n, t in docs])
    failed = [(n, r) for n, r in results if not r.passed]  # type: ignore[union-attr]
    lines = sum(len(r.issues) for _, r in failed)
    print(
        f"  no_placeholders(ignore_code): {len(failed)} of {len(docs)} documents fail "
        f"({lines} lines listed); {mb_per_s(chars, spent)}"
    )
    for name, r in failed[:show]:
        print(f"    {name}: {r.issues[0][:160]}")


def code_checks(docs: Iterable[tuple[str, str]], allow: tuple[str, ...], show: int) -> None:
    docs = list(docs)
    blocks = 0
    for _, text in docs:
        blocks += sum(1 for f in fences(text) if f.language in ("python", "py", "python3", "py3"))
        blocks += sum(1 for f in fences(text) if f.language in SESSION_LANGUAGES)
    chars = sum(len(t) for _, t in docs)
    results, spent = cpu(
        lambda: [(n, code_runs(t, python=MINOR, allow=allow)) for n, t in docs]  # type: ignore[arg-type]
    )
    causes: Counter[str] = Counter()
    listed: list[str] = []
    for name, r in results:  # type: ignore[union-attr]
        for issue in r.issues:
            if issue.startswith("... and"):
                continue
            cause = next((c for c, p in _CAUSES if p.search(issue)), "other")
            causes[cause] += 1
            listed.append(f"{name}: {issue}")
    notebook = sum(
        len(code_runs(t, python=MINOR, allow=allow, top_level_await=True).issues)  # type: ignore[arg-type]
        for _, t in docs
    )
    print(
        f"  code_runs: {blocks} Python and pycon blocks, {len(listed)} issues "
        f"({', '.join(f'{c}: {n}' for c, n in sorted(causes.items()))}); {mb_per_s(chars, spent)}"
        f"; with top_level_await, {notebook} issues"
    )
    for line in listed[:show]:
        print(f"    {line[:220]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="stdlib,readmes,docs")
    parser.add_argument("--show", type=int, default=0, help="failures listed per corpus")
    args = parser.parse_args()
    chosen = set(args.only.split(","))
    print(f"python {platform.python_version()}, CPU time")
    if "stdlib" in chosen:
        stdlib(args.show)
    if "readmes" in chosen:
        docs = readmes()
        chars = sum(len(t) for _, t in docs)
        print(f"readmes: {len(docs)} Markdown long descriptions, {chars / 1e6:.2f} MB")
        code_checks(docs, installed_modules(), args.show)
        text_checks("readmes", docs, args.show)
    if "docs" in chosen:
        paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        docs = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in paths]
        chars = sum(len(t) for _, t in docs)
        print(f"docs: {len(docs)} files, {chars / 1e6:.2f} MB")
        code_checks(docs, ("gradeloop", "gradeloop_checkers", *installed_modules()), args.show)
        text_checks("docs", docs, args.show)


if __name__ == "__main__":
    main()
