"""Run fingerprints: which judge, which rubric and which sampling stood behind a run.

Every grading run and every loop records one (in its stored settings, under
``"fingerprint"``), so two runs set side by side can be told apart by more than
their dates: the judge's provider, its model id, the host of its base URL, a digest
of the rubric, and the sampling settings. :func:`fingerprint_warnings` says what
differs between runs, and flags a model *alias* that can move under a run without
its id changing.

Which model ids are aliases (Anthropic's "Model IDs and versioning" page,
platform.claude.com/docs/en/about-claude/models/model-ids-and-versions, read
2026-12): from the Claude 4.6 generation on, a dateless id (``claude-opus-4-6``,
``claude-sonnet-5``) is the pinned snapshot itself; before it, the pinned id carries
a ``YYYYMMDD`` date and the dateless form (``claude-sonnet-4-5``) is a convenience
alias that points at the newest snapshot. ``*-latest`` (and an Ollama ``:latest``
tag) float by name, and so do the bare family names ``opus``, ``sonnet``, ``haiku``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "FINGERPRINT_FIELDS",
    "fingerprint_differences",
    "fingerprint_warnings",
    "rubric_digest",
    "run_fingerprint",
    "stored_fingerprint",
    "undated_alias",
]

#: The fields of a fingerprint, in the order warnings name them.
FINGERPRINT_FIELDS = ("provider", "model", "base_url_host", "rubric_digest", "sampling")
_LABELS = {
    "provider": "judge provider",
    "model": "judge model",
    "base_url_host": "judge base URL host",
    "rubric_digest": "rubric",
    "sampling": "judge sampling",
}
_DATE = re.compile(r"(?:^|[-@_.])(?:19|20)\d{6}(?:$|[-_.:])")
_DATED_DASHES = re.compile(r"(?:^|-)(?:19|20)\d\d-\d\d-\d\d(?:$|-)")
_FAMILIES = frozenset({"opus", "sonnet", "haiku", "claude"})
# claude-{name}-{major}[-{minor}] (4.6 and later) or claude-{major}[-{minor}]-{name} (3.x)
_NUMBERS = re.compile(r"\d{1,3}")


def rubric_digest(rubric: Mapping[str, Any]) -> str:
    """A short digest of a rubric's dict (``Rubric.to_dict()``): equal rubrics, equal
    digests, whatever the key order."""
    text = json.dumps(rubric, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _host(judge: Any) -> str | None:
    client = getattr(judge, "client", None)
    raw = getattr(client, "base_url", None) or getattr(judge, "base_url", None)
    if not raw:
        return None
    parts = urlsplit(str(raw))
    if not parts.hostname:
        return None
    return parts.hostname + (f":{parts.port}" if parts.port else "")


def _provider(judge: Any) -> str:
    names = [k.__name__ for k in type(judge).__mro__]
    if "OpenAICompatibleJudge" in names:
        return "openai-compatible"
    if "AnthropicJudge" in names:
        return "anthropic"
    if isinstance(getattr(judge, "judges", None), list | tuple):
        return "jury"
    return f"custom:{type(judge).__name__}"


def _sampling(judge: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("samples", "resample", "margin", "max_tokens", "structured"):
        value = getattr(judge, name, None)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            out[name] = value
    extra = getattr(judge, "extra_body", None)
    if isinstance(extra, Mapping):  # temperature, top_p, thinking: they change replies
        out["extra_body"] = json.loads(json.dumps(dict(extra), sort_keys=True, default=str))
    return out


def run_fingerprint(judge: Any, rubric: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint of a run graded by ``judge`` (None: no judge) with ``rubric``
    (``Rubric.to_dict()``): ``provider``, ``model``, ``base_url_host``,
    ``rubric_digest`` and ``sampling``. A jury's model is its members' models."""
    if judge is None:
        return {
            "provider": None,
            "model": None,
            "base_url_host": None,
            "rubric_digest": rubric_digest(rubric),
            "sampling": None,
        }
    members = getattr(judge, "judges", None)
    if isinstance(members, list | tuple) and members:
        inner = [run_fingerprint(j, rubric) for j in members]
        model: Any = " + ".join(str(f["model"]) for f in inner)
        hosts = sorted({str(f["base_url_host"]) for f in inner if f["base_url_host"]})
        host: Any = ", ".join(hosts) or None
    else:
        model = getattr(judge, "model", None)
        host = _host(judge)
    return {
        "provider": _provider(judge),
        "model": None if model is None else str(model),
        "base_url_host": host,
        "rubric_digest": rubric_digest(rubric),
        "sampling": _sampling(judge),
    }


def stored_fingerprint(config: Mapping[str, Any], rubric: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint a stored run recorded; for a run recorded before fingerprints,
    what its settings still tell (the judge model, the rubric) with the rest None."""
    recorded = config.get("fingerprint")
    if isinstance(recorded, Mapping):
        return {name: recorded.get(name) for name in FINGERPRINT_FIELDS}
    model = config.get("judge_model")
    return {
        "provider": None,
        "model": model if isinstance(model, str) else None,
        "base_url_host": None,
        "rubric_digest": rubric_digest(rubric),
        "sampling": None,
    }


def undated_alias(model: str | None) -> bool:
    """True when ``model`` names a model that can change under the same id: a
    ``*-latest`` name or tag, a bare family name, or a dateless Claude id from before
    the 4.6 generation (see the module docstring)."""
    if not model:
        return False
    name = model.strip().lower().rsplit("/", 1)[-1]  # "anthropic/claude-..." on gateways
    name = name.removeprefix("anthropic.")  # Bedrock's prefix
    if "latest" in re.split(r"[-:@_.]", name):
        return True
    if name in _FAMILIES:
        return True
    if not name.startswith("claude-") or _DATE.search(name) or _DATED_DASHES.search(name):
        return False
    numbers = [int(n) for n in _NUMBERS.findall(name.split("@", 1)[0].removesuffix("-v1"))]
    if not numbers:
        return True  # "claude-sonnet": a family name
    major, minor = numbers[0], numbers[1] if len(numbers) > 1 else 0
    return (major, minor) < (4, 6)


def fingerprint_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The fields on which two fingerprints differ, where both recorded a value
    (a run recorded before fingerprints cannot differ on what it never recorded)."""
    return [
        name
        for name in FINGERPRINT_FIELDS
        if a.get(name) is not None and b.get(name) is not None and a.get(name) != b.get(name)
    ]


def _shown(name: str, value: Any) -> str:
    if name == "sampling" and isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "defaults"
    return str(value)


def fingerprint_warnings(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """One line per difference between the first run and each later one, then one
    line per run whose judge model is an undated alias (each run named once).

    ``runs`` is ``(run id, fingerprint)`` pairs, in the order they are set side by side.
    """
    out: list[str] = []
    if runs:
        first_id, first = runs[0]
        for other_id, other in runs[1:]:
            for name in fingerprint_differences(first, other):
                out.append(
                    f"{first_id} and {other_id} differ in {_LABELS[name]}: "
                    f"{_shown(name, first.get(name))} vs {_shown(name, other.get(name))}"
                )
    seen: set[str] = set()
    for run_id, fp in runs:
        model = fp.get("model")
        if run_id in seen or not isinstance(model, str):
            continue
        seen.add(run_id)
        for part in model.split(" + "):
            if undated_alias(part):
                out.append(
                    f"{run_id}: judge model {part!r} is an alias without a date: the model "
                    "behind it can change while the name stays; pin a dated or "
                    "4.6-generation id to compare runs"
                )
                break
    return out
