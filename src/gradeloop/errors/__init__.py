"""Every exception gradeloop raises on purpose.

The tree::

    GradeloopError                      base of everything below
    ├── RubricError (ValueError)        a rubric file or dict is wrong: names the file,
    │                                   the criterion and the fix
    ├── CheckerError                    the checker registry
    │   ├── UnknownCheckerError (LookupError)
    │   │                               no checker by that name; lists what is registered
    │   ├── CheckerConflictError        two plugins registered one name; names both
    │   ├── CheckerSignatureError (TypeError)
    │   │                               a function that cannot be called as
    │   │                               fn(text, **options), refused when registered
    │   └── PluginError                 a plugin the user named (--plugin, a rubric's
    │                                   plugins, GRADELOOP_PLUGINS) cannot be loaded
    ├── InputError (ValueError)         a draft, task or label file that cannot be read
    │   ├── UnusableFileError           not a regular file (a device, a socket...), or
    │                                   larger than the limit its message states
    │   └── TranscriptError             agent messages that cannot be read as a
    │                                   transcript; names the message index
    │   └── NotEnoughEvidenceError      too few drafts with a verdict for a key to
    │                                   propose a checker; says how many more are needed
    ├── ConfigError                     no model configured, bad environment setting
    │   └── JudgeRequiredError          judge-filled keys but no judge; names the keys
    ├── NotAnAnswer (RuntimeError)      a model reply that is not a finished answer:
    │                                   refusal ("declined"), truncation ("max_tokens"),
    │                                   or no text block ("no text block")
    ├── JudgeError                      the judge failed to give a usable verdict
    │                                   (refusal, truncation, schema-invalid reply, API
    │                                   error after the client's retries); never a pass
    ├── BatchError                      a Message Batches job cannot be submitted,
    │                                   found or collected (yet); says what to do
    └── HistoryError                    the history store cannot be read or written
        └── LoopNotFoundError (LookupError)

    GradeloopWarning (UserWarning)      something works but deserves a look (the generator
                                        and the judge share a model family, ...)
    RubricWarning (UserWarning)         a rubric that loads but costs more than it should
                                        (long anchors/examples sent with every judge call)
    DraftSizeWarning (UserWarning)      a draft past the size gradeloop expects
                                        (graded anyway: slow, and costly to judge)
    CacheWarning (UserWarning)          a damaged verdict cache was set aside (renamed)
                                        and a new one started
    StructuredFormWarning (UserWarning) a server refused a structured-output form and the
                                        judge stepped down to the next (said once a client)
    HistoryWarning (UserWarning)        a damaged row of the history (not JSON, the wrong
                                        shape) was left out; names its run and row

Exceptions carry what a caller needs to act: ``RubricError.path`` / ``.key``,
``UnknownCheckerError.known``, ``JudgeError.reason`` / ``.usage``,
``NotAnAnswer.reason`` / ``.stop_details``, ``TranscriptError.index``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from ._redact import scrub_error

__all__ = [
    "BatchError",
    "CacheWarning",
    "CheckerConflictError",
    "CheckerError",
    "CheckerSignatureError",
    "ConfigError",
    "DraftSizeWarning",
    "GradeloopError",
    "GradeloopWarning",
    "HistoryError",
    "HistoryWarning",
    "InputError",
    "JudgeError",
    "JudgeRequiredError",
    "LoopNotFoundError",
    "NotAnAnswer",
    "NotEnoughEvidenceError",
    "PluginError",
    "RubricError",
    "RubricWarning",
    "StructuredFormWarning",
    "TranscriptError",
    "UnknownCheckerError",
    "UnusableFileError",
]


class GradeloopError(Exception):
    """Base class of every exception gradeloop raises deliberately."""


class RubricError(GradeloopError, ValueError):
    """A rubric is invalid. The message names the file, the criterion and the fix."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        key: str | None = None,
        line: int | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.key = key
        self.line = line
        self.detail = message
        where = []
        if self.path is not None:
            where.append(f"{self.path}:{line}" if line else str(self.path))
        if key is not None:
            where.append(f"criterion {key!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class GradeloopWarning(UserWarning):
    """Something that works but deserves a look, such as a judge of the generator's own
    model family (which tends to prefer its family's drafts).

    Not an error. Silence it with the :mod:`warnings` filters.
    """


class RubricWarning(UserWarning):
    """A rubric that is valid but wasteful, such as very long anchors or examples.

    Not an error: the rubric loads. Silence it with the :mod:`warnings` filters.
    """


class CacheWarning(UserWarning):
    """The verdict cache file was damaged: it was renamed aside (the message names the
    new name) and an empty cache started. Grading goes on; only reuse is lost."""


class DraftSizeWarning(UserWarning):
    """A draft longer than gradeloop expects (``DRAFT_WARN_CHARS`` characters). Not an
    error: it is graded, but slowly, and a judge reads (and bills) all of it."""


class StructuredFormWarning(UserWarning):
    """A server refused a structured-output form (``response_format`` json_schema,
    ``output_config``...), and a judge with ``structured="auto"`` stepped down to the
    next form for that client. Said once per client; the message names both forms.
    """


class HistoryWarning(UserWarning):
    """A row of the history database is damaged (not JSON, nested too deeply, the wrong
    shape) and was left out of what is read; the message names its run and row. The
    rest of the run is read as usual."""


class CheckerError(GradeloopError):
    """Base class for problems with the checker registry."""


class UnknownCheckerError(CheckerError, LookupError):
    """No checker is registered under the requested name."""

    def __init__(self, name: str, known: Iterable[str], *, not_loaded: str = "") -> None:
        self.name = name
        self.known = tuple(sorted(known))
        listing = ", ".join(self.known) if self.known else "none"
        self.not_loaded = not_loaded
        if not_loaded:  # a plugin that was not loaded (blocked, or autoload off) has it
            super().__init__(f"checker {name!r} {not_loaded}")
            return
        close = difflib.get_close_matches(name, self.known, n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        super().__init__(
            f"unknown checker {name!r}; {guess}registered checkers: {listing}. A checker in "
            "a file of your own is registered once that file is loaded: name the file in the "
            'rubric (plugins = ["./my_checkers.py"]) or in GRADELOOP_PLUGINS'
        )

    def __str__(self) -> str:  # LookupError would repr() the message otherwise
        return str(self.args[0])


class CheckerConflictError(CheckerError):
    """Two plugins registered a checker under the same name."""

    def __init__(self, name: str, plugins: Sequence[str]) -> None:
        self.name = name
        self.plugins = tuple(plugins)
        who = " and ".join(repr(p) for p in self.plugins)
        super().__init__(
            f"checker {name!r} is registered by both {who}; block one of them "
            "(GRADELOOP_BLOCK_PLUGINS=<name>) or rename the checker"
        )


class CheckerSignatureError(CheckerError, TypeError):
    """A function registered as a checker cannot be called as ``fn(text, **options)``:
    it takes no positional parameter for the draft, or needs a second positional one.
    Raised when it is registered, never in the middle of a run."""

    def __init__(self, name: str, signature: str) -> None:
        self.name = name
        super().__init__(
            f"checker {name!r} cannot be registered: it is called as fn(text, **options), "
            f"but its signature is {signature}; give it the draft text as its first "
            "positional parameter and options as keyword parameters"
        )


class PluginError(CheckerError):
    """A plugin the user asked for by name cannot be loaded.

    ``plugin`` is the name as given, ``origin`` where it was given (``--plugin``,
    the rubric's ``plugins``, ``GRADELOOP_PLUGINS``).
    """

    def __init__(self, plugin: str, origin: str, why: str, fix: str) -> None:
        self.plugin = plugin
        self.origin = origin
        super().__init__(f"cannot load plugin {plugin!r} (from {origin}): {why}; {fix}")


class InputError(GradeloopError, ValueError):
    """A file or argument the user gave cannot be used."""


class UnusableFileError(InputError):
    """A path gradeloop will not read: not a regular file, or over the size limit.

    ``path`` is the path, ``reason`` what is wrong with it (the limit included,
    when it is the size), ``what`` the kind of file ("rubric", "schema", "draft").
    """

    def __init__(self, path: str | Path, reason: str, *, what: str = "file") -> None:
        self.path = path
        self.reason = reason
        self.what = what
        super().__init__(f"{what} file {str(path)!r} {reason}")


class TranscriptError(InputError):
    """Agent messages that cannot be read as a :class:`~gradeloop.Transcript`.

    ``index`` is the position of the message at fault (None when the whole value
    is wrong, e.g. not a list); ``source`` names where the messages came from (a
    file, a JSONL line, ``drafts[3]``), empty when they were given in code.
    """

    def __init__(self, message: str, *, index: int | None = None, source: str = "") -> None:
        self.index = index
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)


class NotEnoughEvidenceError(InputError):
    """Too few drafts with a verdict for a key to propose a checker for it.

    ``key`` is the key; ``have`` maps ``"drafts"``, ``"met"`` and ``"unmet"`` to what
    the evidence holds and ``more`` to how many more drafts are needed (``more_met``
    and ``more_unmet``: how many of them must have each verdict).
    """

    def __init__(
        self,
        message: str,
        *,
        key: str,
        have: dict[str, int],
        more: int,
        more_met: int = 0,
        more_unmet: int = 0,
    ) -> None:
        self.key = key
        self.have = dict(have)
        self.more = more
        self.more_met = more_met
        self.more_unmet = more_unmet
        super().__init__(message)


class ConfigError(GradeloopError):
    """gradeloop is not configured for what was asked (for example, no model)."""


class JudgeRequiredError(ConfigError):
    """The rubric has judge-filled keys and no judge was given."""

    def __init__(self, keys: Sequence[str], hint: str = "") -> None:
        self.keys = tuple(keys)
        listing = ", ".join(self.keys)
        fix = hint or (
            "pass judge=AnthropicJudge(...) (needs ANTHROPIC_API_KEY), or give these "
            "criteria a checker"
        )
        super().__init__(f"criteria filled by the judge need a judge: {listing}; {fix}")


StopReason = Literal["refusal", "max_tokens", "no_text"]


class NotAnAnswer(GradeloopError, RuntimeError):
    """A model reply stopped for a reason that is not a finished answer.

    ``reason`` is ``"refusal"``, ``"max_tokens"`` or ``"no_text"``; the message
    contains ``declined``, ``max_tokens`` or ``no text block`` respectively.
    ``text`` is what the model wrote before it was cut off (``max_tokens``), when it
    wrote anything: never an answer, but it shows why (a small model echoing the
    prompt, or going round in circles).
    """

    def __init__(
        self,
        message: str,
        *,
        reason: StopReason,
        stop_details: Any = None,
        text: str | None = None,
    ) -> None:
        self.reason = reason
        self.stop_details = stop_details
        self.text = text
        super().__init__(message)


JudgeFailure = Literal["refusal", "max_tokens", "no_text", "invalid", "api_error", "no_quorum"]


class JudgeError(GradeloopError):
    """The judge could not produce a usable verdict. A judge error is never a pass.

    ``reason`` is one of ``"refusal"``, ``"max_tokens"``, ``"no_text"``,
    ``"invalid"`` (the reply did not validate against the rubric's schema),
    ``"api_error"`` (the API still failed after the client's own retries) or
    ``"no_quorum"`` (too few members of a :class:`~gradeloop.judging.Jury` answered).
    ``usage`` holds the tokens the failed attempts cost, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: JudgeFailure,
        attempts: int = 1,
        usage: Any = None,
    ) -> None:
        self.reason = reason
        self.attempts = attempts
        self.usage = usage
        # an API error can quote the credential it refused: never carry it on
        super().__init__(scrub_error(message))


class BatchError(GradeloopError):
    """A Message Batches job cannot be submitted, found or collected (yet).

    ``job_id`` names the job when there is one; the message says what to do next
    (wait, check its status, or resubmit).
    """

    def __init__(self, message: str, *, job_id: str | None = None) -> None:
        self.job_id = job_id
        super().__init__(message)


class HistoryError(GradeloopError):
    """The history store cannot be opened, migrated, read or written."""


class LoopNotFoundError(HistoryError, LookupError):
    """No loop with that id is in the history store."""

    def __str__(self) -> str:
        return str(self.args[0])
