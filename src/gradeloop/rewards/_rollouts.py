"""Rollouts as the trainers hand them over, read as drafts to grade.

TRL calls a reward function with ``prompts`` and ``completions`` (strings in the
standard format; message lists in the conversational one) and every dataset column as
a keyword (one value per completion). verl calls ``compute_score`` once per rollout with
the decoded response, the row's ground truth and its ``extra_info``. Both become
:class:`Rollout` s: the task, the draft (text, or the agent's :class:`~gradeloop.Transcript`),
the reference and the metadata that reach the checkers (``CheckContext``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..grading import Transcript

__all__ = ["TRL_KWARGS", "Rollout", "dedup_key", "trl_rollouts", "verl_rollout"]

#: What TRL passes besides the dataset's columns (trl/trainer/grpo_trainer.py,
#: ``_calculate_rewards``): never grading input.
TRL_KWARGS = frozenset(
    {"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"}
)
_CONTEXT_COLUMNS = ("task", "reference", "metadata")
_SCALARS = (str, int, float, bool, type(None))


class Rollout(NamedTuple):
    """One completion to grade, with what its checkers may read."""

    task: str
    draft: str | Transcript
    reference: str | Transcript | None = None
    metadata: Mapping[str, Any] | None = None


def dedup_key(r: Rollout) -> tuple[Any, ...]:
    """Equal for rollouts that grade the same: identical task, draft, reference and metadata."""
    return (r.task, _text_key(r.draft), _text_key(r.reference), _meta_key(r.metadata))


def _text_key(value: str | Transcript | None) -> Any:
    if value is None or isinstance(value, str):
        return value
    return ("transcript", json.dumps(value.to_json(), sort_keys=True, default=str))


def _meta_key(metadata: Mapping[str, Any] | None) -> str | None:
    if not metadata:
        return None
    return json.dumps(metadata, sort_keys=True, default=str)


def trl_rollouts(
    prompts: Sequence[Any], completions: Sequence[Any], columns: Mapping[str, Any]
) -> list[Rollout]:
    """TRL's arguments as rollouts, in order.

    The task is the ``task`` column when the dataset has one, else the prompt (its
    messages' text, for a conversational prompt); ``reference`` and ``metadata``
    columns reach the checkers as such, and every other column whose value is a
    string, a number, a bool or None joins the metadata under its own name (the
    ``metadata`` column's own entries win)."""
    n = len(completions)
    if len(prompts) != n:
        raise ValueError(
            f"{len(prompts)} prompts for {n} completions; TRL gives one per completion"
        )
    lists = {
        name: _column(name, values, n) for name, values in columns.items() if name not in TRL_KWARGS
    }
    tasks, references, metas = (lists.pop(name, None) for name in _CONTEXT_COLUMNS)
    extra = {name: values for name, values in lists.items() if values is not None}
    out = []
    for i in range(n):
        task = _text(tasks[i], "task", i) if tasks is not None else prompt_text(prompts[i])
        reference = _reference(references[i], i) if references is not None else None
        meta = {k: v[i] for k, v in extra.items() if isinstance(v[i], _SCALARS)}
        if metas is not None and metas[i] is not None:
            if not isinstance(metas[i], Mapping):
                raise ValueError(
                    f"the 'metadata' column of completion {i} is {type(metas[i]).__name__}; "
                    "give a mapping (a dict of fields the checkers read)"
                )
            meta.update(metas[i])
        out.append(Rollout(task, completion_draft(completions[i], i), reference, meta or None))
    return out


def _column(name: str, values: Any, n: int) -> list[Any] | None:
    """A dataset column's values, one per completion (None for anything else TRL sends)."""
    if isinstance(values, list | tuple) and len(values) == n:
        return list(values)
    if name in _CONTEXT_COLUMNS:
        raise ValueError(
            f"the {name!r} column has no value per completion ({type(values).__name__}); "
            "TRL repeats each dataset column once per completion"
        )
    return None


def _text(value: Any, column: str, i: int) -> str:
    if not isinstance(value, str):
        raise ValueError(
            f"the {column!r} column of completion {i} is {type(value).__name__}; give text"
        )
    return value


def _reference(value: Any, i: int) -> str | Transcript | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Sequence | Mapping):
        return _transcript(value, f"the 'reference' column of completion {i}")
    raise ValueError(
        f"the 'reference' column of completion {i} is {type(value).__name__}; "
        "give text or a list of messages"
    )


def _transcript(value: Any, what: str) -> Transcript:
    if isinstance(value, Mapping):
        return Transcript.from_json(value, source=what)
    return Transcript.from_messages(value, source=what)


def completion_draft(completion: Any, i: int) -> str | Transcript:
    """A completion as a draft: the text (standard format, or one plain assistant
    message), else the messages as a transcript (an agent's tool calls and results)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and len(completion) == 1:
        only = completion[0]
        if (
            isinstance(only, Mapping)
            and only.get("role") == "assistant"
            and isinstance(only.get("content"), str)
            and not only.get("tool_calls")
        ):
            return str(only["content"])
    if isinstance(completion, Sequence | Mapping):
        return _transcript(completion, f"completions[{i}]")
    raise ValueError(
        f"completions[{i}] is {type(completion).__name__}: TRL gives text (standard format) "
        "or a list of messages (conversational)"
    )


def prompt_text(prompt: Any) -> str:
    """The task a prompt states: the text itself, or its messages' text (one message:
    its content; several: ``role: content`` lines)."""
    if isinstance(prompt, str):
        return prompt
    if not isinstance(prompt, Sequence):
        return str(prompt)
    parts = [
        (m.get("role", ""), _content_text(m.get("content")))
        for m in prompt
        if isinstance(m, Mapping)
    ]
    if len(parts) == 1:
        return parts[0][1]
    return "\n".join(f"{role}: {text}" for role, text in parts)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # content blocks: their text, images left out
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and "text" in b
        )
    return "" if content is None else str(content)


def verl_rollout(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None
) -> Rollout:
    """verl's arguments as a rollout.

    verl gives the decoded response and not the prompt: the task is ``extra_info``'s
    ``task`` (or ``question``, as verl's example datasets name it), else empty. A text
    ground truth is the reference (a non-text one goes into the metadata as
    ``ground_truth``); ``data_source`` and every scalar entry of ``extra_info`` join the
    metadata, and an ``extra_info["metadata"]`` mapping is merged in."""
    info = dict(extra_info or {})
    task = info.get("task", info.get("question", ""))
    reference = ground_truth if isinstance(ground_truth, str) else info.get("reference")
    meta: dict[str, Any] = {k: v for k, v in info.items() if isinstance(v, _SCALARS)}
    meta["data_source"] = data_source if isinstance(data_source, _SCALARS) else str(data_source)
    if not isinstance(ground_truth, str) and ground_truth is not None:
        meta["ground_truth"] = ground_truth
    if isinstance(info.get("metadata"), Mapping):
        meta.update(info["metadata"])
    if reference is not None and not isinstance(reference, str):
        reference = _transcript(reference, "extra_info['reference']")
    return Rollout(task if isinstance(task, str) else str(task), solution_str, reference, meta)
