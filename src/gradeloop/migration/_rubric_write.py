"""Writing a rubric with some criteria's descriptions and examples replaced, keeping
everything else of the file as the user wrote it.

A TOML rubric is edited with tomlkit, which keeps comments, key order, quoting and
blank lines: only the changed criteria's ``description`` and ``examples`` are new.
A JSON rubric is rewritten with its own keys in their order (JSON has no comments to
keep). The input file is never the output: a rubric is the user's source, and an
``align`` result is a proposal to review. The new file is checked to load as a
rubric before it is put in place, through a temporary file and an atomic rename.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..grading._registry import Registry
from ..grading._rubric import Rubric

__all__ = ["check_target", "write_rubric"]

Change = tuple[str, Sequence[Mapping[str, Any]]]  # (description, examples)


def _toml(text: str, changes: Mapping[str, Change]) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    for table in doc.get("criteria") or []:
        change = changes.get(str(table.get("key")))
        if change is None:
            continue
        description, examples = change
        table["description"] = description
        if examples:
            array = tomlkit.array()
            for example in examples:
                inline = tomlkit.inline_table()
                inline.update({k: v for k, v in example.items() if v is not None})
                array.append(inline)
            array.multiline(True)
            table["examples"] = array
        elif "examples" in table:
            del table["examples"]
    return tomlkit.dumps(doc)


def _json(text: str, changes: Mapping[str, Change]) -> str:
    data = json.loads(text)
    for c in data.get("criteria") or []:
        change = changes.get(str(c.get("key"))) if isinstance(c, dict) else None
        if change is None:
            continue
        c["description"], examples = change[0], [dict(e) for e in change[1]]
        if examples:
            c["examples"] = examples
        else:
            c.pop("examples", None)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def check_target(source: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """Refuse an ``out`` that is the input rubric, or of another format than it (before
    any work is paid for)."""
    src, dst = Path(source), Path(out)
    if dst.exists() and dst.resolve() == src.resolve():
        raise InputError(
            f"--out {out} is the input rubric; align never overwrites it: give a new path "
            "and review the change before replacing the rubric"
        )
    if src.suffix.lower() != dst.suffix.lower():
        raise InputError(
            f"--out {out} must end in {src.suffix or '.toml'} like the input rubric {source}: "
            "it is written in the same format"
        )


def write_rubric(
    source: str | os.PathLike[str],
    out: str | os.PathLike[str],
    changes: Mapping[str, Change],
    *,
    registry: Registry | None = None,
) -> Path:
    """Write ``source`` to ``out`` with each changed key's description and examples
    replaced; returns ``out``. :class:`InputError` when ``out`` is ``source``."""
    check_target(source, out)
    src, dst = Path(source), Path(out)
    text = src.read_text(encoding="utf-8")
    new = _json(text, changes) if src.suffix.lower() == ".json" else _toml(text, changes)
    folder = dst.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=dst.suffix, dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new)
        Rubric.load(tmp, registry=registry)  # what is written must load
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dst
