"""A judge for the Messages-API emulator whose answers depend on the criteria's text.

It reads each request as the real model would receive it: the criteria lines of the
system text (``key: description`` or ``key (scored 1-10, needs N): description``),
the draft between ``<draft>`` tags, and the keys the wire schema asks for. A key is
met when the draft holds one of the *markers* that the description's words call
for (see :data:`RULES`): a criterion that says "a URL" is met by ``http``, one that
says "a source" also by ``source:``. So rewriting a description changes the answers
measurably, which is what regrade and align are tested on.

A request whose schema asks for ``proposals`` (align's request for rewrites) is
answered with :attr:`DescriptionJudge.proposals`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gradeloop.testing import verdict_reply

#: (a word the description may use, the markers in a draft that meet it).
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("source", ("http", "source:")),
    ("url", ("http",)),
    ("link", ("http",)),
    ("example", ("e.g.", "for example")),
    ("polite", ("please", "thank")),
)
_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(?: \(scored 1-10, needs [0-9.]+\))?: (.*)$")


def criteria_of(system: str) -> dict[str, str]:
    """``{key: description}`` from the ``<criteria>`` block of a judge system text."""
    block = system.split("<criteria>", 1)[-1].split("</criteria>", 1)[0]
    out = {}
    for line in block.splitlines():
        found = _LINE.match(line)
        if found:
            out[found.group(1)] = found.group(2)
    return out


def decide(description: str, draft: str) -> bool:
    """Met when the draft holds a marker of the first rule the description's words name."""
    words = description.lower()
    text = draft.lower()
    for word, markers in RULES:
        if word in words:
            return any(m in text for m in markers)
    return True  # a description naming nothing checkable: lenient


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "".join(b.get("text", "") for b in system if isinstance(b, dict))
    return str(system or "")


def _draft(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    return text.split("<draft>", 1)[-1].split("</draft>", 1)[0]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict(schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {}))
    return node


@dataclass
class DescriptionJudge:
    """The emulator's responder (``emulator.responder = DescriptionJudge()``)."""

    proposals: list[dict[str, Any]] = field(default_factory=list)
    asked: list[list[str]] = field(default_factory=list)  # the keys of each verdict request
    rewrite_requests: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Any:
        schema = body.get("output_config", {}).get("format", {}).get("schema", {})
        props = {k: _resolve(schema, v) for k, v in schema.get("properties", {}).items()}
        if "proposals" in props:
            self.rewrite_requests.append(body)
            return verdict_reply({"proposals": self.proposals})
        system = _system_text(body)
        described = criteria_of(system)
        draft = _draft(body)
        met_keys = list((props.get("criteria_met") or {}).get("properties", {}))
        score_keys = list((props.get("scores") or {}).get("properties", {}))
        self.asked.append(met_keys + score_keys)
        met = {k: decide(described.get(k, ""), draft) for k in met_keys}
        scores = {k: 9 if decide(described.get(k, ""), draft) else 3 for k in score_keys}
        reply: dict[str, Any] = {"reasoning": "read the draft against each description"}
        if score_keys:
            reply["scores"] = scores
        reply["criteria_met"] = met
        reply["passed"] = all(met.values()) and all(s >= 7 for s in scores.values())
        reply["issues"] = [f"{k}: not met" for k, v in met.items() if not v]
        return verdict_reply(json.loads(json.dumps(reply)))
