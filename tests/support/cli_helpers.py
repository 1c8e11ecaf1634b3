"""Run the CLI as a user would: in this process (fast), or in a subprocess (end to end).

``cli(...)`` calls :func:`gradeloop.cli.main` here, with its own stdin, stdout,
stderr, environment, working directory and checker registry, all restored after:
most CLI tests use it, so the SDK and langgraph are imported once per test
session rather than once per command. ``gradeloop(...)`` starts ``python -m
gradeloop`` in a subprocess; keep it for the tests that prove the console script
itself works (exit codes through the interpreter, signals, a real stdin).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradeloop.cli import main
from gradeloop.grading._registry import reset_default_registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "payments-guide"


@dataclass
class Ran:
    code: int
    out: str
    err: str


class _Stream(io.StringIO):
    """A captured stream that may claim to be a terminal (for the TTY-only output)."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@contextlib.contextmanager
def _isolated(env: dict[str, str] | None, cwd: Path | None) -> Iterator[None]:
    """Environment, working directory, sys.path and the registry, restored after."""
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    try:
        for name in [k for k in os.environ if k.startswith("ANTHROPIC_")]:
            del os.environ[name]
        os.environ.update(env or {})
        # PYTHONPATH only matters to a new interpreter; here it becomes sys.path
        extra = (env or {}).get("PYTHONPATH")
        if extra:
            sys.path[:0] = [p for p in extra.split(os.pathsep) if p]
        os.chdir(cwd or ROOT)
        reset_default_registry()
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        reset_default_registry()


def cli(
    *args: str,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    tty: bool = False,
) -> Ran:
    """``gradeloop *args`` in this process; ``tty=True`` makes stdout/stderr terminals."""
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    out, err = _Stream(tty), _Stream(tty)
    fake_stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    with _isolated(env, cwd):
        sys.stdin, sys.stdout, sys.stderr = fake_stdin, out, err
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's --help, --version and usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
    ran = Ran(code, out.getvalue(), err.getvalue())
    assert "Traceback" not in ran.err, ran.err  # no traceback ever reaches a user
    assert "internal error" not in ran.err, ran.err
    return ran


def gradeloop(
    *args: str,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> Ran:
    """``python -m gradeloop *args`` in a subprocess."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    full_env.update(env or {})
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run(
        [sys.executable, "-m", "gradeloop", *args],
        input=data,
        capture_output=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=timeout,
    )
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "Traceback" not in err, err  # no traceback ever reaches a user
    return Ran(proc.returncode, out, err)


def kill_when_blocked(model: Any, args: list[str], drafts: int = 3) -> None:
    """Run ``gradeloop *args`` and SIGKILL it once ``model`` has started ``drafts``
    drafts (the last one blocks in the model until ``model.release`` is set)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradeloop", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while model.drafts < drafts and time.monotonic() < deadline:
            time.sleep(0.05)
        assert model.drafts == drafts
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        model.release.set()
        if proc.poll() is None:
            proc.kill()
