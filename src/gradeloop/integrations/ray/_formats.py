"""A batch's forms: what GradeBatch reads from a ``pyarrow.Table``, a
``pandas.DataFrame`` or a dict of columns (numpy arrays or lists), and how it hands the
same form back with the added columns."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...grading._rubric import Rubric
from ._rows import COLUMNS, arrow_schema, shadow_keys

__all__ = ["attach", "cell_draft", "cell_transcript", "read"]


def cell_draft(value: Any, column: str) -> str | list[Any]:
    """A cell of the draft column: text, or a transcript's messages."""
    if isinstance(value, str):
        return value
    listed = _listed(value)
    if isinstance(listed, list):
        return listed
    kind = type(value).__name__
    raise TypeError(f"column {column!r}: a draft is text or a list of message dicts, not {kind}")


def cell_transcript(value: Any, column: str) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"column {column!r}: a transcript is JSON text: {exc}") from None
    listed = _listed(value)
    if isinstance(listed, dict):  # {"messages": [...]}, as a transcript file holds
        listed = listed.get("messages")
    if not isinstance(listed, list):
        raise TypeError(f"column {column!r}: a transcript is a list of messages")
    return listed


def _listed(value: Any) -> Any:
    """numpy arrays (Ray's numpy batches hold list cells as arrays) as lists, deeply."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [_listed(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _listed(v) for k, v in value.items()}
    return value


def read(batch: Any, wanted: Sequence[str]) -> tuple[dict[str, list[Any]], int]:
    """The wanted columns the batch has, as lists, and its row count."""
    names = _names(batch)
    columns: dict[str, list[Any]] = {}
    for name in wanted:
        if name in names:
            columns[name] = _column(batch, name)
    n = _length(batch)
    return columns, n


def _names(batch: Any) -> list[str]:
    if isinstance(batch, Mapping):
        return list(batch)
    if hasattr(batch, "column_names"):  # pyarrow.Table
        return list(batch.column_names)
    if hasattr(batch, "columns"):  # pandas.DataFrame
        return [str(c) for c in batch.columns]
    raise TypeError(
        f"GradeBatch takes a pyarrow.Table, a pandas.DataFrame or a dict of columns, "
        f"not {type(batch).__name__}"
    )


def _column(batch: Any, name: str) -> list[Any]:
    if isinstance(batch, Mapping):
        column = batch[name]
        return column.tolist() if hasattr(column, "tolist") else list(column)
    if hasattr(batch, "column_names"):
        return list(batch.column(name).to_pylist())
    return list(batch[name].tolist())


def _length(batch: Any) -> int:
    if isinstance(batch, Mapping):
        lengths = {len(v) for v in batch.values()}
        if len(lengths) > 1:
            raise ValueError(f"the batch's columns differ in length: {sorted(lengths)}")
        return lengths.pop() if lengths else 0
    if hasattr(batch, "num_rows"):
        return int(batch.num_rows)
    return len(batch)


def attach(batch: Any, rows: Sequence[Mapping[str, Any]], rubric: Rubric) -> Any:
    """The batch with the added columns, in its own form."""
    names = [*COLUMNS, *(("shadows",) if shadow_keys(rubric) else ())]
    values = {name: [row.get(name) for row in rows] for name in names}
    if isinstance(batch, Mapping):
        out = dict(batch)
        out.update(_as_arrays(values, batch))
        return out
    if hasattr(batch, "column_names"):
        import pyarrow as pa

        out = batch
        for field in arrow_schema(rubric):
            if field.name in out.column_names:
                out = out.drop_columns([field.name])
            out = out.append_column(field, pa.array(values[field.name], type=field.type))
        return out
    out = batch.copy()
    for name in names:
        out[name] = values[name]
    return out


def _as_arrays(values: Mapping[str, list[Any]], batch: Mapping[str, Any]) -> dict[str, Any]:
    """Numpy arrays when the batch's columns are (Ray's numpy batches), else lists."""
    if not any(hasattr(v, "dtype") for v in batch.values()):
        return dict(values)
    import numpy as np

    out: dict[str, Any] = {}
    for name, column in values.items():
        array: Any = np.empty(len(column), dtype=object)
        array[:] = column
        if name in ("accepted", "judge_cached", "reused"):
            array = array.astype(bool)
        elif name in ("judge_requests", "input_tokens", "output_tokens"):
            array = array.astype(np.int64)
        out[name] = array
    return out
