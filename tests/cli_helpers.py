"""Run the CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "payments-guide"


@dataclass
class Ran:
    code: int
    out: str
    err: str


def gradeloop(
    *args: str,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> Ran:
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
