"""Build throwaway installed distributions with `gradeloop` entry points.

A directory holding ``<name>.dist-info`` plus the plugin module, put on
``sys.path`` (or ``PYTHONPATH`` for a subprocess), is discovered by
``importlib.metadata`` exactly like a pip-installed package.
"""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

_unique = itertools.count()


def make_dist(root: Path, dist: str, plugins: dict[str, str], version: str = "1.0") -> Path:
    """Write a distribution ``dist`` whose entry points map name -> module source."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = ["[gradeloop]"]
    for name, source in plugins.items():
        # a fresh module name per call: sys.modules outlives a test
        module = f"{dist.replace('-', '_')}_{name}_{next(_unique)}"
        (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        lines.append(f"{name} = {module}")
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


GOOD = """
    from gradeloop import CheckResult, hookimpl

    def shouty(text: str, *, max_ratio: float = 0.5) -> CheckResult:
        '''Fails drafts that are mostly capital letters.'''
        letters = [c for c in text if c.isalpha()]
        upper = sum(c.isupper() for c in letters)
        ok = not letters or upper / len(letters) <= max_ratio
        return CheckResult(ok, [] if ok else ["too many capital letters"])

    @hookimpl
    def register_checkers(register):
        register("shouty", shouty)
"""

IMPORT_FAILS = """
    raise ImportError("this plugin is broken on purpose")
"""

REGISTER_FAILS = """
    from gradeloop import hookimpl

    @hookimpl
    def register_checkers(register):
        raise RuntimeError("cannot register today")
"""

CLASHES = """
    from gradeloop import hookimpl

    @hookimpl
    def register_checkers(register):
        register("shouty", lambda text: True)
"""
