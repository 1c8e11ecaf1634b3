"""Writing R2: the input rubric with the winner as one key's shadow checker.

Everything else in the file stays as the user wrote it: a TOML rubric is edited with
tomlkit (comments, key order, quoting and blank lines kept) and gains, in the key's
table, ``shadow = "<checker>"`` and ``shadow_options = { ... }`` (replacing a shadow
it had); a JSON rubric keeps its keys in their order. The input rubric is never the
output, and the new file must load as a rubric - as the input loads, its plugins from
the input's folder - before it replaces anything; it is written to load the same
plugins from its own folder (:func:`~._rubric_write.place_rubric`).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..grading._registry import Registry
from ._rubric_write import place_rubric

__all__ = ["check_target", "write_shadow"]


def check_target(source: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """Refuse an ``out`` that is the input rubric or of another format (before any work)."""
    src, dst = Path(source), Path(out)
    if dst.exists() and (dst.resolve() == src.resolve() or os.path.samefile(src, dst)):
        raise InputError(
            f"--out {out} is the input rubric; propose never overwrites it: give a new path "
            "and review the change before replacing the rubric"
        )
    if src.suffix.lower() != dst.suffix.lower():
        raise InputError(
            f"--out {out} must end in {src.suffix or '.toml'} like the input rubric {source}: "
            "it is written in the same format"
        )
    if not dst.parent.is_dir():
        raise InputError(f"--out {out}: the folder {dst.parent} does not exist")


def _toml(text: str, key: str, checker: str, options: Mapping[str, Any]) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    for table in doc.get("criteria") or []:
        if table.get("key") != key:
            continue
        table["shadow"] = checker
        if options:
            # written as the project's rubrics write them: { name = value, ... }
            body = ", ".join(
                f"{tomlkit.key(k).as_string()} = {tomlkit.item(v).as_string()}"
                for k, v in _plain(options).items()
            )
            table["shadow_options"] = tomlkit.parse(f"v = {{ {body} }}\n")["v"]
        elif "shadow_options" in table:
            del table["shadow_options"]
    return tomlkit.dumps(doc)


def _json(text: str, key: str, checker: str, options: Mapping[str, Any]) -> str:
    data = json.loads(text)
    for c in data.get("criteria") or []:
        if isinstance(c, dict) and c.get("key") == key:
            c["shadow"] = checker
            if options:
                c["shadow_options"] = _plain(options)
            else:
                c.pop("shadow_options", None)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_shadow(
    source: str | os.PathLike[str],
    out: str | os.PathLike[str],
    key: str,
    checker: str,
    options: Mapping[str, Any],
    *,
    registry: Registry | None = None,
) -> Path:
    """Write ``source`` to ``out`` with ``checker`` and ``options`` as ``key``'s shadow;
    returns ``out``. :class:`InputError` when ``out`` is ``source``."""
    check_target(source, out)
    src, dst = Path(source), Path(out)
    text = src.read_text(encoding="utf-8")
    if src.suffix.lower() == ".json":
        new = _json(text, key, checker, options)
    else:
        new = _toml(text, key, checker, options)
    try:
        found = tomllib.loads(new) if src.suffix.lower() != ".json" else json.loads(new)
        criteria = [c for c in found.get("criteria") or [] if isinstance(c, dict)]
    except ValueError:
        criteria = []
    if not any(c.get("key") == key and c.get("shadow") == checker for c in criteria):
        raise InputError(f"{source}: criterion {key!r} was not found to write its shadow")
    place_rubric(source, out, new, registry=registry)
    return dst


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
