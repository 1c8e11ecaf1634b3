"""Check results, checker metadata, option validation and the safe call."""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import os
import threading
import typing
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
)

from ..errors import CheckerSignatureError
from ..integrations import telemetry
from ._context import CONTEXT_PARAM, CheckContext

CheckerFn = Callable[..., Any]


@dataclass(frozen=True)
class CheckResult:
    """What a checker says about one draft.

    ``passed`` decides a pass/fail criterion; ``issues`` are specific, actionable
    sentences fed back to the generator; ``score`` (0-10) is optional and decides a
    scored criterion (``score >= threshold``). A checker may also return a bare
    ``bool``, which grading reads as ``CheckResult(passed)``.
    """

    passed: bool
    issues: list[str] = field(default_factory=list)
    score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.passed, bool):
            raise TypeError(f"CheckResult.passed must be a bool, not {type(self.passed).__name__}")
        if self.score is not None:
            _check_score(self.score)


def _check_score(score: object) -> None:
    if isinstance(score, bool) or not (
        isinstance(score, (int, float)) and math.isfinite(score) and 0 <= score <= 10
    ):
        raise ValueError(f"CheckResult.score must be a number from 0 to 10, not {score!r}")


#: What a checker's call comes to once held to the contract (:func:`settled`): a
#: sound ``CheckResult``, or the bare bool a checker may return (no result is built
#: for it: :meth:`~gradeloop.grading.CriterionResult.from_check` reads either).
Answer = CheckResult | bool


@dataclass(frozen=True)
class CheckerInfo:
    """A registered checker: its callable and where it came from."""

    name: str
    fn: CheckerFn
    plugin: str
    distribution: str | None = None
    description: str = ""
    options_model: type[BaseModel] | None = None
    wants_context: bool = False
    bounded: bool = False  # a built-in checker: never watched by checker_timeout

    def validate_options(
        self, options: Mapping[str, Any], *, rubric_dir: str | Path | None = None
    ) -> dict[str, Any]:
        """Check ``options`` against the checker's keyword parameters.

        Returns the validated (and coerced) options. Raises ``ValueError`` with a
        one-line message naming the option and the fix. ``rubric_dir`` is the folder
        of the rubric file the options come from: validators see it as
        ``info.context["rubric_dir"]`` (a :data:`RubricPath` option is resolved
        against it), None when the rubric has no file.
        """
        if self.options_model is None:
            return dict(options)
        context = {"rubric_dir": None if rubric_dir is None else Path(rubric_dir)}
        try:
            model = self.options_model.model_validate(dict(options), context=context)
        except ValidationError as exc:
            raise ValueError(_describe_option_error(self, exc, options)) from None
        fields = type(model).model_fields
        return {fields[k].alias or k: getattr(model, k) for k in model.model_fields_set}

    def option_names(self) -> list[str]:
        if self.options_model is None:
            return []
        return [f.alias or k for k, f in self.options_model.model_fields.items()]


# The folders file options may name, while criteria from an untrusted source (an MCP
# client) are read; None: anywhere. A context variable, so the restriction reaches the
# option validators without a parameter through every rubric constructor.
_FILE_DIRS: contextvars.ContextVar[tuple[Path, ...] | None] = contextvars.ContextVar(
    "gradeloop_file_dirs", default=None
)


@contextlib.contextmanager
def file_options_within(dirs: Sequence[str | os.PathLike[str]]) -> Iterator[None]:
    """While inside, a :data:`RubricPath` option must name a path inside one of ``dirs``
    (symbolic links followed; a relative path is read from the first of them); with
    no ``dirs``, every file option is refused. Checked before the file is read, so a
    refusal says nothing about what exists."""
    token = _FILE_DIRS.set(tuple(Path(d).expanduser().resolve() for d in dirs))
    try:
        yield
    finally:
        _FILE_DIRS.reset(token)


def _resolve_from_rubric(value: str | None, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    base = (info.context or {}).get("rubric_dir")
    allowed = _FILE_DIRS.get()
    if allowed and base is None:
        base = allowed[0]
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    resolved = path.resolve()
    if allowed is not None and not any(resolved.is_relative_to(d) for d in allowed):
        if not allowed:
            raise ValueError(
                "file options are refused here (criteria from an MCP client); start the "
                "server with --allow-dir DIR to allow files inside DIR"
            )
        raise ValueError(
            "the file must be inside "
            + " or ".join(repr(str(d)) for d in allowed)
            + " (the folders the server was started with, --allow-dir)"
        )
    return str(resolved)


RubricPath = Annotated[str | None, AfterValidator(_resolve_from_rubric)]
"""A checker option that names a file: a relative path is read from the rubric file's
folder (from the working directory when the rubric has no file), and the option
arrives as an absolute path, so a later change of directory does not change it."""


def _describe_option_error(
    info: CheckerInfo, exc: ValidationError, given: Mapping[str, Any]
) -> str:
    errors = exc.errors()
    # a misspelt option also trips the checks that needed it; the typo is the real fault
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = ".".join(str(p) for p in err["loc"]) or "options"
    known = ", ".join(info.option_names()) or "none"
    if err["type"] == "extra_forbidden":
        return f"unknown option {loc!r} for checker {info.name!r}; its options are: {known}"
    if err["type"] == "missing":
        return f"checker {info.name!r} needs option {loc!r}; add it to this criterion's options"
    msg = str(err["msg"]).removeprefix("Value error, ")
    top = str(err["loc"][0]) if err["loc"] else ""
    if top not in given:  # a check on the options together (none of several was set):
        return f"checker {info.name!r} options: {msg}"  # no single option is to blame
    return f"option {loc!r} of checker {info.name!r}: {msg} (got {err.get('input')!r})"


def check_signature(name: str, fn: CheckerFn) -> None:
    """Refuse a checker that cannot be called as ``fn(text, **options)``: no positional
    parameter for the draft, or a second one only a position can fill. A signature
    that cannot be read (some builtins) is let through."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    takes_text = bool(params) and (
        params[0].kind in positional or params[0].kind is inspect.Parameter.VAR_POSITIONAL
    )
    needs_more = any(
        p.kind is inspect.Parameter.POSITIONAL_ONLY and p.default is p.empty for p in params[1:]
    )
    if not takes_text or needs_more:
        raise CheckerSignatureError(name, f"{getattr(fn, '__name__', 'fn')}{sig}")


# Built models by function and name: a registry loads its plugins again whenever it is
# made anew (every CLI command, every MCP server), and building the model is most of it.
_MODELS: weakref.WeakKeyDictionary[Any, dict[str, type[BaseModel] | None]] = (
    weakref.WeakKeyDictionary()
)
_MODELS_LOCK = threading.Lock()


def options_model_for(name: str, fn: CheckerFn) -> type[BaseModel] | None:
    """A strict pydantic model of ``fn``'s options, built from its signature.

    The first positional parameter is the draft text; every other parameter is an
    option. A checker that takes ``**kwargs`` accepts any option (returns None).
    Built once per function and name while the function lives.
    """
    try:
        with _MODELS_LOCK:
            known = _MODELS.setdefault(fn, {})
    except TypeError:  # not weakly referenceable or not hashable: built every time
        return _build_options_model(name, fn)
    if name not in known:
        known[name] = _build_options_model(name, fn)
    return known[name]


def _build_options_model(name: str, fn: CheckerFn) -> type[BaseModel] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    try:
        hints = typing.get_type_hints(fn, include_extras=True)  # keep Annotated validators
    except Exception:
        hints = {}
    fields: dict[str, Any] = {}
    for p in params[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or p.name == CONTEXT_PARAM:
            continue  # the context is gradeloop's to pass, never a rubric option
        annotation = hints.get(p.name, Any)
        default = ... if p.default is p.empty else p.default
        # an option named like a BaseModel attribute (schema, json, copy...) would
        # shadow it; keep the user-facing name as the alias
        field_name = f"{p.name}_" if hasattr(BaseModel, p.name) else p.name
        fields[field_name] = (annotation, Field(default, alias=p.name))
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{name}_options", __config__=config, **fields)
    return model


@telemetry.traced_checker
def run_checker(
    info: CheckerInfo,
    text: str,
    options: Mapping[str, Any],
    context: CheckContext | None = None,
) -> Answer:
    """Call a checker and never let it crash a run or pass by accident.

    A checker that declares ``context`` gets ``context`` (an empty one when none is
    given); any other checker is called with the text and its options only. A
    checker that raises, or returns something that is neither a ``CheckResult``
    nor a ``bool``, yields a failed result whose issue carries the error; a bool
    comes back as it is. With tracing on, the call is a ``gradeloop.check`` span.
    """
    return call_checker(info, text, options, context)


def call_checker(
    info: CheckerInfo,
    text: str,
    options: Mapping[str, Any],
    context: CheckContext | None = None,
) -> Answer:
    """:func:`run_checker` without the span (what grading calls when tracing is off)."""
    try:
        if not info.wants_context:
            raw = info.fn(text, **options)
        elif CONTEXT_PARAM in options:  # only a checker taking **kwargs can be given one
            raw = info.fn(text, **{**options, CONTEXT_PARAM: context or CheckContext()})
        else:
            raw = info.fn(text, **options, context=context or CheckContext())
    except Exception as exc:  # a broken checker is a failed criterion, not a crash
        return checker_raised(info, exc)
    return settled(info, raw)


def checker_raised(info: CheckerInfo, exc: Exception) -> CheckResult:
    """What a checker that raised ``exc`` yields: a failed result that says so."""
    telemetry.record_error(exc)
    return CheckerFailure(
        passed=False, issues=[f"checker {info.name!r} raised {type(exc).__name__}: {exc}"]
    )


def settled(info: CheckerInfo, raw: object) -> Answer:
    """What a checker returned (``raw``), held to what a result must be: a
    ``CheckResult`` whose fields are sound, or a bool; anything else is a failure."""
    if isinstance(raw, CheckResult):
        problem = _problem(raw)  # a subclass can skip CheckResult's own checks
        if problem is None:
            return raw
        return CheckerFailure(
            passed=False,
            issues=[f"checker {info.name!r} returned a {type(raw).__name__} whose {problem}"],
        )
    if isinstance(raw, bool):  # a bare answer: read as it is, nothing to build
        return raw
    return CheckerFailure(
        passed=False,
        issues=[
            f"checker {info.name!r} returned {type(raw).__name__}, expected CheckResult or bool"
        ],
    )


def _problem(raw: CheckResult) -> str | None:
    """What is wrong with ``raw``'s fields (None: nothing); a non-bool ``passed``
    would otherwise reach the verdict."""
    issues = raw.issues
    if not isinstance(issues, (list, tuple)) or (
        issues and not all(isinstance(i, str) for i in issues)
    ):
        return "issues is not a list of strings"
    if type(raw) is CheckResult:  # built through its own checks: passed and score hold
        return None
    # a subclass can skip CheckResult's checks (tuples of types, not ``A | B``: a union
    # would be built on every call)
    if not isinstance(raw.passed, bool):
        return f"passed is {type(raw.passed).__name__}, expected a bool"
    score = raw.score
    if score is not None and (
        isinstance(score, bool)
        or not isinstance(score, (int, float))
        or not (math.isfinite(score) and 0 <= score <= 10)
    ):
        return f"score is {score!r}, expected a number from 0 to 10 or None"
    return None


@dataclass(frozen=True)
class CheckerFailure(CheckResult):
    """A failed result that is the checker's fault (it raised, or returned junk),
    not the draft's: reported with status ``error``."""
