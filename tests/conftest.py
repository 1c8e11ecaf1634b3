"""Fixtures shared by the whole suite.

Every test runs with ``GRADELOOP_HOME`` in a temporary directory, with no
Anthropic credentials in the environment, and with any network connection that
is not to the loopback interface turned into a test failure.
"""

from __future__ import annotations

import gc
import itertools
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from gradeloop.grading._registry import reset_default_registry

pytest_plugins = [
    "pytester",
    "tests.support.emulator",
    "tests.support.oai_emulator",
    "tests.support.proxy",
]

# Property tests check behaviour, never speed (speed is measured in benchmarks/). A
# per-example deadline only measures how busy the machine is, and with the suite split
# over xdist workers on a shared machine it failed tests that were right.
settings.register_profile("gradeloop", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("gradeloop")


def pytest_collection_finish(session: pytest.Session) -> None:
    # Everything alive once the tests are collected (the SDKs' modules and classes, the
    # test modules, hypothesis' strategies: about 400,000 objects per process) lives to
    # the end of the run. Frozen, it is left out of every later full garbage collection:
    # each pass over it cost ~0.3 s, 15-20 passes per xdist worker (~7 s of CPU each).
    gc.freeze()


_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect
_real_create_connection = socket.create_connection


def _host_of(address: Any) -> str | None:
    if isinstance(address, tuple) and address:
        return str(address[0])
    return None  # AF_UNIX paths and the like


class NetworkAttempt(AssertionError):
    pass


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = _host_of(address)
    if host is not None and host not in _LOOPBACK:
        raise NetworkAttempt(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


def _guarded_create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
    host = _host_of(address)
    if host is not None and host not in _LOOPBACK:
        raise NetworkAttempt(f"test tried to reach the network: {address!r}")
    return _real_create_connection(address, *args, **kwargs)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket, "create_connection", _guarded_create_connection)


_HOME_NUMBERS = itertools.count()


@pytest.fixture(scope="session")
def _homes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Every test's home goes in this one folder. tmp_path_factory.mktemp lists its whole
    # parent folder to find the next free number, so a home per test beside the tests'
    # own tmp_path folders made each new folder slower than the last: quadratic, about
    # 2 s of CPU per xdist worker, and every tmp_path after paid for the homes too.
    return tmp_path_factory.mktemp("gradeloop-homes")


@pytest.fixture(autouse=True)
def gradeloop_home(_homes: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = _homes / str(next(_HOME_NUMBERS))
    home.mkdir()
    monkeypatch.setenv("GRADELOOP_HOME", str(home))
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "GRADELOOP_MODEL",
        "GRADELOOP_JUDGE_MODEL",
        "GRADELOOP_DISABLE_PLUGIN_AUTOLOAD",
        "GRADELOOP_PLUGINS",
        "GRADELOOP_BLOCK_PLUGINS",
        "GRADELOOP_PROVIDER",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    reset_default_registry()
    yield home
    reset_default_registry()
