"""Loading the checkers a user names: a module, a ``.py`` file, or an installed plugin.

Three ways to name them, all loaded here, all loud when a name is wrong:

* the CLI's ``--plugin MODULE_OR_PATH`` (repeatable; paths from the working directory),
* a rubric's ``plugins = ["./my_checkers.py"]`` (paths from the rubric file's folder),
* ``GRADELOOP_PLUGINS=a,b`` (paths from the working directory).

A name is an installed plugin (an entry point in the ``gradeloop`` group), else a
path when it looks like one (ends in ``.py`` or holds a ``/``), else an importable
module. The module's ``@checker`` functions and its ``register_checkers`` hook both
count. This is the user's own code, loaded because the user asked for it; nothing
here ever touches a draft.

A module is imported once per process; each registry it is loaded into gets its
checkers (so a reset registry, or one built for a test, can load it again).
"""

from __future__ import annotations

import contextvars
import hashlib
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from ..errors import CheckerSignatureError, PluginError, RubricError
from ._entry_points import gradeloop_entry_points

__all__ = [
    "capturing",
    "env_plugins",
    "is_path",
    "load_plugin",
    "load_rubric_plugins",
    "resolve_spec",
]

# While a user's module is being imported, its @checker decorators land here instead
# of in the process-wide registry, so they can be given to whichever registry asked.
_captured: contextvars.ContextVar[list[tuple[str, Any, str | None]] | None] = (
    contextvars.ContextVar("gradeloop_captured_checkers", default=None)
)


@dataclass
class _Loaded:
    name: str  # how `gradeloop checkers` shows the plugin
    module: ModuleType
    checkers: list[tuple[str, Any, str | None]] = field(default_factory=list)
    hook: bool = False


class Registry(Protocol):
    """What loading needs of a registry (``_registry.Registry``, which imports this)."""

    def load_entry_point(self, ep: metadata.EntryPoint) -> Any: ...

    def add_plugin_checkers(
        self, name: str, module: object, checkers: Any, *, hook: bool
    ) -> None: ...


_loaded: dict[str, _Loaded] = {}
_lock = threading.RLock()


def capturing() -> list[tuple[str, Any, str | None]] | None:
    """The list a module being loaded here registers into, or None."""
    return _captured.get()


@contextmanager
def _capture() -> Iterator[list[tuple[str, Any, str | None]]]:
    found: list[tuple[str, Any, str | None]] = []
    token = _captured.set(found)
    try:
        yield found
    finally:
        _captured.reset(token)


def is_path(spec: str) -> bool:
    """Whether a plugin name is a file path rather than a module name."""
    return spec.endswith(".py") or "/" in spec or os.sep in spec


def resolve_spec(spec: str, base: Path | None) -> str:
    """A path made absolute (from ``base``, else the working directory); a module as is."""
    if not is_path(spec):
        return spec
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return str(path.resolve())


def env_plugins() -> list[str]:
    """The names in ``GRADELOOP_PLUGINS``, in order."""
    return [p.strip() for p in os.environ.get("GRADELOOP_PLUGINS", "").split(",") if p.strip()]


def load_plugin(
    spec: str, registry: Registry, *, base: Path | None = None, origin: str = "--plugin"
) -> str:
    """Load the plugin ``spec`` into ``registry``; returns the plugin's name.

    ``origin`` says where the name came from, for the error message. Raises
    :class:`~gradeloop.errors.PluginError` naming the plugin, why, and the fix.
    """
    spec = spec.strip()
    if not spec:
        raise PluginError(spec, origin, "the name is empty", "give a module name or a .py file")
    entry = _entry_point(spec)
    if entry is not None:
        failure = registry.load_entry_point(entry)
        if failure is not None:
            raise PluginError(spec, origin, failure.error, "fix or reinstall that plugin")
        return spec
    with _lock:
        loaded = _import(spec, base, origin)
    try:
        registry.add_plugin_checkers(loaded.name, loaded.module, loaded.checkers, hook=loaded.hook)
    except CheckerSignatureError as exc:
        raise PluginError(spec, origin, str(exc), "then load it again") from None
    return loaded.name


def _entry_point(spec: str) -> metadata.EntryPoint | None:
    if is_path(spec):
        return None
    for ep in gradeloop_entry_points():
        if ep.name == spec:
            return ep
    return None


def _import(spec: str, base: Path | None, origin: str) -> _Loaded:
    key = resolve_spec(spec, base)
    if key in _loaded:
        return _loaded[key]
    preloaded = False
    if is_path(spec):
        module, found = _exec_file(spec, Path(key), origin)
        name = _display(Path(key))
    else:
        preloaded = spec in sys.modules
        module, found = _import_module(spec, origin, base or Path.cwd())
        name = spec
    hook = callable(getattr(module, "register_checkers", None))
    # a module imported before it was named as a plugin ran its @checker calls then,
    # into the process-wide registry: there is nothing left to capture
    if not found and not hook and not preloaded:
        if is_path(spec):  # a fixed file can then be loaded again in this process
            sys.modules.pop(module.__name__, None)
        raise PluginError(
            spec,
            origin,
            "it registers no checkers",
            "decorate its checker functions with @gradeloop.checker(NAME), or give it a "
            "register_checkers hook",
        )
    loaded = _Loaded(name, module, found, hook)
    _loaded[key] = loaded
    return loaded


def _exec_file(spec: str, path: Path, origin: str) -> tuple[ModuleType, list[Any]]:
    if not path.exists():
        raise PluginError(spec, origin, f"file not found: {path}", "check the path")
    if not path.is_file():
        raise PluginError(spec, origin, f"{path} is not a file", "give the .py file")
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    module_name = f"gradeloop_user_plugin_{_identifier(path.stem)}_{digest}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise PluginError(spec, origin, f"{path} cannot be imported", "give a .py file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look it up by name
    loader = module_spec.loader
    return module, _run(lambda: loader.exec_module(module), spec, origin, module_name)


def _import_module(spec: str, origin: str, base: Path) -> tuple[ModuleType, list[Any]]:
    if spec in sys.modules:
        return sys.modules[spec], []
    holder: list[ModuleType] = []
    # searched from the working directory (a rubric's: its folder) first, as
    # `python -m` would; the console script's own sys.path does not hold it
    sys.path.insert(0, str(base))
    try:
        found = _run(lambda: holder.append(importlib.import_module(spec)), spec, origin, None)
    except PluginError as exc:
        cause = exc.__cause__
        missing = cause.name if isinstance(cause, ModuleNotFoundError) else None
        if missing and (spec == missing or spec.startswith(missing + ".")):
            raise PluginError(
                spec,
                origin,
                f"no module named {spec!r} in {base} or on the Python path, and no "
                "installed plugin has that name",
                f"give the path to its file (./{spec.replace('.', '/')}.py), or make the "
                "module importable (PYTHONPATH)",
            ) from None
        raise
    finally:
        sys.path.remove(str(base))
    return holder[0], found


def _run(action: Callable[[], Any], spec: str, origin: str, cleanup: str | None) -> list[Any]:
    with _capture() as found:
        try:
            action()
        except Exception as exc:
            if cleanup is not None:
                sys.modules.pop(cleanup, None)
            raise PluginError(
                spec, origin, f"importing it raised {type(exc).__name__}: {exc}", "fix the module"
            ) from exc
    return found


def _identifier(stem: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in stem) or "plugin"


def _display(path: Path) -> str:
    """A file plugin's name: its path from the working directory when it is below it."""
    try:
        return "./" + str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_rubric_plugins(raw: Any, path: Path | None, registry: Registry) -> tuple[str, ...]:
    """Load a rubric's ``plugins`` list (paths from the rubric file's folder).

    Returns the names as kept in ``Rubric.to_dict()``: paths made absolute, so the
    dict loads the same files from anywhere. Raises ``RubricError`` naming the file.
    """
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) and p.strip() for p in raw):
        raise RubricError(
            "plugins must be a list of module names or .py files, "
            'e.g. plugins = ["./my_checkers.py"]',
            path=path,
        )
    base = None if path is None else path.resolve().parent
    for spec in raw:
        try:
            load_plugin(spec, registry, base=base, origin="the rubric's plugins")
        except PluginError as exc:
            raise RubricError(str(exc), path=path) from None
    return tuple(resolve_spec(spec, base) for spec in raw)
