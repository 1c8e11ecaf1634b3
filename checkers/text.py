"""Placeholder: being written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CHECKERS: dict[str, Callable[..., Any]] = {}
