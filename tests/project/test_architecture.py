"""The layout's promises: layers import downwards only, and no module imports in a cycle.

Every ``import`` of a project module counts, wherever it sits (module level, inside a
function, under ``if TYPE_CHECKING:``), so a lazy import cannot hide a cycle.
docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"gradeloop": ROOT / "src" / "gradeloop", "gradeloop_checkers": ROOT / "checkers"}

# Lowest first. A module may import from its own layer or a lower one. A module is in
# the layer of the longest prefix that names it (a package may hold a module that
# sits higher than the package's own layer: gradeloop.integrations.mcp_server).
LAYERS = (
    ("gradeloop.errors", "gradeloop.integrations", "gradeloop.stats"),
    ("gradeloop.grading",),
    ("gradeloop.models", "gradeloop.judging"),
    ("gradeloop.bulk",),
    ("gradeloop.loop",),
    ("gradeloop.history",),
    (
        "gradeloop.migration",
        "gradeloop.rewards",
        "gradeloop.bulk.batches",
        "gradeloop.history.report",
        "gradeloop.tools",
        "gradeloop.graph",
        "gradeloop.integrations.mcp_server",
        "gradeloop.integrations.ray",
    ),
    ("gradeloop.testing", "gradeloop.cli", "gradeloop.__main__"),
)
CHECKER_LAYERS = (
    ("gradeloop_checkers._options", "gradeloop_checkers.markdown"),
    (
        "gradeloop_checkers.code_runs",
        "gradeloop_checkers.sentence_len",
        "gradeloop_checkers.text",
        "gradeloop_checkers.json_checks",
        "gradeloop_checkers.trajectory",
        "gradeloop_checkers.similarity",
    ),
)


def _modules() -> dict[str, Path]:
    found = {}
    for top, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [top, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join([*base, *([node.module] if node.module else [])])
            else:
                stem = node.module or ""
            # ``from pkg import sub`` imports the submodule; any other name is pkg's own
            targets = [
                f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem
                for alias in node.names
            ]
        for target in targets:
            # the longest project module the target names (a module, or a name in one)
            while target and target not in known:
                target = target.rpartition(".")[0]
            # a module's own parent packages are imported before it, whatever it says
            if target and target != name and not name.startswith(target + "."):
                out.add(target)
    return out


MODULES = _modules()
GRAPH = {name: _imports(name, path, set(MODULES)) for name, path in MODULES.items()}


def _layer(name: str, layers: tuple[tuple[str, ...], ...]) -> int | None:
    found = [
        (len(p), index)
        for index, group in enumerate(layers)
        for p in group
        if name == p or name.startswith(p + ".")
    ]
    return max(found)[1] if found else None


def test_every_module_has_a_layer() -> None:
    stray = [
        m
        for m in MODULES
        if m not in ("gradeloop", "gradeloop_checkers")
        and _layer(m, LAYERS) is None
        and _layer(m, CHECKER_LAYERS) is None
    ]
    assert stray == [], f"add these to a layer here and in docs/architecture.md: {stray}"


@pytest.mark.parametrize("layers", [LAYERS, CHECKER_LAYERS], ids=["gradeloop", "checkers"])
def test_layers_import_downwards_only(layers: tuple[tuple[str, ...], ...]) -> None:
    upward = []
    for name, targets in GRAPH.items():
        mine = _layer(name, layers)
        if mine is None:
            continue
        for target in targets:
            theirs = _layer(target, layers)
            if theirs is not None and theirs > mine:
                upward.append(f"{name} -> {target}")
    assert upward == []


def test_a_checker_family_never_imports_another() -> None:
    families = CHECKER_LAYERS[1]
    crossing = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        for target in targets
        if (mine := _family(name, families))
        and (theirs := _family(target, families))
        and mine != theirs
    ]
    assert crossing == []


def _family(name: str, families: tuple[str, ...]) -> str | None:
    return next((f for f in families if name == f or name.startswith(f + ".")), None)


def _cycle() -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for start in GRAPH:
        if start in state:
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(GRAPH[start]))]
        state[start] = 1
        while stack:
            node, todo = stack[-1]
            if not todo:
                state[node] = 2
                stack.pop()
                continue
            nxt = todo.pop()
            if state.get(nxt) == 1:
                path = [n for n, _ in stack]
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                state[nxt] = 1
                stack.append((nxt, sorted(GRAPH.get(nxt, ()))))
    return None


def test_no_module_imports_in_a_cycle() -> None:
    assert _cycle() is None, " -> ".join(_cycle() or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    saved = dict(GRAPH)
    try:
        GRAPH["gradeloop.errors"] = {"gradeloop.integrations.telemetry"}
        GRAPH["gradeloop.integrations.telemetry"] = {"gradeloop.errors"}
        assert _cycle() is not None
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_the_layer_check_sees_an_upward_import() -> None:
    assert _layer("gradeloop.grading._grade", LAYERS) == 1
    assert _layer("gradeloop.cli._grade", LAYERS) == 7
    assert _layer("gradeloop.loop._run", LAYERS) < _layer("gradeloop.history._store", LAYERS)  # type: ignore[operator]
    # a module deeper than its package's layer: the longest prefix decides
    assert _layer("gradeloop.integrations.telemetry", LAYERS) == 0
    assert _layer("gradeloop.integrations.mcp_server", LAYERS) == 6


def test_every_package_folder_is_in_the_wheel() -> None:
    # pyproject.toml lists the packages one by one; a folder left out is missing from
    # the installed wheel (found by .ci/run's wheel check only after the whole suite)
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
            "packages"
        ]
    )
    found = set()
    for top, folder in PACKAGES.items():
        for init in folder.rglob("__init__.py"):
            parts = init.parent.relative_to(folder).parts
            found.add(".".join([top, *parts]))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_the_package_folder_stays_small() -> None:
    # a new piece goes into the package that uses it (docs/architecture.md): 16 after
    # the front door was shrunk, room for two packages of their own (rewards, stats)
    entries = sorted(p.name for p in PACKAGES["gradeloop"].iterdir() if p.name != "__pycache__")
    assert len(entries) <= 18, entries
