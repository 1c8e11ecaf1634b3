"""Model options shared by the commands that call a model."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError


def add_model_options(parser: argparse.ArgumentParser, *, generator: bool) -> None:
    group = parser.add_argument_group("model")
    if generator:
        group.add_argument(
            "--model", help="generator model (default: $GRADELOOP_MODEL or gradeloop's default)"
        )
    group.add_argument(
        "--judge-model", help="judge model (default: $GRADELOOP_JUDGE_MODEL, then $GRADELOOP_MODEL)"
    )
    group.add_argument(
        "--base-url",
        help="Messages API base URL, e.g. a local server (default: $ANTHROPIC_BASE_URL)",
    )
    group.add_argument(
        "--structured",
        choices=["auto", "native", "json"],
        default="auto",
        help="how the judge gets structured output; 'json' for servers "
        "without it (Ollama, llama.cpp)",
    )


def model_configured(args: argparse.Namespace) -> bool:
    """A key in the environment, or a base URL (a local server needs no key)."""
    return bool(
        os.environ.get("ANTHROPIC_API_KEY")
        or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        or getattr(args, "base_url", None)
        or os.environ.get("ANTHROPIC_BASE_URL")
    )


def require_model(
    args: argparse.Namespace, judge_keys: Sequence[str], *, code_only_hint: bool
) -> None:
    """Exit-2 error naming the judge keys and the fixes, when no model is configured."""
    if model_configured(args):
        return
    keys = ", ".join(judge_keys)
    fixes = "set ANTHROPIC_API_KEY, or pass --base-url for a local server"
    if code_only_hint:
        fixes += ", or use --code-only to grade only the code-filled keys"
    raise ConfigError(f"no model is configured for the judge-filled criteria ({keys}); {fixes}")


def _client(args: argparse.Namespace) -> Any:
    from ..models._anthropic import make_client

    return make_client(base_url=getattr(args, "base_url", None))


def build_judge(args: argparse.Namespace) -> Any:
    from ..models._anthropic import AnthropicJudge

    return AnthropicJudge(_client(args), model=args.judge_model, structured=args.structured)


def build_generator(args: argparse.Namespace) -> Any:
    from ..models._anthropic import AnthropicGenerator

    return AnthropicGenerator(_client(args), model=args.model)
