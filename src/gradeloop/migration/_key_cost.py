"""What each criterion costs in judge tokens: what moving it to code would save.

The judge's usage is measured per request (the judge's call records); which key caused
which token is not. So measured usage is *attributed* to keys, like this:

* **input**: a key's share is the text it adds to the request - its line in the
  system prompt's ``<criteria>`` block (and, in JSON mode, its properties in the
  schema written into that prompt) - divided by the request's whole text (system
  prompt, task and draft). It is measured as a difference: the request built
  with the key minus the request built without it. What no single key adds (the
  instructions, the task, the draft) stays with the call, and is only saved when
  the *last* judge key leaves. In native mode the schema travels as
  ``output_config``; how the API bills that is not among the verified facts, so
  it is left out of both sides of the fraction: the saving shown is a floor;
* **output**: split evenly among the keys asked, since the judge writes evidence
  and a verdict for each criterion; the reply's skeleton (``passed``, braces) is
  a few tokens and is shared out with the rest;
* a key that is the only one the judge is asked about owns the whole call, input
  and output (``whole_call``): moving it to code removes the request.

Input counts are every input token (uncached, cache writes and cache reads
together, :attr:`Usage.total_input`); cached reads are billed at a tenth, so the
saving in money on a warm cache is smaller than the saving in tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..grading._rubric import Criterion
from ..models._prompts import judge_system, judge_user
from ..models._usage import Usage

__all__ = [
    "CostLedger",
    "KeyCost",
    "KeyShare",
    "judge_request_text",
    "key_shares",
    "request_size",
]


@dataclass(frozen=True)
class KeyShare:
    """The fraction of one request's input and output attributed to a key."""

    input: float
    output: float
    whole_call: bool = False


def judge_request_text(criteria: Sequence[Criterion], *, json_mode: bool = False) -> str:
    """The criteria-dependent text of a judge request counted as input: the system
    prompt (with the schema inside it in JSON mode)."""
    if not criteria:
        return ""
    if not json_mode:
        return judge_system(criteria)
    from ..models._wire import wire_spec  # imports the anthropic SDK; only cost reports need it

    return judge_system(criteria, wire_spec(criteria).schema_text())


def request_size(criteria: Sequence[Criterion]) -> dict[str, Any]:
    """What the judge is asked: its keys, and the sizes of its system prompt and schema."""
    if not criteria:
        # a rubric the judge answers nothing of: no schema, and no SDK import for one
        return {"keys": [], "system_chars": 0, "schema_chars": 0}
    from ..models._wire import wire_spec  # imports the anthropic SDK

    return {
        "keys": [c.key for c in criteria],
        "system_chars": len(judge_system(criteria)),
        "schema_chars": len(wire_spec(criteria).schema_text()),
    }


def key_shares(
    asked: Sequence[Criterion], task: str, draft: str, *, json_mode: bool = False
) -> dict[str, KeyShare]:
    """Each asked key's share of one judge request (see the module docstring)."""
    if not asked:
        return {}
    if len(asked) == 1:
        return {asked[0].key: KeyShare(1.0, 1.0, whole_call=True)}
    full = len(judge_request_text(asked, json_mode=json_mode))
    total = full + len(judge_user(task, draft))
    out = {}
    for c in asked:
        rest = [o for o in asked if o.key != c.key]
        added = full - len(judge_request_text(rest, json_mode=json_mode))
        out[c.key] = KeyShare(max(0, added) / total, 1 / len(asked))
    return out


@dataclass
class KeyCost:
    """Judge tokens attributed to one key over a run of drafts."""

    key: str
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    drafts: int = 0
    whole_call: bool = False

    @property
    def per_draft_input(self) -> float:
        """Attributed input tokens per draft judged."""
        return self.input_tokens / self.drafts if self.drafts else 0.0

    @property
    def per_draft_output(self) -> float:
        """Attributed output tokens per draft judged."""
        return self.output_tokens / self.drafts if self.drafts else 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, tokens rounded to 0.1."""
        return {
            "key": self.key,
            "input_tokens": round(self.input_tokens, 1),
            "output_tokens": round(self.output_tokens, 1),
            "drafts": self.drafts,
            "per_draft": {
                "input": round(self.per_draft_input, 1),
                "output": round(self.per_draft_output, 1),
            },
            "whole_call": self.whole_call,
        }


@dataclass
class CostLedger:
    """Adds up measured judge usage per draft and attributes it to keys."""

    keys: dict[str, KeyCost] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    drafts: int = 0

    def add(
        self,
        asked: Sequence[Criterion],
        task: str,
        draft: str,
        records: Sequence[Any],
        *,
        json_mode: bool = False,
    ) -> None:
        """Attribute the judge call records of one draft (those metered while grading it)."""
        usage = sum(
            (r.usage for r in records if isinstance(getattr(r, "usage", None), Usage)), Usage()
        )
        if not records:
            return
        self.calls += len(records)
        self.drafts += 1
        self.usage = self.usage + usage
        for key, share in key_shares(asked, task, draft, json_mode=json_mode).items():
            cost = self.keys.setdefault(key, KeyCost(key))
            cost.input_tokens += share.input * usage.total_input
            cost.output_tokens += share.output * usage.output_tokens
            cost.drafts += 1
            cost.whole_call = share.whole_call

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: calls, drafts, measured usage and each key's cost."""
        return {
            "calls": self.calls,
            "drafts": self.drafts,
            "usage": self.usage.to_dict(),
            "keys": {k: c.to_json() for k, c in self.keys.items()},
        }
