"""The ``gradeloop`` command line: thin commands over the library.

Every command is a module with ``add_parser(subparsers)`` and ``run(args) -> int``.
Exit codes: 0 success (accepted / passed), 1 a clean "no" (not accepted / not
passed), 2 bad input or missing configuration, 130 interrupted. No traceback
reaches the user unless ``GRADELOOP_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from ..errors import GradeloopError
from ..grading._registry import reset_default_registry
from . import (
    _calibrate,
    _checkers,
    _compare,
    _grade,
    _history,
    _mcp,
    _optimize,
    _report,
    _view,
)

COMMANDS = (_grade, _optimize, _history, _checkers, _mcp, _compare, _calibrate, _report, _view)


class _Parser(argparse.ArgumentParser):
    """argparse, but bad arguments give one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gradeloop",
        description="Grade LLM output against a hybrid rubric and run the "
        "evaluator-optimizer loop.",
    )
    parser.add_argument("--version", action="version", version=f"gradeloop {__version__}")
    parser.add_argument(
        "--disable-plugin-autoload",
        action="store_true",
        help="load no entry-point plugins except those in GRADELOOP_PLUGINS",
    )
    parser.add_argument(
        "--block-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="do not load the plugin NAME (repeatable)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _apply_plugin_options(args: argparse.Namespace) -> None:
    if args.disable_plugin_autoload:
        os.environ["GRADELOOP_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if args.block_plugin:
        blocked = {b for b in os.environ.get("GRADELOOP_BLOCK_PLUGINS", "").split(",") if b}
        os.environ["GRADELOOP_BLOCK_PLUGINS"] = ",".join(sorted(blocked | set(args.block_plugin)))
    if args.disable_plugin_autoload or args.block_plugin:
        reset_default_registry()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _apply_plugin_options(args)
    try:
        code: int = args.run(args)
    except GradeloopError as exc:
        print(f"gradeloop: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gradeloop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("GRADELOOP_DEBUG"):
            raise
        print(
            f"gradeloop: internal error: {type(exc).__name__}: {exc} "
            "(set GRADELOOP_DEBUG=1 for a traceback, and please report it)",
            file=sys.stderr,
        )
        return 3
    return code


def entry() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
