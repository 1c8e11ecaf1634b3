"""The model tier in one import: the Anthropic generator and judge and their helpers.

The pieces live in their own modules (``_generator``, ``_judge``, ``_client``,
``_reply``, ``_usage``, ``_wire``, ``_prompts``); this module gathers the public
names so ``gradeloop/__init__.py`` has one place to re-export them from.
"""

from __future__ import annotations

from ._client import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_MODEL,
    generator_model,
    judge_model,
    make_client,
    model_configured,
)
from ._generator import AnthropicGenerator
from ._judge import AnthropicJudge, Structured
from ._reply import first_text
from ._usage import CallRecord, Usage

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_MODEL",
    "AnthropicGenerator",
    "AnthropicJudge",
    "CallRecord",
    "Structured",
    "Usage",
    "first_text",
    "generator_model",
    "judge_model",
    "make_client",
    "model_configured",
]
