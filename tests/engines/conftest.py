"""A real local Ray cluster, Spark and Dask for the ``engines`` tests (issue 43).

``scripts/engines`` installs the engines (``pip install -e '.[ray,spark,dask]'``).
These tests are deselected from the main suite (``-m "not ... engines"`` in
pyproject.toml); run them with ``scripts/test -n 0 -m engines tests/engines``. One Ray
cluster (``ray.init(num_cpus=2)``, every address on 127.0.0.1) serves the whole
session; its actors import this worktree's ``tests`` package for the emulator judge.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engines.helpers import verdict_for
from tests.support.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """``ray`` with a local two-CPU cluster started (stopped at the session's end)."""
    import ray

    # every address of the cluster on the loopback interface (Ray otherwise binds and
    # connects to the machine's own address); set before the cluster starts, so its
    # processes and the test's driver processes inherit it
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
    )
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
        configure_logging=False,
    )
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def judged() -> Iterator[Emulator]:
    """A kept-alive Messages-API emulator that answers every judge request with
    :func:`tests.engines.helpers.verdict_for`."""
    server = Emulator(keep_alive=True)
    server.responder = verdict_for
    try:
        yield server
    finally:
        server.close()
