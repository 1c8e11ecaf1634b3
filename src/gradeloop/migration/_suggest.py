"""Rubric ``examples`` suggested from the drafts where the judge disagreed with people.

``gradeloop calibrate --suggest-examples`` prints, per judge key, up to a few
labelled drafts the judge got wrong, as a TOML ``examples = [...]`` array to
paste into that criterion. The label decides the example (``met`` for a
pass/fail key, ``score`` for a scored one); shorter drafts are picked first,
because every example is sent with every judge request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..grading._rubric import Criterion, Rubric

__all__ = ["LONG_EXAMPLE", "Disagreement", "suggest_examples", "suggestions_toml"]

#: A suggested example longer than this many characters gets a note to trim it.
LONG_EXAMPLE = 600


@dataclass(frozen=True)
class Disagreement:
    """A labelled draft on which the judge reached the other answer than the label."""

    key: str
    output_id: str
    draft: str
    label: bool | float
    judge_met: bool
    judge_score: float | None = None

    def example(self, c: Criterion) -> dict[str, Any] | None:
        """The rubric example this draft makes for ``c`` (None when the label cannot say)."""
        said = f"said {_met(self.judge_met)}"
        if c.scale == "score" and self.judge_score is not None:
            said = f"scored {self.judge_score:g}"
        if c.scale == "score":
            if isinstance(self.label, bool):
                return None  # a yes/no label does not say which score to teach
            label = max(1, min(10, round(self.label)))
            return {"text": self.draft, "score": label, "why": _why(f"{label}", said)}
        if not isinstance(self.label, bool):
            return None
        return {"text": self.draft, "met": self.label, "why": _why(_met(self.label), said)}


def _met(met: bool) -> str:
    return "met" if met else "not met"


def _why(label: str, said: str) -> str:
    return f"labelled {label} by a person; the judge {said}. Replace with the reason."


def suggest_examples(
    rubric: Rubric, disagreements: Sequence[Disagreement], *, per_key: int = 3
) -> dict[str, list[dict[str, Any]]]:
    """Up to ``per_key`` examples per judge key, shortest drafts first, in rubric order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in rubric:
        picked = [d for d in disagreements if d.key == c.key]
        picked.sort(key=lambda d: (len(d.draft), d.output_id))
        examples = [e for d in picked if (e := d.example(c)) is not None]
        known = {e.text for e in c.examples}
        examples = [e for e in examples if e["text"] not in known][:per_key]
        if examples:
            out[c.key] = examples
    return out


def suggestions_toml(suggested: dict[str, list[dict[str, Any]]]) -> str:
    """The suggestions as TOML to paste, one ``examples`` array per criterion."""
    parts = []
    for key, examples in suggested.items():
        rows = ",\n".join(f"  {_inline(e)}" for e in examples)
        head = f"# criterion {key!r}: add to (or merge with) its examples"
        longest = max(len(str(e["text"])) for e in examples)
        if longest > LONG_EXAMPLE:
            head += (
                f"\n# note: a text here has {longest} characters and examples go with every "
                "judge request; trim each to the part that decides the key"
            )
        parts.append(f"{head}\nexamples = [\n{rows},\n]")
    return "\n\n".join(parts) + ("\n" if parts else "")


def _inline(example: dict[str, Any]) -> str:
    fields = []
    for name, value in example.items():
        if isinstance(value, bool):
            fields.append(f"{name} = {'true' if value else 'false'}")
        elif isinstance(value, int):
            fields.append(f"{name} = {value}")
        else:
            fields.append(f"{name} = {_toml_string(str(value))}")
    return "{ " + ", ".join(fields) + " }"


def _toml_string(text: str) -> str:
    # a JSON string is a TOML basic string, except that TOML also forbids a raw DEL
    # and has no "\/" escape (json.dumps never writes one)
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
