"""gradeloop uses the SDKs' public API only (DESIGN.md section 10).

No module of ``src/`` or ``checkers/`` imports a private module of ``anthropic`` or
``openai`` (any dotted segment with a leading underscore: ``anthropic._constants``,
``anthropic.lib._tracing``), imports a private name from them, or reaches a private
attribute or method of an SDK client (``client._calculate_nonstreaming_timeout``,
``getattr(client, "_tracer")``). A private member of the SDK can change in any release
without notice; the public surface (``messages.create``, ``with_raw_response``,
``with_options``) is what its changelog promises.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDKS = ("anthropic", "openai")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _sdk_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] in SDKS


def _named(node: ast.expr) -> str | None:
    """The last name of ``node`` (``client`` of ``self.client``), if it has one."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _clientish(node: ast.expr) -> bool:
    name = _named(node)
    return name is not None and name.lower().endswith("client")


def sdk_private_uses(source: str, where: str = "<source>") -> list[str]:
    """Every place in ``source`` that reaches a private part of an SDK, as ``where:line``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _sdk_module(alias.name) and any(map(_private, alias.name.split("."))):
                    found.append(f"{line}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and _sdk_module(node.module):
            if any(map(_private, node.module.split("."))):
                found.append(f"{line}: from {node.module} import ...")
            found += [
                f"{line}: from {node.module} import {a.name}"
                for a in node.names
                if _private(a.name)
            ]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            if _named(node.value) in SDKS or _clientish(node.value):
                found.append(f"{line}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and _named(node.func) in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and _clientish(node.args[0])
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            found.append(f"{line}: {ast.unparse(node)}")
    return found


def test_no_module_reaches_a_private_part_of_an_sdk() -> None:
    found = []
    for folder in ("src", "checkers"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            found += sdk_private_uses(path.read_text(encoding="utf-8"), where)
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "from anthropic._constants import DEFAULT_TIMEOUT",
        "from anthropic._data.deprecated_models import DEPRECATED_MODELS",
        "from anthropic.lib._tracing._api_call import messages_create_request_attributes",
        "import openai._base_client",
        "import anthropic._utils as u",
        "from anthropic import _exceptions",
        "import anthropic\nx = anthropic._version",
        "t = client._calculate_nonstreaming_timeout(1, None)",
        "t = self.client._tracer",
        "h = getattr(aclient, '_custom_headers', None)",
        "def f(http_client):\n    return http_client._transport",
    ],
)
def test_each_private_use_is_found(source: str) -> None:
    assert len(sdk_private_uses(source)) == 1, source


def test_public_uses_and_gradeloops_own_privates_pass() -> None:
    source = """
import anthropic
from anthropic.types import Message
from openai import APIError
from ._client import make_client

class Twin:
    def __init__(self, client):
        self._client = client
        self._lock = None

    def send(self, request):
        raw = self._client.messages.with_raw_response.create(**request)
        derived = self._client.with_options(max_retries=0)
        return raw.read(), derived, anthropic.APIError, client.__class__, judge._record
"""
    assert sdk_private_uses(source) == []
