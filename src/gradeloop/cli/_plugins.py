"""The plugin options every command takes: ``--plugin``, ``--block-plugin``,
``--disable-plugin-autoload``.

They build the process-wide checker registry before a command runs, so a rubric
loaded afterwards sees the checkers they bring. Nothing is written to the
environment: a command run in-process (tests, an embedding program) leaves no trace.
"""

from __future__ import annotations

import argparse
import os

from ..errors import RubricError, UnknownCheckerError
from ..grading._plugins import load_plugin
from ..grading._registry import Registry, default_registry, set_default_registry

PLUGIN_HELP = (
    "load checkers from MODULE_OR_PATH (a module name or a .py file; repeatable): "
    "its @gradeloop.checker functions and register_checkers hook"
)


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """The options given before the command (``gradeloop --plugin x.py grade ...``)."""
    parser.add_argument(
        "--plugin",
        dest="plugins",
        action="append",
        default=[],
        metavar="MODULE_OR_PATH",
        help=PLUGIN_HELP,
    )
    parser.add_argument(
        "--disable-plugin-autoload",
        action="store_true",
        help="load no installed plugins except those named in GRADELOOP_PLUGINS or --plugin",
    )
    parser.add_argument(
        "--block-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="do not load the installed plugin NAME (repeatable)",
    )


def add_command_option(parser: argparse.ArgumentParser) -> None:
    """``--plugin`` after the command too (``gradeloop grade --plugin x.py ...``)."""
    parser.add_argument(
        "--plugin",
        dest="command_plugins",
        action="append",
        default=[],
        metavar="MODULE_OR_PATH",
        help=PLUGIN_HELP,
    )


def apply(args: argparse.Namespace) -> None:
    """Build the registry the options ask for, then load every ``--plugin``.

    Raises :class:`~gradeloop.errors.PluginError` for a plugin that cannot be loaded.
    """
    if args.disable_plugin_autoload or args.block_plugin:
        env_block = {b for b in os.environ.get("GRADELOOP_BLOCK_PLUGINS", "").split(",") if b}
        set_default_registry(
            Registry(
                autoload=False if args.disable_plugin_autoload else None,
                block=env_block | set(args.block_plugin),
            )
        )
    for spec in [*args.plugins, *getattr(args, "command_plugins", [])]:
        load_plugin(spec, default_registry(), origin="--plugin")


def hint(exc: Exception) -> str:
    """What the command line adds to a library error: its own way to load a checker."""
    cause = exc.__cause__
    if isinstance(exc, RubricError) and isinstance(cause, UnknownCheckerError):
        return "" if cause.not_loaded else "; or pass --plugin ./my_checkers.py"
    return ""
