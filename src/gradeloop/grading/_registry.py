"""The checker registry: pluggy plugins, entry points, and in-process checkers.

Loading is lazy (nothing is imported until a checker is first needed) and
idempotent. A plugin that fails to import or to register is recorded in
``Registry.failures`` by name and the rest keep working.

Environment:

``GRADELOOP_DISABLE_PLUGIN_AUTOLOAD=1``
    load no entry-point plugins except those named in ``GRADELOOP_PLUGINS``.
``GRADELOOP_PLUGINS=a,b``
    plugins to load: an installed plugin's entry-point name (loaded even with
    autoload disabled; the built-in checkers are the plugin ``builtin``), a module
    name, or a ``.py`` file. A name that cannot be loaded is an error.
``GRADELOOP_BLOCK_PLUGINS=a,b``
    never load these entry-point plugins.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata

import pluggy

from ..errors import CheckerConflictError, PluginError, UnknownCheckerError
from . import hookspecs
from ._checks import CheckerFn, CheckerInfo, check_signature, options_model_for
from ._context import takes_context
from ._entry_points import gradeloop_entry_points
from ._plugins import capturing, env_plugins, load_plugin

IN_PROCESS = "<in-process>"

hookimpl = pluggy.HookimplMarker("gradeloop")
"""Marker for plugin hook implementations: ``@hookimpl def register_checkers(register): ...``"""


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be loaded or could not register its checkers."""

    plugin: str
    distribution: str | None
    error: str


def _env_list(name: str) -> set[str]:
    return {part.strip() for part in os.environ.get(name, "").split(",") if part.strip()}


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


class Registry:
    """Checkers by name, gathered from plugins.

    Most code uses the process-wide default (:func:`default_registry`). Tests and
    embedders can build their own: ``Registry(autoload=False)`` starts empty.
    """

    def __init__(
        self,
        *,
        autoload: bool | None = None,
        allow: Iterable[str] | None = None,
        block: Iterable[str] | None = None,
    ) -> None:
        self._autoload = autoload
        self._allow = set(allow) if allow is not None else None
        self._block = set(block) if block is not None else None
        self._checkers: dict[str, CheckerInfo] = {}
        self._conflicts: dict[str, list[str]] = {}
        self._failures: list[PluginFailure] = []
        self._plugins: dict[str, str | None] = {}  # plugin name -> distribution
        # entry-point plugins left out: name -> (entry point, "blocked" or "autoload")
        self._skipped: dict[str, tuple[metadata.EntryPoint, str]] = {}
        self._pm = pluggy.PluginManager("gradeloop")
        self._pm.add_hookspecs(hookspecs)
        self._loaded = False
        self._ready = False  # loaded, without error: info() needs no lock from then on
        #: bumped after every change to the checkers (what a cached look-up checks)
        self.version = 0
        self._load_error: PluginError | None = None
        self._lock = threading.RLock()

    # -- loading -----------------------------------------------------------------

    def load(self) -> None:
        """Load entry-point plugins and collect their checkers (once).

        Then the modules and files named in ``GRADELOOP_PLUGINS`` (unless ``allow``
        was given); one that cannot be loaded raises :class:`PluginError`, now and
        on every later use of this registry.
        """
        if self._ready:  # the usual case, read on every checker call
            return
        with self._lock:
            if self._loaded:
                if self._load_error is not None:
                    raise self._load_error
                return
            self._loaded = True
            autoload = (
                self._autoload
                if self._autoload is not None
                else not _env_flag("GRADELOOP_DISABLE_PLUGIN_AUTOLOAD")
            )
            allow = self._allow if self._allow is not None else _env_list("GRADELOOP_PLUGINS")
            block = self._block if self._block is not None else _env_list("GRADELOOP_BLOCK_PLUGINS")
            points = gradeloop_entry_points()
            for ep in points:
                if ep.name in block or (not autoload and ep.name not in allow):
                    why = "blocked" if ep.name in block else "autoload"
                    self._skipped.setdefault(ep.name, (ep, why))
                    continue
                self._load_entry_point(ep)
            if self._allow is None:
                self._load_env_plugins({ep.name for ep in points})
            self._ready = True

    def _load_env_plugins(self, entry_point_names: set[str]) -> None:
        for spec in env_plugins():
            if spec in entry_point_names:
                continue  # an installed plugin: handled with the entry points above
            try:
                load_plugin(spec, self, origin="GRADELOOP_PLUGINS")
            except PluginError as exc:
                self._load_error = exc
                raise

    def load_entry_point(self, ep: metadata.EntryPoint) -> PluginFailure | None:
        """Load one entry-point plugin even if autoload is off; its failure, if any."""
        with self._lock:
            self.load()
            self._load_entry_point(ep)
            return next((f for f in self._failures if f.plugin == ep.name), None)

    def add_plugin_checkers(
        self,
        name: str,
        module: object,
        checkers: Iterable[tuple[str, CheckerFn, str | None]],
        *,
        hook: bool,
    ) -> None:
        """Add a user's plugin module: its ``@checker`` functions and its hook (once)."""
        with self._lock:
            self.load()
            if name in self._plugins:
                return
            checkers = list(checkers)
            for checker_name, fn, _ in checkers:  # all or none of a file's checkers
                check_signature(checker_name, fn)
            self._plugins[name] = None
            for checker_name, fn, description in checkers:
                self._add(checker_name, fn, name, None, description)
            if hook and not self._pm.is_registered(module):
                self._pm.register(module, name=name)
                self._collect(name, module, None)

    def _load_entry_point(self, ep: metadata.EntryPoint) -> None:
        dist = ep.dist.name if ep.dist is not None else None
        if ep.name in self._plugins:  # the same distribution seen twice on sys.path
            return
        try:
            plugin = ep.load()
            self._pm.register(plugin, name=ep.name)
        except Exception as exc:
            self._failures.append(PluginFailure(ep.name, dist, f"{type(exc).__name__}: {exc}"))
            return
        self._plugins[ep.name] = dist
        self._collect(ep.name, plugin, dist)

    def register_plugin(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin object (module or instance) in-process and collect its checkers."""
        with self._lock:
            self.load()
            plugin_name = self._pm.register(plugin, name=name)
            if plugin_name is None:  # blocked in pluggy
                return
            self._plugins[plugin_name] = None
            self._collect(plugin_name, plugin, None)

    def _collect(self, plugin_name: str, plugin: object, dist: str | None) -> None:
        """Call one plugin's ``register_checkers`` so failures are its own."""
        impls = [
            impl
            for impl in self._pm.hook.register_checkers.get_hookimpls()
            if impl.plugin is plugin
        ]
        for impl in impls:

            def register(name: str, fn: CheckerFn, description: str | None = None) -> None:
                self._add(name, fn, plugin_name, dist, description)

            try:
                impl.function(**{arg: register for arg in impl.argnames})
            except Exception as exc:
                self._failures.append(
                    PluginFailure(plugin_name, dist, f"{type(exc).__name__}: {exc}")
                )

    def _add(
        self,
        name: str,
        fn: CheckerFn,
        plugin: str,
        dist: str | None,
        description: str | None,
    ) -> None:
        if not isinstance(name, str) or not name or name == "judge":
            raise ValueError(f"invalid checker name {name!r} (and 'judge' is reserved)")
        if not callable(fn):
            raise TypeError(f"checker {name!r} is not callable")
        check_signature(name, fn)
        existing = self._checkers.get(name)
        if existing is not None:
            if existing.fn is fn:
                return
            self._conflicts.setdefault(name, [existing.plugin]).append(plugin)
            self.version += 1
            return
        if description is None:
            # the docstring's first paragraph, whole (a sentence may wrap onto a second
            # line); shown as plain text (`gradeloop checkers`, tool schemas): no ``markup``
            paragraph = (fn.__doc__ or "").strip().split("\n\n", 1)[0]
            description = _plain(" ".join(paragraph.split()))
        self._checkers[name] = CheckerInfo(
            name=name,
            fn=fn,
            plugin=plugin,
            distribution=dist,
            description=description,
            options_model=options_model_for(name, fn),
            wants_context=takes_context(fn),
            # gradeloop's own checkers, whose tests bound their time on hostile input:
            # run without the watch (and its thread hand-over) of checker_timeout
            bounded=dist == "gradeloop"
            and getattr(fn, "__module__", "").startswith("gradeloop_checkers."),
        )
        self.version += 1

    @property
    def failures(self) -> list[PluginFailure]:
        """Plugins that failed to import or to register, after loading."""
        self.load()
        return list(self._failures)

    @property
    def plugins(self) -> dict[str, str | None]:
        """Loaded plugins: name -> distribution (None for in-process plugins)."""
        self.load()
        return dict(self._plugins)

    # -- lookup ------------------------------------------------------------------

    def add(self, name: str, fn: CheckerFn, description: str | None = None) -> None:
        """Register ``fn`` in-process. Raises if another function owns ``name``."""
        with self._lock:
            self.load()
            existing = self._checkers.get(name)
            if existing is not None and existing.fn is not fn:
                if (
                    getattr(existing.fn, "__qualname__", None)
                    == getattr(fn, "__qualname__", object())
                    and existing.fn.__module__ == fn.__module__
                ):
                    # the same definition run again (a module re-executed): replace it
                    del self._checkers[name]  # _add moves the version on
                else:
                    raise CheckerConflictError(name, [existing.plugin, IN_PROCESS])
            self._add(name, fn, IN_PROCESS, None, description)

    def info(self, name: str) -> CheckerInfo:
        """The registered checker ``name``, or an error listing what is registered."""
        if not self._ready:  # read for every key of every draft: no call when loaded
            self.load()
        if name in self._conflicts:
            raise CheckerConflictError(name, self._conflicts[name])
        try:
            return self._checkers[name]
        except KeyError:
            why = self._not_loaded(name)
            raise UnknownCheckerError(name, self._checkers, not_loaded=why) from None

    def _not_loaded(self, name: str) -> str:
        """Which plugin left out of loading has ``name``, said with the fix ("" if none).

        The built-in checkers are gradeloop's own, so their names are read; any other
        plugin left out is never imported (it may be blocked for what importing does),
        so it is named as one that may have the checker."""
        if not self._skipped:
            return ""
        fixes = {
            "blocked": "which is blocked (GRADELOOP_BLOCK_PLUGINS or --block-plugin); "
            "unblock it to use this checker",
            "autoload": "which is not loaded because plugin autoload is disabled; name it "
            "in GRADELOOP_PLUGINS (or --plugin {plugin}) to load it",
        }
        for plugin, (ep, why) in self._skipped.items():
            if ep.value == BUILTIN_MODULE and name in builtin_checker_names():
                return f"belongs to plugin {plugin!r}, " + fixes[why].format(plugin=plugin)
        others = ", ".join(
            f"{p!r} ({why})" for p, (ep, why) in self._skipped.items() if ep.value != BUILTIN_MODULE
        )
        if not others:
            return ""
        return (
            f"is not registered; it may belong to a plugin that was not loaded: {others}; "
            "unblock it (GRADELOOP_BLOCK_PLUGINS, --block-plugin) or name it in "
            "GRADELOOP_PLUGINS"
        )

    def get(self, name: str) -> CheckerFn:
        return self.info(name).fn

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._checkers and name not in self._conflicts

    def __iter__(self) -> Iterator[CheckerInfo]:
        self.load()
        return iter(sorted(self._checkers.values(), key=lambda c: c.name))

    def names(self) -> list[str]:
        return [c.name for c in self]

    @property
    def conflicts(self) -> dict[str, list[str]]:
        self.load()
        return {k: list(v) for k, v in self._conflicts.items()}


BUILTIN_MODULE = "gradeloop_checkers"


def builtin_checker_names() -> set[str]:
    """The names the built-in checkers register (gradeloop's own module: safe to import)."""
    names: set[str] = set()

    def register(name: str, fn: CheckerFn, description: str | None = None) -> None:
        names.add(name)

    importlib.import_module(BUILTIN_MODULE).register_checkers(register)
    return names


def _plain(line: str) -> str:
    """A docstring line without reStructuredText literals: ``x`` -> x."""
    return re.sub(r"(?<!`)``([^`]+)``(?!`)", r"\1", line)


_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The process-wide registry, created (not loaded) on first use."""
    global _default
    registry = _default  # only ever replaced whole (or reset): reading it needs no lock
    if registry is not None:
        return registry
    with _default_lock:
        if _default is None:
            _default = Registry()
        return _default


def set_default_registry(registry: Registry) -> None:
    """Make ``registry`` the process-wide one (the CLI's plugin options build theirs)."""
    global _default
    with _default_lock:
        _default = registry


def reset_default_registry() -> None:
    """Forget the process-wide registry, so the environment is read again."""
    global _default
    with _default_lock:
        _default = None


def get_checker(name: str) -> CheckerFn:
    """The checker registered as ``name``.

    Raises :class:`~gradeloop.errors.UnknownCheckerError` listing the registered
    names when there is none.
    """
    return default_registry().get(name)


def checker(name: str, *, description: str | None = None) -> Callable[[CheckerFn], CheckerFn]:
    """Register the decorated function as a checker, in this process.

    >>> @checker("no_exclamations")
    ... def no_exclamations(text: str) -> bool:
    ...     return "!" not in text
    """

    def decorate(fn: CheckerFn) -> CheckerFn:
        captured = capturing()
        if captured is not None:  # a plugin file being loaded: its registry adds it
            captured.append((name, fn, description))
        else:
            default_registry().add(name, fn, description)
        return fn

    return decorate


def unregister_checker(name: str) -> None:
    """Remove an in-process checker (for tests and notebooks)."""
    registry = default_registry()
    with registry._lock:
        info = registry._checkers.get(name)
        if info is not None and info.plugin == IN_PROCESS:
            del registry._checkers[name]
            registry.version += 1
