"""OpenAI grader configs as a gradeloop rubric (``gradeloop import-graders``).

The grader types are the ``openai`` SDK's own (``openai.types.graders``, checked against
openai 3.63.0): ``string_check`` (``operation`` eq / ne / like / ilike), ``text_similarity``
(``evaluation_metric``), ``score_model`` (``input`` messages, ``range``), ``label_model``
(``labels``, ``passing_labels``), ``multi`` (``graders``, ``calculate_output``) and
``python``; an eval's testing criteria add ``pass_threshold``
(``openai.types.eval_create_params``). A file holds one grader, a list of them, an eval's
``{"testing_criteria": [...]}`` or a ``{"grader": {...}}`` (reinforcement fine-tuning,
``alpha.graders.run``).

What translates: string_check and text_similarity become code keys (the built-in
``string_check`` and ``text_similarity`` checkers); score_model and label_model become
judge keys (scored 1-10 and pass/fail); a multi grader becomes its graders' keys,
weighted by ``calculate_output`` when that is a weighted sum. What does not is refused,
all of it named in one error: a python grader (it executes code: write a checker plugin
instead), text_similarity's ``cosine`` (embeddings) and ``meteor`` (a thesaurus), a
formula with no weighted-sum reading, and a template gradeloop cannot fill.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..grading._criterion import KEY_PATTERN
from ._formula import FormulaError, weights

__all__ = ["Translation", "import_graders", "translate"]

_ANSWER = re.compile(r"^\{\{\s*sample\.output_text\s*\}\}$")
_ITEM = re.compile(r"^\{\{\s*item\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
_TEMPLATE = re.compile(r"\{\{\s*([^{}]{1,200}?)\s*\}\}")
_METRICS = (
    "fuzzy_match",
    "bleu",
    "gleu",
    "rouge_1",
    "rouge_2",
    "rouge_3",
    "rouge_4",
    "rouge_5",
    "rouge_l",
)
_PLUGIN_ROUTE = (
    "gradeloop never runs a grader's code: write the check as a checker plugin "
    "(docs/plugins.md) and name it in the rubric"
)


@dataclass
class Translation:
    """A rubric (``Rubric.from_dict``'s shape) and notes on what changed in the move."""

    rubric: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    key_notes: dict[str, list[str]] = field(default_factory=dict)


def import_graders(data: Any) -> dict[str, Any]:
    """The rubric equivalent to OpenAI grader configs (parsed JSON), as a dict
    :meth:`Rubric.from_dict` reads; :class:`~gradeloop.errors.InputError` naming every
    grader it cannot translate, and why."""
    return translate(data).rubric


def translate(data: Any, source: str = "the graders") -> Translation:
    """:func:`import_graders`, with notes on what differs (the CLI writes them as comments)."""
    graders = _graders(data, source)
    out = Translation({"criteria": []})
    refusals: list[str] = []
    keys: set[str] = set()
    for g in graders:
        try:
            _one(g, out, keys, alone=len(graders) == 1)
        except _Refused as exc:
            refusals.append(str(exc))
    if refusals:
        raise InputError(
            f"{source}: cannot translate {len(refusals)} grader"
            f"{'s' if len(refusals) > 1 else ''}: " + "; ".join(refusals)
        )
    return out


class _Refused(Exception):
    """One grader that has no gradeloop equivalent; the message names it and says why."""


def _graders(data: Any, source: str) -> list[Mapping[str, Any]]:
    if isinstance(data, Mapping) and "testing_criteria" in data:
        data = data["testing_criteria"]
    elif isinstance(data, Mapping) and isinstance(data.get("grader"), Mapping):
        data = [data["grader"]]
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, Sequence) or isinstance(data, str) or not data:
        raise InputError(
            f"{source}: expected a grader object, a list of them, an eval's "
            '{"testing_criteria": [...]} or {"grader": {...}}'
        )
    for i, g in enumerate(data):
        if not isinstance(g, Mapping) or not isinstance(g.get("type"), str):
            raise InputError(f'{source}: grader {i + 1} is not an object with a "type"')
    return list(data)


def _one(g: Mapping[str, Any], out: Translation, keys: set[str], alone: bool) -> None:
    kind = g["type"]
    if kind == "multi":
        _multi(g, out, keys, alone)
        return
    criterion, notes = _criterion(g, _key(g, keys))
    out.rubric["criteria"].append(criterion)
    if notes:
        out.key_notes[criterion["key"]] = notes


def _criterion(g: Mapping[str, Any], key: str) -> tuple[dict[str, Any], list[str]]:
    kind = g.get("type")
    name = _name(g)
    if kind == "python":
        raise _Refused(f"{name} (python): {_PLUGIN_ROUTE}")
    if kind == "string_check":
        return _string_check(g, key)
    if kind == "text_similarity":
        return _text_similarity(g, key)
    if kind == "score_model":
        return _score_model(g, key)
    if kind == "label_model":
        return _label_model(g, key)
    raise _Refused(f"{name} ({kind}): not an OpenAI grader type gradeloop knows")


def _name(g: Mapping[str, Any]) -> str:
    return repr(str(g.get("name") or g.get("type")))


def _key(g: Mapping[str, Any], keys: set[str], name: str | None = None) -> str:
    """A gradeloop key from the grader's name: letters, digits, ``_``, ``-``; unique."""
    raw = name or str(g.get("name") or g.get("type") or "grader")
    key = re.sub(r"[^A-Za-z0-9_-]+", "_", raw).strip("_-")[:60] or "grader"
    if not re.match(r"[A-Za-z_]", key):
        key = f"g_{key}"[:60]
    base, n = key, 2
    while key in keys:
        key, n = f"{base}_{n}", n + 1
    assert KEY_PATTERN.match(key), key
    keys.add(key)
    return key


def _draft_input(g: Mapping[str, Any]) -> None:
    """The grader's ``input`` must be the answer: ``{{sample.output_text}}``."""
    value = g.get("input")
    if not isinstance(value, str) or not _ANSWER.match(value.strip()):
        raise _Refused(
            f"{_name(g)} ({g.get('type')}): input {value!r} is not {{{{sample.output_text}}}}; "
            "gradeloop checks the answer itself (other sample fields have no equivalent)"
        )


def _reference(g: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The checker options that give the reference, and how the description names it."""
    value = g.get("reference")
    if not isinstance(value, str):
        raise _Refused(f"{_name(g)} ({g.get('type')}): reference must be text, not {value!r}")
    item = _ITEM.match(value.strip())
    if item:
        field_name = item.group(1)
        return {"reference_field": field_name}, f"the item's {field_name!r}"
    if _TEMPLATE.search(value):
        raise _Refused(
            f"{_name(g)} ({g.get('type')}): reference {value!r} mixes text and templates; "
            "give {{item.FIELD}} alone, or plain text"
        )
    return {"reference": value}, repr(value)


_OPERATIONS = {
    "eq": "equals",
    "ne": "differs from",
    "like": "contains",
    "ilike": "contains (ignoring case)",
}


def _string_check(g: Mapping[str, Any], key: str) -> tuple[dict[str, Any], list[str]]:
    _draft_input(g)
    operation = g.get("operation")
    if operation not in _OPERATIONS:
        raise _Refused(
            f"{_name(g)} (string_check): operation {operation!r} is not eq, ne, like or ilike"
        )
    options, ref = _reference(g)
    criterion = {
        "key": key,
        "description": f"The answer {_OPERATIONS[operation]} {ref}.",
        "checker": "string_check",
        "options": {"operation": operation, **options},
    }
    return criterion, _reference_notes(options)


def _text_similarity(g: Mapping[str, Any], key: str) -> tuple[dict[str, Any], list[str]]:
    _draft_input(g)
    metric = g.get("evaluation_metric")
    if metric in ("cosine", "meteor"):
        needs = "an embedding model" if metric == "cosine" else "a thesaurus (WordNet)"
        raise _Refused(
            f"{_name(g)} (text_similarity): {metric} needs {needs}, which gradeloop's code "
            "checkers do not have; use fuzzy_match, bleu, gleu or rouge_*, or a judge key"
        )
    if metric not in _METRICS:
        raise _Refused(f"{_name(g)} (text_similarity): unknown evaluation_metric {metric!r}")
    options, ref = _reference(g)
    criterion: dict[str, Any] = {
        "key": key,
        "description": f"The answer's {metric} similarity to {ref} reaches the threshold.",
        "checker": "text_similarity",
        "options": {"metric": metric, **options},
        "scale": "score",
    }
    notes = _reference_notes(options)
    threshold = g.get("pass_threshold")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        criterion["threshold"] = _clamp(10 * float(threshold), notes, f"{threshold:g}")
        notes.append(f"pass_threshold {threshold:g} is threshold {criterion['threshold']:g} (0-10)")
    else:
        notes.append(
            "no pass_threshold: gradeloop's default threshold 7 (similarity 0.7) decides met"
        )
    return criterion, notes


def _reference_notes(options: Mapping[str, Any]) -> list[str]:
    if "reference_field" not in options:
        return []
    return [
        f"reads the reference from the draft's metadata field {options['reference_field']!r}: "
        'a JSONL line\'s "metadata", or a dataset column of that name in training'
    ]


def _clamp(threshold: float, notes: list[str], original: str) -> float:
    if threshold < 1:
        notes.append(f"threshold {original} is below gradeloop's lowest (1 on 0-10): raised to 1")
        return 1.0
    return round(min(threshold, 10.0), 4)


def _prompt(g: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The grader's messages as a criterion description, and notes on its templates."""
    messages = g.get("input")
    if not isinstance(messages, list) or not messages:
        raise _Refused(f"{_name(g)} ({g.get('type')}): input must be a list of messages")
    lines: list[str] = []
    fields: set[str] = set()
    for m in messages:
        if not isinstance(m, Mapping):
            raise _Refused(f"{_name(g)} ({g.get('type')}): a message is not an object")
        text = _message_text(m.get("content"))
        if text is None:
            raise _Refused(
                f"{_name(g)} ({g.get('type')}): a message holds an image or audio, which "
                "gradeloop's judge keys do not take"
            )
        for found in _TEMPLATE.finditer(text):
            if not _ANSWER.match(found.group(0)):
                fields.add(found.group(1).strip())
        lines.append(f"{m.get('role', 'user')}: {_ANSWER_ANYWHERE.sub('[the answer]', text)}")
    notes = []
    if fields:
        notes.append(
            "the prompt reads " + ", ".join(sorted(fields)) + ", which gradeloop's judge is "
            "not shown: put what it needs in the task (TRL: a task column) or the description"
        )
    return "\n".join(lines), notes


_ANSWER_ANYWHERE = re.compile(r"\{\{\s*sample\.output_text\s*\}\}")


def _message_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if isinstance(content, list):
        texts = []
        for block in content:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                texts.append(block["text"])
            else:
                return None
        return "\n".join(texts)
    return None


def _score_model(g: Mapping[str, Any], key: str) -> tuple[dict[str, Any], list[str]]:
    description, notes = _prompt(g)
    low, high = _range(g)
    criterion: dict[str, Any] = {"key": key, "description": description, "scale": "score"}
    notes.append(
        f"OpenAI scored {low:g} to {high:g}; gradeloop's judge scores 1-10 "
        f"({low:g} is 1, {high:g} is 10)"
    )
    threshold = g.get("pass_threshold")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        mapped = 1 + 9 * (float(threshold) - low) / (high - low)
        # the judge scores whole numbers: a fractional threshold works as the next one up
        whole = float(math.ceil(round(mapped, 9)))
        criterion["threshold"] = int(_clamp(whole, notes, f"{threshold:g}"))
        notes.append(
            f"pass_threshold {threshold:g} is {mapped:.3g} on the judge's 1-10 scale, which "
            f"scores whole numbers: threshold {criterion['threshold']:g}"
        )
    if g.get("model"):
        notes.append(f"OpenAI graded with {g['model']!r}: choose the judge with --judge-model")
    return criterion, notes


def _range(g: Mapping[str, Any]) -> tuple[float, float]:
    value = g.get("range") or [0, 1]
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and value[1] > value[0]
    )
    if not ok:
        raise _Refused(f"{_name(g)} (score_model): range {value!r} is not [low, high]")
    return float(value[0]), float(value[1])


def _label_model(g: Mapping[str, Any], key: str) -> tuple[dict[str, Any], list[str]]:
    description, notes = _prompt(g)
    labels, passing = g.get("labels"), g.get("passing_labels")
    if not isinstance(labels, list) or not isinstance(passing, list) or not passing:
        raise _Refused(f"{_name(g)} (label_model): needs labels and passing_labels lists")
    if not set(passing) <= set(labels):
        raise _Refused(f"{_name(g)} (label_model): passing_labels are not all among labels")
    description += (
        f"\nMet when the label is one of: {', '.join(map(str, passing))} "
        f"(the labels: {', '.join(map(str, labels))})."
    )
    return {"key": key, "description": description}, notes


def _multi(g: Mapping[str, Any], out: Translation, keys: set[str], alone: bool) -> None:
    graders = g.get("graders")
    if isinstance(graders, Mapping) and "type" in graders:
        graders = {str(graders.get("name") or "grader"): graders}  # the SDK's one-grader form
    if not isinstance(graders, Mapping) or not graders:
        raise _Refused(f"{_name(g)} (multi): graders must be an object of named graders")
    formula = g.get("calculate_output")
    if not isinstance(formula, str):
        raise _Refused(f"{_name(g)} (multi): calculate_output must be a formula")
    try:
        coefficients = weights(formula, [str(n) for n in graders])
    except FormulaError as exc:
        raise _Refused(f"{_name(g)} (multi): {exc}") from None
    scale = sum(coefficients.values())
    for name, sub in graders.items():
        if not isinstance(sub, Mapping):
            raise _Refused(f"{_name(g)} (multi): grader {name!r} is not an object")
        criterion, notes = _criterion(sub, _key(sub, keys, str(name)))
        criterion["weight"] = round(coefficients[str(name)], 6)
        out.rubric["criteria"].append(criterion)
        out.key_notes[criterion["key"]] = notes
    out.notes.append(
        f"multi grader {_name(g)}: calculate_output {formula!r} is the weights; gradeloop's "
        "overall is the weighted mean of every key on 0-10"
        + (f", so its score / 10 is the formula's value / {scale:g}" if alone else "")
        + "; gradeloop's gate also needs every key met"
    )
    if alone:
        _multi_pass(g, graders, scale, out)
    elif "pass_threshold" in g:
        out.notes.append(
            f"multi grader {_name(g)}: its pass_threshold has no pass_score equivalent beside "
            "other graders: none set"
        )


def _multi_pass(
    g: Mapping[str, Any], graders: Mapping[str, Any], scale: float, out: Translation
) -> None:
    threshold = g.get("pass_threshold")
    if not isinstance(threshold, int | float) or isinstance(threshold, bool):
        return
    unit = all(
        sub.get("type") != "score_model" or (sub.get("range") or [0, 1]) == [0, 1]
        for sub in graders.values()
        if isinstance(sub, Mapping)
    )
    score = 10 * float(threshold) / scale
    if unit and 0 <= score <= 10:
        out.rubric["pass_score"] = round(score, 4)
        out.notes.append(f"pass_threshold {threshold:g} of the formula is pass_score {score:.4g}")
    else:
        out.notes.append(
            f"pass_threshold {threshold:g} has no pass_score equivalent (a grader's range is "
            "not 0-1, or it lies past 10): none set"
        )
