"""Model families, and the warning when a judge grades its own family's drafts.

A judge tends to prefer text written by models of its own family (self-preference;
docs/judging.md has the sources), so a loop whose generator and judge share a family
grades its own drafts kindly. :func:`warn_same_family` says so with a
:class:`~gradeloop.errors.GradeloopWarning`; the loop, :func:`~gradeloop.optimize`
and the graph tier call it when they start, and the CLI prints the same text as one
line on stderr (inside :func:`announced`, so the library does not say it twice).

Families are recognised from the model id alone (``claude-sonnet-4-5``,
``anthropic.claude-3-5-sonnet`` on Bedrock, ``meta-llama/Llama-3.1-8B``,
``qwen2.5:7b`` on Ollama): a word of the id that is a known family stem, or a stem
and a version (``llama3``, ``gemma3n``), never a longer word that merely starts with
one (``gpt4all``). An id with no known stem has no family and never warns.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..errors import GradeloopWarning

__all__ = ["announced", "model_family", "same_family", "warn_same_family"]

# (stem, family). A stem matches a word of the model id that starts with it; the
# short OpenAI reasoning ids ("o1", "o3-mini", "o4") must be the whole word.
_STEMS: tuple[tuple[str, str], ...] = (
    ("claude", "Anthropic Claude"),
    ("gpt", "OpenAI GPT"),
    ("chatgpt", "OpenAI GPT"),
    ("davinci", "OpenAI GPT"),
    ("gemini", "Google Gemini/Gemma"),
    ("gemma", "Google Gemini/Gemma"),
    ("llama", "Meta Llama"),
    ("codellama", "Meta Llama"),
    ("qwen", "Alibaba Qwen"),
    ("qwq", "Alibaba Qwen"),
    ("mistral", "Mistral"),
    ("mixtral", "Mistral"),
    ("ministral", "Mistral"),
    ("codestral", "Mistral"),
    ("magistral", "Mistral"),
    ("deepseek", "DeepSeek"),
    ("phi", "Microsoft Phi"),
    ("grok", "xAI Grok"),
    ("command", "Cohere Command"),
    ("glm", "Zhipu GLM"),
    ("kimi", "Moonshot Kimi"),
    ("granite", "IBM Granite"),
    ("olmo", "AI2 OLMo"),
)
_WHOLE = {"o1": "OpenAI GPT", "o3": "OpenAI GPT", "o4": "OpenAI GPT"}
_MAX_ID = 512  # a model id longer than this is not looked into (no family)

_ANNOUNCED: ContextVar[bool] = ContextVar("gradeloop_family_announced", default=False)


def _words(model: str) -> Iterator[str]:
    """The lowercase alphanumeric runs of ``model``, in one pass."""
    word: list[str] = []
    for ch in model.lower():
        if ch.isascii() and ch.isalnum():
            word.append(ch)
        elif word:
            yield "".join(word)
            word = []
    if word:
        yield "".join(word)


def model_family(model: object) -> str | None:
    """The family of a model id (``"Anthropic Claude"``...), or None when unknown."""
    if not isinstance(model, str) or not model or len(model) > _MAX_ID:
        return None
    for word in _words(model):
        if word in _WHOLE:
            return _WHOLE[word]
        for stem, family in _STEMS:
            if word.startswith(stem) and _version(word[len(stem) :]):
                return family
    return None


def _version(rest: str) -> bool:
    """What may follow a family stem in one word: nothing, or a version ("3", "2",
    "3n", "4o"), so "llama3" and "qwen2" match and "gpt4all" or "philosophy" do not."""
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return rest == "" or (digits > 0 and len(rest) - digits <= 1)


def _models(judge: Any) -> list[str]:
    """The model ids behind a judge (a jury's members', recursively)."""
    members = getattr(judge, "judges", None)
    if isinstance(members, tuple | list):
        return [m for j in members for m in _models(j)]
    model = getattr(judge, "model", None)
    return [model] if isinstance(model, str) else []


def same_family(generator: Any, judge: Any) -> str | None:
    """The warning text when ``generator`` and (a member of) ``judge`` share a family,
    or when a jury's members are all of one family; None otherwise."""
    gen_model = getattr(generator, "model", None)
    family = model_family(gen_model)
    models = _models(judge)
    if family is not None:
        shared = [m for m in models if model_family(m) == family]
        if shared:
            who = (
                "the judge"
                if len(models) == 1
                else f"{len(shared)} of the jury's {len(models)} judges"
            )
            return (
                f"the generator ({gen_model}) and {who} ({', '.join(shared)}) are {family} "
                "models: a judge tends to prefer its own family's drafts (self-preference); "
                "use a judge of another family, or a Jury across families (docs/judging.md)"
            )
    families = {model_family(m) for m in models}
    if len(models) > 1 and len(families) == 1 and None not in families:
        return (
            f"the jury's judges are all {families.pop()} models: judges of one family "
            "share their biases and vote almost as one; mix families (docs/judging.md)"
        )
    return None


def warn_same_family(generator: Any, judge: Any) -> str | None:
    """Emit a :class:`~gradeloop.errors.GradeloopWarning` when :func:`same_family` finds
    one (unless the caller already told the user, inside :func:`announced`); the text.

    The warning points at the first caller outside gradeloop (the user's call of
    ``run_loop``, ``optimize`` or ``build_graph``)."""
    text = same_family(generator, judge)
    if text is not None and not _ANNOUNCED.get():
        warnings.warn(text, GradeloopWarning, stacklevel=_outside())
    return text


def _outside() -> int:
    """The ``stacklevel`` of the first frame, from the caller of warn_same_family up,
    that is not gradeloop's own."""
    frame = sys._getframe(2)  # the caller of warn_same_family
    level = 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("gradeloop"):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


@contextmanager
def announced() -> Iterator[None]:
    """Inside the block, :func:`warn_same_family` stays quiet: the caller (the CLI)
    has already shown the text its own way. Per thread and task, never process-wide."""
    token = _ANNOUNCED.set(True)
    try:
        yield
    finally:
        _ANNOUNCED.reset(token)
