"""The suite's own guard: no test may reach the network, loopback is fine."""

from __future__ import annotations

import socket

import anthropic
import pytest

from tests.conftest import NetworkAttempt
from tests.support.emulator import Emulator


def test_a_connection_to_a_public_address_fails_the_test() -> None:
    with pytest.raises(NetworkAttempt, match="tried to reach the network"):
        socket.create_connection(("93.184.216.34", 443), timeout=1)
    with socket.socket() as s, pytest.raises(NetworkAttempt):
        s.connect(("8.8.8.8", 53))


def test_the_sdk_cannot_reach_the_real_api() -> None:
    client = anthropic.Anthropic(api_key="k", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError) as info:
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}])
    client.close()
    chain, exc = [], info.value.__cause__
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert any(isinstance(e, NetworkAttempt) for e in chain), chain


def test_loopback_is_allowed(emulator: Emulator) -> None:
    # the twin: the guard must not block the emulator
    host, port = emulator.base_url.removeprefix("http://").split(":")
    socket.create_connection((host, int(port)), timeout=5).close()
