"""``gradeloop checkers``: what is registered, where it comes from, what failed."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from ..grading._registry import default_registry
from ._io import console, print_json


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "checkers",
        help="list the registered checkers and plugin problems",
        description="The checkers a rubric can name: each one's plugin, distribution, options "
        "and description, then any plugin that failed to load and any name two plugins "
        "claim. Exit 0.",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    registry = default_registry()
    checkers: list[dict[str, Any]] = [
        {
            "name": c.name,
            "plugin": c.plugin,
            "distribution": c.distribution,
            "description": c.description,
            "options": c.option_names(),
        }
        for c in registry
    ]
    failures = [
        {"plugin": f.plugin, "distribution": f.distribution, "error": f.error}
        for f in registry.failures
    ]
    conflicts = [{"name": n, "plugins": p} for n, p in sorted(registry.conflicts.items())]
    if args.json:
        print_json({"checkers": checkers, "failed_plugins": failures, "conflicts": conflicts})
        return 0
    out = console()
    # One short block per checker rather than a five-column table: it fits any width
    # without cutting a value, and reads the same piped or on a terminal.
    for c in checkers:
        source = c["plugin"] + (f", {c['distribution']}" if c["distribution"] else "")
        out.print(f"{c['name']}  ({source})", markup=False)
        for line in textwrap.wrap(c["description"], 92):  # whole sentences, on any width
            out.print(f"    {line}", markup=False)
        out.print(f"    options: {', '.join(c['options']) or 'none'}", markup=False)
    for f in failures:
        out.print(
            f"plugin {f['plugin']!r} ({f['distribution'] or 'unknown distribution'}) "
            f"failed to load: {f['error']}",
            markup=False,
        )
    for conflict in conflicts:
        out.print(
            f"checker {conflict['name']!r} is registered by several plugins: "
            f"{', '.join(conflict['plugins'])}; it cannot be used until one is blocked",
            markup=False,
        )
    return 0
