"""The ``gradeloop`` command line: thin commands over the library.

Every command is a module with ``add_parser(subparsers)`` and ``run(args) -> int``.
Exit codes: 0 success (accepted / passed), 1 a clean "no" (not accepted / not
passed), 2 bad input, missing configuration or a model server that failed (cannot
be reached, refuses, times out, answers garbage), 3 a bug in gradeloop, 130
interrupted. No traceback reaches the user unless ``GRADELOOP_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from .. import __version__
from ..errors import (
    CacheWarning,
    DraftSizeWarning,
    GradeloopError,
    HistoryWarning,
    RubricWarning,
    StructuredFormWarning,
)
from ..errors._redact import scrub_error
from . import (
    _align,
    _batch,
    _cache,
    _calibrate,
    _checkers,
    _compare,
    _compare_runs,
    _gate,
    _grade,
    _history,
    _import_graders,
    _label,
    _mcp,
    _optimize,
    _plugins,
    _power,
    _prefer,
    _propose,
    _regrade,
    _report,
    _summarize,
    _view,
)
from ._io import terminal_safe
from ._models import close_resources, model_failure

__all__ = ["build_parser", "entry", "main"]

COMMANDS = (
    _grade,
    _optimize,
    _history,
    _checkers,
    _mcp,
    _compare,
    _calibrate,
    _report,
    _view,
    _cache,
    _batch,
    _regrade,
    _label,
    _align,
    _prefer,
    _propose,
    _summarize,
    _gate,
    _compare_runs,
    _power,
    _import_graders,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but bad arguments give one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, terminal_safe(f"{self.prog}: error: {message} (see `{self.prog} --help`)\n"))


def build_parser() -> argparse.ArgumentParser:
    """The ``gradeloop`` argument parser, with every command's subparser."""
    parser = _Parser(
        prog="gradeloop",
        description="Grade LLM output against a hybrid rubric and run the "
        "evaluator-optimizer loop.",
    )
    parser.add_argument("--version", action="version", version=f"gradeloop {__version__}")
    _plugins.add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    for command_parser in sub.choices.values():
        _plugins.add_command_option(command_parser)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse; an unknown option is reported by its command, with the closest known one."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = _subparsers(parser).get(args.command, parser)
        command.error(_unrecognized(extra, command))
    return args


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _unrecognized(extra: list[str], parser: argparse.ArgumentParser) -> str:
    known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    for word in extra:
        if word.startswith("--"):
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1)
            if close:
                return f"unrecognized argument {word}; did you mean {close[0]}?"
    return f"unrecognized arguments: {' '.join(extra)}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Everything written to stderr meanwhile (errors, warnings, progress) passes through
    the secret scrubber: an API error can quote the credential it refused.
    """
    real = sys.stderr
    sys.stderr = _Scrubbed(real)
    try:
        return _main(argv)
    finally:
        sys.stderr = real


class _Scrubbed:
    """A text stream that writes through :func:`scrub_error` to the one it wraps."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub_error(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno...
        return getattr(self._stream, name)


def _say(line: str) -> None:
    """One diagnostic line on stderr, its control characters escaped (an error can
    quote a path, an argument or a server's reply)."""
    print(terminal_safe(line), file=sys.stderr)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = _parse(parser, argv)
    try:
        with _one_line_warnings():
            _plugins.apply(args)
            code: int = args.run(args)
    except GradeloopError as exc:
        _say(f"gradeloop: error: {exc}{_plugins.hint(exc)}")
        return 2
    except KeyboardInterrupt:
        print("gradeloop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("GRADELOOP_DEBUG"):
            raise
        failure = model_failure(exc)  # the server's fault, not a bug: exit 2, one line
        if failure is not None:
            _say(f"gradeloop: error: {failure}")
            return 2
        _say(
            f"gradeloop: internal error: {type(exc).__name__}: {exc} "
            "(set GRADELOOP_DEBUG=1 for a traceback, and please report it)"
        )
        return 3
    finally:
        close_resources(args)
    return code


@contextlib.contextmanager
def _one_line_warnings() -> Iterator[None]:
    """gradeloop's own warnings (a wasteful rubric, a huge draft) as one line on stderr,
    shown whatever the warning filters say; the filters are restored after."""
    ours = (RubricWarning, DraftSizeWarning, CacheWarning, StructuredFormWarning, HistoryWarning)
    with warnings.catch_warnings():
        for category in ours:
            warnings.simplefilter("default", category)
        # a damaged row is read by more than one reader in a command: named once
        warnings.simplefilter("once", HistoryWarning)
        shown = warnings.showwarning

        def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if issubclass(category, ours):
                _say(f"gradeloop: warning: {' '.join(str(message).split())}")
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        yield


def entry() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
