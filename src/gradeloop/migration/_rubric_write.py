"""Writing a rubric with some criteria's descriptions and examples replaced, keeping
everything else of the file as the user wrote it.

A TOML rubric is edited with tomlkit, which keeps comments, key order, quoting and
blank lines: only the changed criteria's ``description`` and ``examples`` are new.
A JSON rubric is rewritten with its own keys in their order (JSON has no comments to
keep). The input file is never the output: a rubric is the user's source, and an
``align`` result is a proposal to review.

:func:`place_rubric` (``align``'s and ``propose``'s) puts the new text in place. It is
checked to load as a rubric *as the input does*: its ``plugins`` resolved from the
input rubric's folder, so a ``mychecks.py`` planted in ``--out``'s folder never runs.
It is written so that it loads the same plugins as the input from its own folder
(relative plugin paths rewritten to point at the same files, and a plugin module that
lives in the input's folder named by its path), through a temporary file and an
atomic rename; a failure names ``--out``, never the temporary file.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, RubricError
from ..grading._plugins import is_path, resolve_spec
from ..grading._registry import Registry
from ..grading._rubric import Rubric

__all__ = ["check_target", "place_rubric", "write_rubric"]

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
    src = Path(source)
    text = src.read_text(encoding="utf-8")
    new = _json(text, changes) if src.suffix.lower() == ".json" else _toml(text, changes)
    place_rubric(source, out, new, registry=registry)
    return Path(out)


def place_rubric(
    source: str | os.PathLike[str],
    out: str | os.PathLike[str],
    text: str,
    *,
    registry: Registry | None = None,
) -> Rubric:
    """Write ``text`` (``source`` edited) to ``out``: checked to load as ``source``
    loads (its plugins from ``source``'s folder), written with its plugins pointing at
    the same files from ``out``'s folder, atomically. Returns the rubric it loads as;
    :class:`InputError` naming ``out`` when it does not load or cannot be written."""
    src, dst = Path(source), Path(out)
    json_format = src.suffix.lower() == ".json"
    try:
        data = json.loads(text) if json_format else tomllib.loads(text)
        rubric = Rubric.from_dict(data, path=src, registry=registry)
    except (RubricError, ValueError) as exc:
        raise InputError(f"--out {out}: the rubric to write does not load: {exc}") from None
    moved = _repointed(text, data, src, dst, json_format=json_format)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=dst.suffix, dir=dst.parent)
    except OSError as exc:
        raise InputError(f"cannot write --out {out}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(moved)
        os.replace(tmp, dst)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write --out {out}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return rubric


def _repointed(
    text: str, data: Mapping[str, Any], src: Path, dst: Path, *, json_format: bool
) -> str:
    """``text`` with its ``plugins`` naming, from ``dst``'s folder, the files they name
    from ``src``'s: unchanged when both are in one folder or nothing moves."""
    plugins = data.get("plugins")
    home, there = src.resolve().parent, dst.resolve().parent
    if not isinstance(plugins, list) or home == there:
        return text
    moved = [_moved(str(spec), home, there) for spec in plugins]
    if moved == plugins:
        return text
    if json_format:
        out = json.loads(text)
        out["plugins"] = moved
        return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
    import tomlkit

    doc = tomlkit.parse(text)
    doc["plugins"] = moved
    return tomlkit.dumps(doc)


def _moved(spec: str, home: Path, there: Path) -> str:
    """``spec`` (a plugin as the rubric in ``home`` names it) as a rubric in ``there``
    must name it to load the same file: a path made relative to ``there`` (absolute
    across drives); a module that is a file or package in ``home`` by its path (a
    module name is looked for in the rubric's own folder first); any other module, as
    it is."""
    if is_path(spec):
        target = Path(resolve_spec(spec, home))
    else:
        top = home / spec.split(".")[0]
        if not (top.with_suffix(".py").is_file() or (top / "__init__.py").is_file()):
            return spec
        parts = spec.split(".")
        package = home.joinpath(*parts)
        target = package / "__init__.py" if package.is_dir() else package.with_suffix(".py")
    try:
        relative = Path(os.path.relpath(target, there)).as_posix()
    except ValueError:  # another drive: only an absolute path names it
        return str(target)
    return relative if relative.startswith("../") else f"./{relative}"
