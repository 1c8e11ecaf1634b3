"""``gradeloop import-graders FILE.json``: OpenAI grader configs as a gradeloop rubric."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..grading._rubric import Rubric
from ..rewards._graders import translate
from ..rewards._graders_toml import rubric_toml
from ._io import check_out, read_text, terminal_safe


def add_parser(sub: Any) -> None:
    """Register the command's parser."""
    p = sub.add_parser(
        "import-graders",
        help="write a rubric from OpenAI grader configs (JSON)",
        description="Translate OpenAI grader configs (a grader, a list of them, an eval's "
        'testing_criteria, or {"grader": ...}) into a gradeloop rubric: string_check and '
        "text_similarity as code checkers, score_model and label_model as judge keys, a "
        "multi grader's calculate_output as weights when it is a weighted sum. What has no "
        "equivalent (a python grader, which runs code; cosine or meteor similarity; other "
        "formulas) is refused with the reason. Notes on what differs are written as "
        "comments. Exit 0, or 2 for bad input or anything that cannot be translated.",
    )
    p.add_argument("file", metavar="FILE.json", help="the grader configs (JSON)")
    p.add_argument("--out", metavar="R.toml", help="the rubric file to write (default: print it)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_out(args.out)
    text = read_text(args.file, "grader file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{args.file}: invalid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise InputError(f"{args.file}: the JSON is nested too deeply") from None
    translation = translate(data, source=args.file)
    rendered = rubric_toml(translation, args.file)
    rubric = Rubric.from_dict(tomllib.loads(rendered))  # what is written loads as a rubric
    if args.out is None:
        sys.stdout.write(rendered)
    else:
        _write(Path(args.out), rendered)
    code = sum(1 for c in rubric if c.source == "code")
    summary = f"{len(rubric)} keys ({code} code, {len(rubric) - code} judge)"
    where = f"wrote {args.out}: " if args.out else ""
    print(terminal_safe(f"{where}{summary}; review the notes in it"), file=sys.stderr)
    return 0


def _write(path: Path, text: str) -> None:
    """Through a temporary file and a rename: never half a rubric."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"--out file cannot be written: {path} ({exc.strerror})") from None
