"""``gradeloop mcp``: serve the four tools to an MCP client over stdio."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ._io import add_db_option
from ._models import add_model_options, provider


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="run an MCP server (stdio) with the four optimization tools",
        description="Serve generate_initial_output, evaluate_output, optimize_output and "
        "get_optimization_history to an MCP client over stdin/stdout. Configured by the "
        "environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, GRADELOOP_MODEL, "
        "GRADELOOP_JUDGE_MODEL, GRADELOOP_HOME); with no model configured, evaluations "
        "whose criteria are all code-filled still work. Needs: pip install 'gradeloop[mcp]'.",
    )
    add_db_option(p)
    p.add_argument(
        "--max-iterations",
        type=int,
        default=3,
        metavar="N",
        help="outputs per loop before revisions are refused (default 3; 0: no cap)",
    )
    p.add_argument(
        "--stagnation-rounds",
        type=int,
        default=2,
        metavar="N",
        help="end a loop whose judged scores do not improve over N iterations "
        "(default 2; 0 turns it off)",
    )
    p.add_argument(
        "--allow-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="let a client's criteria name files (json_schema's schema_file) inside DIR "
        "(repeatable; relative paths are read from the first DIR); without it, file "
        "options are refused",
    )
    add_model_options(p, generator=True)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..integrations.mcp_server import require_mcp, serve

    require_mcp()  # before anything else, so a missing extra is the one error shown
    if provider(args) != "anthropic":
        raise InputError(
            "the MCP server runs its models on the Anthropic API only for now; "
            "drop --provider openai-compatible (or GRADELOOP_PROVIDER)"
        )
    if len(getattr(args, "judge_models", None) or ()) > 1:
        raise InputError("the MCP server takes one --judge-model (a jury is not supported there)")
    if args.max_iterations < 0:
        raise InputError(f"--max-iterations must be 0 (no cap) or more, not {args.max_iterations}")
    if args.stagnation_rounds < 0:
        raise InputError(f"--stagnation-rounds must be 0 or more, not {args.stagnation_rounds}")
    for folder in args.allow_dir:
        if not Path(folder).expanduser().is_dir():
            raise InputError(f"--allow-dir folder not found: {folder}; give an existing folder")
    # stdout carries the protocol: anything for a person goes to stderr.
    print(f"gradeloop {__version__}: MCP server on stdio; waiting for a client", file=sys.stderr)
    serve(
        base_url=args.base_url,
        model=args.model,
        judge_model=args.judge_model,
        structured=args.structured,
        db=args.db,
        max_iterations=args.max_iterations or None,
        stagnation_rounds=args.stagnation_rounds,
        allow_dirs=args.allow_dir,
    )
    return 0
