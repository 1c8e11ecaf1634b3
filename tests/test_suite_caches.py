"""The suite's own set-up: bytecode caching is on for the test run (tests/__init__.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def test_the_run_writes_bytecode_caches_whatever_the_environment_says() -> None:
    # PYTHONDONTWRITEBYTECODE=1 (set on the project's machines) would make every pytest
    # process and every subprocess compile src/ and rewrite the test modules again
    assert sys.dont_write_bytecode is False
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ  # so subprocesses cache too
    here = Path(__file__)
    rewritten = list((here.parent / "__pycache__").glob(f"{here.stem}.*-pytest-*.pyc"))
    assert rewritten, "pytest did not cache this module's assertion-rewritten bytecode"
