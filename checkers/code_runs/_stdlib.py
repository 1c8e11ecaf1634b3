"""What the CPython standard library holds in each Python version from 3.8 to 3.14.

Two data files beside this module carry the facts, one entry a line with
``+3.X`` (first version that has it) and ``-3.Y`` (first version that no longer
does) marks: ``data/stdlib_modules.txt`` lists top-level modules and
``data/stdlib_names.txt`` a selection of names that modules gained or lost
(``typing:Self +3.11``), including keyword arguments (``builtins:zip(strict)``).
Both are read once, on first use.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from importlib import resources

MIN_MINOR = 8
MAX_MINOR = 14
SUPPORTED = tuple(f"3.{m}" for m in range(MIN_MINOR, MAX_MINOR + 1))
"""Target versions the tables describe, oldest first."""

RUNNING_MINOR = sys.version_info.minor if sys.version_info.major == 3 else MAX_MINOR

# Private modules that the library reference documents as modules in their own right.
DOCUMENTED_PRIVATE = frozenset({"_thread", "__main__"})


@dataclass(frozen=True)
class Span:
    """The versions (minor numbers) that have an entry: ``since <= minor < until``."""

    since: int = MIN_MINOR
    until: int = MAX_MINOR + 1

    def has(self, minor: int) -> bool:
        """Whether version ``3.<minor>`` has the entry."""
        return self.since <= minor < self.until


def is_private(module: str) -> bool:
    """A leading underscore marks a CPython implementation detail; ``__future__`` is public."""
    return module.startswith("_") and module != "__future__"


def parse_version(version: str) -> int | None:
    """The minor number of a supported target such as ``"3.10"``, else None."""
    return int(version[2:]) if version in SUPPORTED else None


def _parse_table(text: str) -> dict[str, Span]:
    table: dict[str, Span] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        since, until = MIN_MINOR, MAX_MINOR + 1
        for mark in line[1:]:
            minor = int(mark.rsplit(".", 1)[1])
            if mark.startswith("+"):
                since = minor
            else:
                until = minor
        table[line[0]] = Span(since, until)
    return table


def _read(name: str) -> str:
    return (resources.files(__package__ or "gradeloop_checkers") / "data" / name).read_text(
        encoding="utf-8"
    )


@functools.cache
def module_table() -> dict[str, Span]:
    """Every public top-level standard-library module of 3.8-3.14 and its span."""
    return _parse_table(_read("stdlib_modules.txt"))


@functools.cache
def modules_of(minor: int) -> frozenset[str]:
    """The public top-level standard-library modules of Python ``3.<minor>``."""
    return frozenset(name for name, span in module_table().items() if span.has(minor))


@dataclass(frozen=True)
class NameTable:
    """Names modules gained or lost, keyed ``(module, name)``.

    A keyword argument is keyed ``(module, "func(keyword)")``. ``attrs`` and
    ``calls`` are the bare names worth a closer look during a walk, so that most
    attribute accesses and calls cost one set lookup.
    """

    spans: dict[tuple[str, str], Span]
    attrs: frozenset[str]
    builtins: frozenset[str]
    calls: frozenset[str]
    homes: dict[str, tuple[str, ...]]  # attribute -> top-level modules that have it


@functools.cache
def name_table() -> NameTable:
    """The table of ``data/stdlib_names.txt``."""
    spans: dict[tuple[str, str], Span] = {}
    for key, span in _parse_table(_read("stdlib_names.txt")).items():
        module, _, name = key.partition(":")
        spans[(module, name)] = span
    plain = [(m, n) for (m, n) in spans if "(" not in n]
    homes: dict[str, set[str]] = {}
    for m, n in plain:
        homes.setdefault(n, set()).add(m.split(".", 1)[0])
    return NameTable(
        homes={n: tuple(sorted(tops)) for n, tops in homes.items()},
        spans=spans,
        attrs=frozenset(n for m, n in plain if m != "builtins"),
        builtins=frozenset(n for m, n in plain if m == "builtins"),
        calls=frozenset(n.split("(", 1)[0] for (_, n) in spans if "(" in n),
    )


# Where a draft reaches for a third-party package, the standard-library module that
# usually does the job, and the first version that has it.
_ALTERNATIVES: dict[str, tuple[str, int]] = {
    "requests": ("urllib.request", 8),
    "httpx": ("urllib.request", 8),
    "urllib3": ("urllib.request", 8),
    "simplejson": ("json", 8),
    "ujson": ("json", 8),
    "orjson": ("json", 8),
    "toml": ("tomllib", 11),
    "tomli": ("tomllib", 11),
    "pytz": ("zoneinfo", 9),
    "dateutil": ("datetime", 8),
    "attr": ("dataclasses", 8),
    "attrs": ("dataclasses", 8),
    "mock": ("unittest.mock", 8),
    "pathlib2": ("pathlib", 8),
    "importlib_metadata": ("importlib.metadata", 8),
    "importlib_resources": ("importlib.resources", 9),
    "regex": ("re", 8),
}

# Replacements for modules the standard library dropped.
_REPLACEMENTS: dict[str, str] = {
    "distutils": "use sysconfig, shutil or setuptools",
    "imp": "use importlib",
    "asyncore": "use asyncio",
    "asynchat": "use asyncio",
    "smtpd": "use asyncio, or the aiosmtpd package",
    "formatter": "format the text yourself",
    "parser": "use ast",
    "symbol": "use ast",
    "binhex": "use base64 or binascii",
    "dummy_threading": "use threading",
    "pipes": "use subprocess and shlex.quote",
    "cgi": "use email.message or urllib.parse",
    "imghdr": "check the file signature yourself, or use a package such as filetype",
    "lib2to3": "use ast",
    "telnetlib": "use a package such as telnetlib3",
    "crypt": "use hashlib",
}


def alternative(module: str, minor: int) -> str | None:
    """A standard-library replacement for third-party ``module`` in ``3.<minor>``."""
    alt = _ALTERNATIVES.get(module)
    if alt is None or alt[1] > minor:
        return None
    return alt[0]


def replacement(module: str) -> str:
    """Advice for a module the standard library removed."""
    return _REPLACEMENTS.get(module, "use a maintained replacement")
