"""What the CPython standard library holds in each Python version from 3.8 to 3.14.

Two data files beside this module carry the facts; ``scripts/stdlib_tables/``
generates them from typeshed's stubs and from the real interpreters (its README
says how, and each file's header records the sources and their versions):

* ``data/stdlib_modules.txt``: every public module and submodule, one a line,
  with ``+3.X`` / ``-3.Y`` marks (the first version that ships it / the first
  that no longer does, read in order);
* ``data/stdlib_names.txt``: per module (``[asyncio]``), the names it gained or
  lost (``TaskGroup +3.11``), class attributes (``Task.get_context +3.12``) and
  keyword arguments (``create_task(context) +3.11``); ``[builtins]`` names need no
  import; ``[typing_extensions]`` says where each of its names lives in the
  standard library and from which version.

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
_EVERY = (1 << (MAX_MINOR - MIN_MINOR + 1)) - 1


@dataclass(frozen=True)
class Span:
    """The versions that have an entry: bit ``minor - 8`` of ``mask`` is set for ``3.<minor>``."""

    mask: int = _EVERY

    def has(self, minor: int) -> bool:
        """Whether version ``3.<minor>`` has the entry."""
        return bool(self.mask >> (minor - MIN_MINOR) & 1) if minor >= MIN_MINOR else False

    @property
    def since(self) -> int:
        """The first version that has it (``MAX_MINOR + 1`` for none)."""
        for minor in range(MIN_MINOR, MAX_MINOR + 1):
            if self.has(minor):
                return minor
        return MAX_MINOR + 1

    def gone_by(self, target: int) -> int:
        """The version, at or before ``target``, from which the entry is missing again."""
        minor = target
        while minor > MIN_MINOR and not self.has(minor - 1):
            minor -= 1
        return minor


def is_private(module: str) -> bool:
    """A leading underscore marks a CPython implementation detail; ``__future__`` is public."""
    return module.startswith("_") and module != "__future__"


def parse_version(version: str) -> int | None:
    """The minor number of a supported target such as ``"3.10"``, else None."""
    return int(version[2:]) if version in SUPPORTED else None


def parse_marks(marks: list[str]) -> Span:
    """The span of ``+3.X`` / ``-3.Y`` marks, read in order (none: every version)."""
    present = not marks or marks[0].startswith("-")
    changes = {int(m.rsplit(".", 1)[1]): m.startswith("+") for m in marks}
    mask = 0
    for minor in range(MIN_MINOR, MAX_MINOR + 1):
        present = changes.get(minor, present)
        if present:
            mask |= 1 << (minor - MIN_MINOR)
    return Span(mask)


def _read(name: str) -> str:
    return (
        resources.files(__package__ or "gradeloop_checkers.code_runs") / "data" / name
    ).read_text(encoding="utf-8")


@functools.cache
def module_table() -> dict[str, Span]:
    """Every public standard-library module and submodule of 3.8-3.14 and its span."""
    table: dict[str, Span] = {}
    for raw in _read("stdlib_modules.txt").splitlines():
        if raw and not raw.startswith("#"):
            name, *marks = raw.split()
            table[name] = parse_marks(marks)
    return table


@functools.cache
def modules_of(minor: int) -> frozenset[str]:
    """The public top-level standard-library modules of Python ``3.<minor>``."""
    return frozenset(
        name for name, span in module_table().items() if "." not in name and span.has(minor)
    )


@dataclass(frozen=True)
class NameIndex:
    """The bare names of some name-table entries, for the walk's one-lookup tests.

    ``attrs`` and ``calls`` are the bare names worth a closer look during a walk
    (so that most attribute accesses and calls cost one set lookup), ``homes`` and
    ``callers`` the words a block must contain for such a use to resolve (the
    module's top-level name, or the class's name for a class member;
    ``"builtins"`` when a value of a builtin type is enough: those names are in
    ``anywhere``), ``keywords`` the tracked keyword arguments of each callable
    name, ``builtin_calls`` the builtins called with a tracked keyword
    (``zip(strict=...)``), ``builtins`` the builtin names themselves.
    """

    attrs: frozenset[str]
    builtins: frozenset[str]
    calls: frozenset[str]
    homes: dict[str, tuple[str, ...]]
    callers: dict[str, tuple[str, ...]]
    keywords: dict[str, tuple[str, ...]]
    builtin_calls: tuple[str, ...]
    anywhere: frozenset[str]


@dataclass(frozen=True)
class NameTable:
    """Names modules gained or lost, keyed ``(module, name)``.

    A class attribute is keyed ``(module, "Class.attr")``, a keyword argument
    ``(module, "func(keyword)")``. ``typing`` is the standard-library home of each
    ``typing_extensions`` name with the versions that have it; ``builtins`` the
    builtin names the table tracks. The walk's index of the entries one version
    lacks is :func:`missing_names`.
    """

    spans: dict[tuple[str, str], Span]
    typing: dict[str, tuple[str, Span]]
    builtins: frozenset[str]


def _home(module: str, name: str) -> str:
    """The word a block must contain for a use of entry ``(module, name)`` to resolve.

    A class's name for its members and keywords (a builtin's value needs none:
    ``"builtins"``), else the module's top-level name.
    """
    head = name.split("(", 1)[0]
    owner = head.rpartition(".")[0]
    if module == "builtins" and (owner or "(" in name):
        return "builtins"
    if owner:
        return owner.rsplit(".", 1)[-1]
    if "(" in name and head[:1].isupper():
        return head  # a class called with a keyword: its name is in the block
    return module.split(".", 1)[0]


def _index(entries: list[tuple[str, str]]) -> NameIndex:
    """The index of ``entries``, each ``(module, name)`` as keyed in the name table."""
    homes: dict[str, set[str]] = {}
    callers: dict[str, set[str]] = {}
    keywords: dict[str, set[str]] = {}
    for m, n in entries:
        head = n.split("(", 1)[0]
        owner, _, last = head.rpartition(".")
        top = _home(m, n)
        if "(" in n:
            callers.setdefault(last, set()).add(top)
            keywords.setdefault(last, set()).add(n[len(head) + 1 : -1])
        elif m != "builtins" or owner:
            homes.setdefault(last, set()).add(top)
    return NameIndex(
        attrs=frozenset(homes),
        builtins=frozenset(n for m, n in entries if m == "builtins" and n.isidentifier()),
        calls=frozenset(callers),
        homes={n: tuple(sorted(tops)) for n, tops in homes.items()},
        callers={n: tuple(sorted(tops)) for n, tops in callers.items()},
        keywords={n: tuple(sorted(kws)) for n, kws in keywords.items()},
        builtin_calls=tuple(
            sorted(
                {
                    n.split("(", 1)[0]
                    for m, n in entries
                    if m == "builtins" and "(" in n and "." not in n.split("(", 1)[0]
                }
            )
        ),
        anywhere=frozenset(
            n for table in (homes, callers) for n, tops in table.items() if "builtins" in tops
        ),
    )


@functools.cache
def name_table() -> NameTable:
    """The table of ``data/stdlib_names.txt``."""
    spans: dict[tuple[str, str], Span] = {}
    typing: dict[str, tuple[str, Span]] = {}
    parsed: dict[tuple[str, ...], Span] = {}  # 44 mark lists cover its 6,599 entries
    module = ""
    for raw in _read("stdlib_names.txt").splitlines():
        if not raw or raw.startswith("#"):
            continue
        if raw.startswith("["):
            module = raw[1:-1]
            continue
        name, *marks = raw.split()
        if module == "typing_extensions":
            typing[name] = (marks[0], parse_marks(marks[1:]))
            continue
        key = tuple(marks)
        span = parsed.get(key)
        if span is None:
            span = parsed[key] = parse_marks(marks)
        spans[(module, name)] = span
    builtins = frozenset(n for m, n in spans if m == "builtins" and n.isidentifier())
    return NameTable(spans=spans, typing=typing, builtins=builtins)


@functools.cache
def missing_names(target: int) -> NameIndex:
    """The index of the entries Python ``3.<target>`` lacks: the only ones a use can fail on.

    A block's member, keyword and builtin uses are reported only when the target
    lacks the entry, so a walk for one target need look closer only at these
    names (for 3.9: ``anext``, ``removeprefix``, ``zip(strict=...)``..., not
    ``basicConfig(encoding=...)``, which 3.9 has).
    """
    spans = name_table().spans
    return _index([key for key, span in spans.items() if not span.has(target)])


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
