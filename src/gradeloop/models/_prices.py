"""What tokens cost: the price table shipped with gradeloop, and a user's override file.

Prices are US dollars per million tokens, per model id (``data/prices.toml``, which
records where and when each figure was checked). ``GRADELOOP_PRICES`` may name a
TOML or JSON file of the same shape; its models are added to the shipped ones or
replace them. A model in neither has no price, and its cost is None: never a guess.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError

__all__ = ["Price", "PriceTable", "cost_usd", "price_of", "price_table"]

_PER = 1_000_000
_DATED = re.compile(r"-\d{8}\Z")  # claude-opus-4-5-20251101 is claude-opus-4-5


class Price(BaseModel):
    """One model's prices in dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cache_write_5m: float = Field(ge=0, allow_inf_nan=False)
    cache_write_1h: float = Field(ge=0, allow_inf_nan=False)
    cache_read: float = Field(ge=0, allow_inf_nan=False)
    batch_discount: float = Field(default=0.5, ge=0, lt=1, allow_inf_nan=False)
    source: str | None = None

    def cost(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_write_5m: int = 0,
        cache_write_1h: int = 0,
        cache_read: int = 0,
        batch: bool = False,
    ) -> float:
        """Dollars for these token counts (Message Batches take ``batch_discount`` off)."""
        total = (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_write_5m * self.cache_write_5m
            + cache_write_1h * self.cache_write_1h
            + cache_read * self.cache_read
        ) / _PER
        return total * (1 - self.batch_discount) if batch else total


@dataclass(frozen=True)
class PriceTable:
    """Every known model's :class:`Price`; ``sources`` says which file each came from."""

    models: Mapping[str, Price]
    sources: Mapping[str, str]
    verified: str | None = None

    def get(self, model: str) -> Price | None:
        """The price of ``model`` (a dated id falls back to its undated name), or None."""
        found = self.models.get(model)
        if found is None and _DATED.search(model):
            found = self.models.get(_DATED.sub("", model))
        return found


_cache: dict[tuple[str, float], PriceTable] = {}


def price_table() -> PriceTable:
    """The shipped table, with ``GRADELOOP_PRICES`` (if set) applied on top.

    Raises :class:`~gradeloop.errors.ConfigError` naming the file and the entry when
    the override cannot be read or an entry is malformed.
    """
    override = os.environ.get("GRADELOOP_PRICES", "").strip()
    stamp = _mtime(override) if override else 0.0
    key = (override, stamp)
    table = _cache.get(key)
    if table is None:
        table = _build(override)
        _cache.clear()
        _cache[key] = table
    return table


def price_of(model: str) -> Price | None:
    """The price of ``model`` from :func:`price_table`, or None when unknown."""
    return price_table().get(model)


def cost_usd(model: str | None, usage: Any, *, batch: bool = False) -> float | None:
    """Dollars for an API usage block (a dict or an SDK ``Usage``) on ``model``.

    None when the model has no price. Cache writes are split by lifetime when the
    block says so (``cache_creation.ephemeral_1h_input_tokens``); otherwise they are
    5-minute writes, the API's default lifetime.
    """
    if not model:
        return None
    price = price_of(model)
    if price is None:
        return None
    written = _count(usage, "cache_creation_input_tokens")
    split = _field(usage, "cache_creation")
    hour = _count(split, "ephemeral_1h_input_tokens") if split is not None else 0
    hour = min(hour, written)
    return price.cost(
        input_tokens=_count(usage, "input_tokens"),
        output_tokens=_count(usage, "output_tokens"),
        cache_write_5m=written - hour,
        cache_write_1h=hour,
        cache_read=_count(usage, "cache_read_input_tokens"),
        batch=batch,
    )


def _field(raw: Any, name: str) -> Any:
    return raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)


def _count(raw: Any, name: str) -> int:
    value = _field(raw, name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _mtime(path: str) -> float:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return -1.0  # reported by _build, with the path


def _build(override: str) -> PriceTable:
    shipped = tomllib.loads(
        (resources.files(__package__ or "gradeloop.models") / "data" / "prices.toml").read_text(
            encoding="utf-8"
        )
    )
    models, sources = _entries(shipped, "gradeloop's price table")
    verified = shipped.get("verified")
    if override:
        theirs, _ = _entries(_read(override), f"GRADELOOP_PRICES file {override}")
        models.update(theirs)
        sources.update({name: override for name in theirs})
    return PriceTable(models, sources, verified if isinstance(verified, str) else None)


def _read(path: str) -> dict[str, Any]:
    where = f"GRADELOOP_PRICES file {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where} cannot be read ({exc.strerror}); fix or unset it") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not UTF-8 text") from None
    try:
        data = json.loads(text) if path.endswith(".json") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where} is not valid {_kind(path)}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must hold a table with a 'models' table")
    return data


def _entries(data: Mapping[str, Any], where: str) -> tuple[dict[str, Price], dict[str, str]]:
    unknown = sorted(set(data) - {"models", "verified"})
    if unknown:
        raise ConfigError(f'{where}: unknown top-level key {unknown[0]!r}; use [models."<id>"]')
    raw = data.get("models")
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(f'{where}: no [models."<id>"] tables')
    models: dict[str, Price] = {}
    for name, entry in raw.items():
        try:
            price = Price.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(entry)"
            raise ConfigError(
                f"{where}: model {name!r}: {field}: {err['msg']} (prices are dollars per "
                "million tokens: input, output, cache_write_5m, cache_write_1h, cache_read)"
            ) from None
        models[str(name)] = price
    return models, {name: where for name in models}


def _kind(path: str) -> str:
    return "JSON" if path.endswith(".json") else "TOML"
