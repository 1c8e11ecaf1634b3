"""The Messages API's structured-output form of a JSON Schema, without the SDK.

:func:`strict_schema` gives what ``anthropic.transform_schema`` gives: every object
closed (``additionalProperties: false``), strings without a supported ``format``
marked ``"text"``, and every keyword the API does not take (integer bounds, say)
moved into the description. The judge's wire schema goes into each request and its
digest, so it is needed to *replay* a recorded reply too; importing the SDK for it
cost seconds of CPU per process (a test run replaying cassettes reaches no model).
A test checks that this gives the SDK's result for every judge schema shape.

Derived from ``anthropic/lib/_parse/_transform.py`` of the anthropic Python SDK
(https://github.com/anthropics/anthropic-sdk-python, release 2.14.0, MIT licence,
Copyright 2023 Anthropic, PBC); rewritten, not copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["strict_schema"]

_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_PLAIN_TYPES = frozenset({"boolean", "integer", "number", "null"})


def _primitive(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` in the form the API accepts for structured output (a new dict)."""
    rest = dict(schema)
    out: dict[str, Any] = {}
    defs = rest.pop("$defs", None)
    if defs is not None:  # before the $ref return: a root $ref keeps its definitions
        out["$defs"] = {name: strict_schema(sub) for name, sub in defs.items()}
    ref = rest.pop("$ref", None)
    if ref is not None:
        out["$ref"] = ref
        return out
    type_ = rest.pop("type", None)
    any_of, one_of, all_of = (
        rest.pop("anyOf", None),
        rest.pop("oneOf", None),
        rest.pop("allOf", None),
    )
    enum = rest.get("enum")
    if isinstance(enum, list) and enum and all(_primitive(v) for v in enum):
        out["enum"] = list(rest.pop("enum"))
    if "const" in rest and _primitive(rest["const"]):
        out["const"] = rest.pop("const")
    literal = "enum" in out or "const" in out
    if literal:
        type_ = None
    if isinstance(any_of, list):
        out["anyOf"] = [strict_schema(v) for v in any_of]
    elif isinstance(one_of, list):
        out["anyOf"] = [strict_schema(v) for v in one_of]
    elif isinstance(all_of, list):
        out["allOf"] = [strict_schema(v) for v in all_of]
    elif not literal:
        if type_ is None:
            raise ValueError(
                "a schema needs a 'type', 'anyOf', 'oneOf' or 'allOf', or a 'const' or a "
                "non-empty 'enum' of strings, numbers, booleans or null"
            )
        out["type"] = type_
    for name in ("description", "title"):
        value = rest.pop(name, None)
        if value is not None:
            out[name] = value
    _by_type(type_, rest, out)
    if rest:  # what the API does not take goes into the description, as a hint
        hint = "{" + ", ".join(f"{key}: {value}" for key, value in rest.items()) + "}"
        description = out.get("description")
        out["description"] = hint if description is None else f"{description}\n\n{hint}"
    return out


def _by_type(type_: Any, rest: dict[str, Any], out: dict[str, Any]) -> None:
    """The keywords of an object, string or array schema (moved from ``rest``)."""
    if type_ == "object":
        properties = rest.pop("properties", {})
        out["properties"] = {key: strict_schema(sub) for key, sub in properties.items()}
        rest.pop("additionalProperties", None)
        out["additionalProperties"] = False
        required = rest.pop("required", None)
        if required is not None:
            out["required"] = list(required) if isinstance(required, list) else required
    elif type_ == "string":
        format_ = rest.pop("format", None)
        if format_ and format_ in _FORMATS:
            out["format"] = format_
        elif format_:
            rest["format"] = format_
    elif type_ == "array":
        items = rest.pop("items", None)
        if items is not None:
            out["items"] = strict_schema(items)
        min_items = rest.pop("minItems", None)
        if min_items in (0, 1):
            out["minItems"] = min_items
        elif min_items is not None:
            rest["minItems"] = min_items
    elif type_ is not None and not (isinstance(type_, str) and type_ in _PLAIN_TYPES):
        raise ValueError(f"unsupported schema type {type_!r}")
