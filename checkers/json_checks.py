"""JSON checks: ``json_valid`` (the draft parses) and ``json_schema`` (it validates).

Both read either the whole draft or, with ``block = true``, the first fenced
```` ```json ```` block in it. ``json_schema`` needs the optional ``jsonschema``
package (``pip install 'gradeloop[jsonschema]'``); a rubric that uses it without
the package, or with a schema that is itself invalid, fails when it loads.
Remote ``$ref`` targets are never fetched.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from gradeloop import CheckResult
from gradeloop.errors import UnusableFileError
from gradeloop.grading import RubricPath, read_user_file

from ._options import one_of_required
from .markdown._lines import first_block, quote, split_lines

INSTALL_HINT = "pip install 'gradeloop[jsonschema]'"
MAX_VIOLATIONS = 10
#: The largest schema_file read (a device such as /dev/zero is refused outright).
SCHEMA_LIMIT = 16 * 1024 * 1024
JSON_LANGS = ("json",)


# -- reading the draft ------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (write null or a number)")


def _payload(text: str, block: bool) -> tuple[str, int, str] | str:
    """(the JSON text, its first line's number - 1, what it is called) or a complaint."""
    if not block:
        return text, 0, "the draft"
    fence = first_block(text, JSON_LANGS)
    if fence is None:
        return "no ```json block found in the draft; put the JSON in a fenced ```json block"
    label = f"the ```json block on line {fence.line}"
    if not fence.closed:
        return f"{label} is never closed; end it with ```"
    return fence.source, fence.line, label


def parse(text: str, block: bool) -> tuple[bool, Any, list[str]]:
    """``(ok, value, issues)`` for the draft's JSON (or its first ```json block)."""
    got = _payload(text, block)
    if isinstance(got, str):
        return False, None, [got]
    payload, offset, label = got
    if not payload.strip():
        return False, None, [f"{label} is empty; it must be a JSON document"]
    try:
        return True, json.loads(payload, parse_constant=_no_constant), []
    except json.JSONDecodeError as exc:
        line = split_lines(payload)[exc.lineno - 1] if exc.lineno >= 1 else ""
        issue = (
            f"{label} is not valid JSON: {exc.msg} at line {exc.lineno + offset}, "
            f"column {exc.colno}: {quote(line)}"
        )
        if not block and payload.lstrip().startswith(("```", "~~~")):
            issue += "; the draft is a fenced block: return bare JSON, or set block = true"
        return False, None, [issue]
    except RecursionError:
        return False, None, [f"{label} is nested too deeply to read as JSON"]
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        return False, None, [f"{label} is not valid JSON: {exc}"]


def json_valid(text: str, *, block: bool = False) -> CheckResult:
    """The draft is valid JSON (``block=true``: its first fenced ```json block is)."""
    ok, _, issues = parse(text, block)
    return CheckResult(ok, issues)


# -- schemas -----------------------------------------------------------------------------


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:
        raise ValueError(
            f"the json_schema checker needs the jsonschema package: {INSTALL_HINT}"
        ) from None
    return jsonschema


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable JSON Schema, or None when it is."""
    try:
        js = _jsonschema()
    except ValueError as exc:
        return str(exc)
    if not isinstance(schema, dict):
        return f"a JSON Schema must be an object, not {type(schema).__name__}"
    dialect = schema.get("$schema")
    if dialect is not None and (
        not isinstance(dialect, str) or js.validators.validator_for(schema, default=None) is None
    ):
        return (
            f"unknown $schema {dialect!r}; use a published draft "
            "(e.g. https://json-schema.org/draft/2020-12/schema) or leave $schema out"
        )
    cls = js.validators.validator_for(schema, default=js.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except js.SchemaError as exc:
        return f"the schema is not a valid JSON Schema: {exc.message} at {exc.json_path}"
    except Exception as exc:  # at load, anything but a ValueError would escape as a crash
        return f"the schema cannot be used: {type(exc).__name__}: {exc}"
    return None


def _inline_ok(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if schema is not None and (problem := schema_problem(schema)) is not None:
        raise ValueError(problem)
    return schema


def read_schema_file(path: str) -> tuple[Any, str | None]:
    """``(schema, None)`` from a JSON file, or ``(None, why not)``."""
    where = Path(path).expanduser()
    try:
        text = read_user_file(where, what="schema", limit=SCHEMA_LIMIT).decode("utf-8")
        schema = json.loads(text)
    except UnusableFileError as exc:  # a device such as /dev/zero, or too big
        return None, str(exc)
    except RecursionError:
        return None, f"schema file {str(where)!r} is nested too deeply to read"
    except FileNotFoundError:
        return None, (
            f"schema file {str(where)!r} not found (a relative schema_file is read from "
            "the rubric file's folder)"
        )
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"schema file {str(where)!r} cannot be read: {exc}"
    except ValueError as exc:
        return None, f"schema file {str(where)!r} is not valid JSON: {exc}"
    return schema, schema_problem(schema)


def _file_ok(path: str | None) -> str | None:
    if path is None:
        return None
    _, problem = read_schema_file(path)
    if problem is not None:
        raise ValueError(problem)
    return path


InlineSchema = Annotated[dict[str, Any] | None, AfterValidator(_inline_ok)]
# RubricPath resolves a relative path against the rubric file's folder at load and
# keeps the absolute path, so a later change of directory cannot swap the file.
SchemaFile = Annotated[
    RubricPath,
    Field(validate_default=True),
    AfterValidator(_file_ok),
    one_of_required(("inline_schema", "schema_file"), exactly_one=True),
]


def _violations(js: Any, errors: list[Any]) -> list[str]:
    issues = []
    for err in errors[:MAX_VIOLATIONS]:
        issue = f"at {err.json_path}: {_short(err.message)}"
        if err.context:
            best = js.exceptions.best_match(err.context)
            issue += f" (closest: {_short(best.message)} at {best.json_path})"
        issues.append(issue)
    if len(errors) > MAX_VIOLATIONS:
        issues.append(f"... and {len(errors) - MAX_VIOLATIONS} more schema violations")
    return issues


def _short(message: str) -> str:
    return message if len(message) <= 160 else message[:159] + "…"


def _validate(schema: dict[str, Any], value: Any, formats: bool) -> list[str]:
    import referencing
    import referencing.exceptions

    js = _jsonschema()
    cls = js.validators.validator_for(schema, default=js.Draft202012Validator)
    # an empty registry: a $ref to a URL fails instead of being downloaded
    validator = cls(
        schema,
        registry=referencing.Registry(),
        format_checker=cls.FORMAT_CHECKER if formats else None,
    )
    try:
        return _violations(js, list(validator.iter_errors(value)))
    except referencing.exceptions.Unresolvable as exc:
        return [
            f"the schema has a $ref that cannot be resolved ({exc}); inline the "
            "referenced schema (remote schemas are never fetched)"
        ]
    except RecursionError:
        return ["the JSON is nested too deeply to validate"]
    except Exception as exc:  # a schema the metaschema allows can still break a validator
        return [f"the schema could not be applied: {type(exc).__name__}: {exc}"]


def json_schema(
    text: str,
    *,
    inline_schema: InlineSchema = None,
    schema_file: SchemaFile = None,
    block: bool = False,
    formats: bool = True,
) -> CheckResult:
    """The draft is JSON that validates against a JSON Schema.

    Give the schema inline (``inline_schema``) or as a path (``schema_file``,
    relative to the rubric file's folder). ``block=true`` reads the first fenced
    ```json block; ``formats=false`` stops checking ``format`` keywords.
    """
    if (inline_schema is None) == (schema_file is None):
        return CheckResult(
            False, ["checker 'json_schema' needs exactly one of: inline_schema, schema_file"]
        )
    if inline_schema is not None:
        schema: Any = inline_schema
        problem = schema_problem(schema)
    else:
        schema, problem = read_schema_file(str(schema_file))
    if problem is not None:
        return CheckResult(False, [problem])
    ok, value, issues = parse(text, block)
    if not ok:
        return CheckResult(False, issues)
    issues = _validate(schema, value, formats)
    return CheckResult(not issues, issues)


CHECKERS: dict[str, Callable[..., Any]] = {
    "json_valid": json_valid,
    "json_schema": json_schema,
}
"""The checkers this module contributes, by registry name."""
