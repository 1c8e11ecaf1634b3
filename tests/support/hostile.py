"""Hostile judge replies for property tests: hypothesis strategies and the oracle.

A reply *document* is built as ordered key/value pairs (:class:`Obj`), so a key can
appear twice, as it can in JSON text. The oracle (:func:`meaning_of_text_doc`,
:func:`meaning_of_python`) says what the reply means by the rules gradeloop
promises, written independently of the code under test:

* valid: a JSON object with no duplicated key at any depth and nothing the JSON
  reader cannot take (nesting thousands deep, an integer thousands of digits long),
  whose ``reasoning`` is a string, ``passed`` a real boolean, ``issues`` a list of strings; every
  pass/fail key of the rubric a real boolean under ``criteria_met`` (and any
  scored key there a boolean too, which is ignored); every scored key an integer
  (``8`` or ``8.0``, never a bool or a string) from 1 to 10 under ``scores``;
  ``feedback``, if given, an object whose judged keys hold strings. Keys nobody
  asked for are ignored, at any level.
* good: valid, ``passed`` true, every pass/fail key true, every score at or above
  its key's threshold. Only a good reply may ever be accepted.

Counts: ``GRADELOOP_HOSTILE_EXAMPLES`` sets how many examples each property test
draws (default: a small number, so CI stays fast).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

from hypothesis import strategies as st

from gradeloop import Criterion, Rubric
from gradeloop.grading import Registry
from gradeloop.testing import (
    api_error,
    refusal,
    text_reply,
    thinking_only,
    truncated,
)


def examples(default: int) -> int:
    """How many examples a property test draws: ``GRADELOOP_HOSTILE_EXAMPLES`` or ``default``."""
    raw = os.environ.get("GRADELOOP_HOSTILE_EXAMPLES", "").strip()
    return int(raw) if raw else default


# -- documents ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Obj:
    """A JSON object as ordered pairs: duplicates allowed, exactly as text can hold them."""

    pairs: tuple[tuple[str, Any], ...]

    def get(self, key: str) -> Any:
        found = [v for k, v in self.pairs if k == key]
        return found[-1] if found else MISSING

    def set(self, key: str, value: Any) -> Obj:
        if any(k == key for k, _ in self.pairs):
            return Obj(tuple((k, value if k == key else v) for k, v in self.pairs))
        return Obj((*self.pairs, (key, value)))

    def drop(self, key: str) -> Obj:
        return Obj(tuple((k, v) for k, v in self.pairs if k != key))

    def add(self, key: str, value: Any) -> Obj:
        """Append ``key`` even if it is already there (a duplicate)."""
        return Obj((*self.pairs, (key, value)))


@dataclass(frozen=True)
class Deep:
    """A list nested ``depth`` levels deep (built without recursion)."""

    depth: int


@dataclass(frozen=True)
class Huge:
    """An integer too long for Python to print (more than 4,300 digits)."""

    digits: int = 5000


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def dumps(value: Any) -> str:
    """JSON text of a document, duplicates and all (NaN/Infinity as Python writes them)."""
    if isinstance(value, Obj):
        inner = ",".join(f"{json.dumps(k)}:{dumps(v)}" for k, v in value.pairs)
        return "{" + inner + "}"
    if isinstance(value, Deep):
        return "[" * value.depth + "]" * value.depth
    if isinstance(value, Huge):
        return "1" + "0" * value.digits
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


def to_python(value: Any) -> Any:
    """The document as Python values (a duplicated key keeps its last value)."""
    if isinstance(value, Obj):
        return {k: to_python(v) for k, v in value.pairs}
    if isinstance(value, Deep):
        out: list[Any] = []
        for _ in range(value.depth - 1):
            out = [out]
        return out
    if isinstance(value, Huge):
        return 10**value.digits
    if isinstance(value, list):
        return [to_python(v) for v in value]
    if isinstance(value, tuple):
        return tuple(to_python(v) for v in value)
    return value


def has_duplicates(value: Any) -> bool:
    if isinstance(value, Obj):
        keys = [k for k, _ in value.pairs]
        return len(keys) != len(set(keys)) or any(has_duplicates(v) for _, v in value.pairs)
    if isinstance(value, list | tuple):
        return any(has_duplicates(v) for v in value)
    return False


#: Nesting the JSON reader cannot take: such text is not a verdict.
TOO_DEEP = 5000


def unreadable(value: Any) -> bool:
    """Nesting or an integer the JSON reader cannot take: such text is not a verdict."""
    if isinstance(value, Deep):
        return value.depth >= TOO_DEEP
    if isinstance(value, Huge):
        return True
    if isinstance(value, Obj):
        return any(unreadable(v) for _, v in value.pairs)
    if isinstance(value, list | tuple):
        return any(unreadable(v) for v in value)
    return False


# -- the oracle ----------------------------------------------------------------------------

Meaning = Literal["invalid", "valid", "good"]


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_score(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return 1 <= v <= 10
    if isinstance(v, float):
        return v.is_integer() and 1 <= v <= 10
    return False


def meaning_of_python(d: Any, criteria: Sequence[Criterion]) -> Meaning:
    """What a Python value returned as a verdict means (the oracle for dict paths)."""
    if not isinstance(d, dict):
        return "invalid"
    pass_fail = [c for c in criteria if c.scale != "score"]
    scored = [c for c in criteria if c.scale == "score"]
    if not isinstance(d.get("reasoning", MISSING), str):
        return "invalid"
    if not _is_bool(d.get("passed", MISSING)):
        return "invalid"
    issues = d.get("issues", MISSING)
    if not isinstance(issues, list | tuple) or not all(isinstance(i, str) for i in issues):
        return "invalid"
    met = d.get("criteria_met", MISSING)
    if met is MISSING and pass_fail:
        return "invalid"
    if met is not MISSING:
        if not isinstance(met, dict):
            return "invalid"
        if any(c.key not in met for c in pass_fail):
            return "invalid"
        if any(c.key in met and not _is_bool(met[c.key]) for c in criteria):
            return "invalid"
    scores = d.get("scores", MISSING)
    if scores is MISSING and scored:
        return "invalid"
    if scores is not MISSING:
        if not isinstance(scores, dict):
            return "invalid"
        if any(c.key not in scores or not _is_score(scores[c.key]) for c in scored):
            return "invalid"
    feedback = d.get("feedback", MISSING)
    if feedback is not MISSING:
        if not isinstance(feedback, dict):
            return "invalid"
        if any(c.key in feedback and not isinstance(feedback[c.key], str) for c in criteria):
            return "invalid"
    good = (
        d["passed"] is True
        and all(met[c.key] is True for c in pass_fail)
        and all(scores[c.key] >= c.pass_threshold for c in scored)
    )
    return "good" if good else "valid"


def meaning_of_text_doc(doc: Any, criteria: Sequence[Criterion]) -> Meaning:
    """What a document sent as JSON text means."""
    if has_duplicates(doc) or unreadable(doc):
        return "invalid"
    py = to_python(doc)
    if _has_non_finite(py):
        return "invalid"  # NaN / Infinity are not JSON
    return meaning_of_python(py, criteria)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_non_finite(v) for v in value)
    return False


# -- criteria -------------------------------------------------------------------------------

_KEYS = ["a", "b", "api_cited", "x-y", "passed", "scores", "model_config", "k0"]


@st.composite
def criteria_sets(draw: st.DrawFn) -> tuple[Criterion, ...]:
    """1-4 judge-filled criteria: pass/fail and scored, with awkward key names."""
    n_pass_fail = draw(st.integers(0, 3))
    n_scored = draw(st.integers(0 if n_pass_fail else 1, 2))
    keys = draw(
        st.lists(
            st.sampled_from(_KEYS),
            min_size=n_pass_fail + n_scored,
            max_size=n_pass_fail + n_scored,
            unique=True,
        )
    )
    out = [Criterion(key=k, description=f"criterion {k}") for k in keys[:n_pass_fail]]
    for k in keys[n_pass_fail:]:
        threshold = draw(st.none() | st.integers(1, 10))
        out.append(
            Criterion(key=k, description=f"criterion {k}", scale="score", threshold=threshold)
        )
    return tuple(draw(st.permutations(out)))


def rubric_of(criteria: Sequence[Criterion]) -> Rubric:
    return Rubric.from_dict(
        {"criteria": [c.model_dump(exclude_none=True) for c in criteria]},
        registry=Registry(autoload=False),
    )


# -- hostile values -------------------------------------------------------------------------

_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="`"),
    max_size=30,
)

BOOL_JUNK: list[Any] = [
    "true",
    "false",
    "True",
    "yes",
    "no",
    "on",
    "1",
    1,
    0,
    1.0,
    None,
    [],
    {},
    [True],
    Obj((("value", True),)),
]
SCORE_JUNK: list[Any] = [
    0,
    -1,
    11,
    100,
    10**30,
    -(10**30),
    7.5,
    9.99,
    10.5,
    0.5,
    "9",
    "10",
    "7",
    True,
    False,
    None,
    float("nan"),
    float("inf"),
    [9],
    Obj((("v", 9),)),
    Huge(),
]
SCORE_FINE: list[Any] = [1, 7, 10, 8.0, 10.0, 1.0]
ANY_JUNK: list[Any] = [*BOOL_JUNK, *SCORE_JUNK, "", "text", Deep(20), Deep(TOO_DEEP)]


@st.composite
def documents(draw: st.DrawFn, criteria: Sequence[Criterion]) -> Obj:
    """A verdict document for ``criteria``: valid at first, then 0-3 hostile edits."""
    pass_fail = [c.key for c in criteria if c.scale != "score"]
    scored = [c for c in criteria if c.scale == "score"]
    all_met = draw(st.booleans())
    pairs: list[tuple[str, Any]] = [("reasoning", draw(_TEXT))]
    if scored:
        low = {c.key: int(c.pass_threshold) if all_met else 1 for c in scored}
        pairs.append(
            ("scores", Obj(tuple((c.key, draw(st.integers(low[c.key], 10))) for c in scored)))
        )
    if pass_fail:
        pairs.append(
            (
                "criteria_met",
                Obj(tuple((k, True if all_met else draw(st.booleans())) for k in pass_fail)),
            )
        )
    pairs.append(("passed", True if all_met else draw(st.booleans())))
    pairs.append(("issues", draw(st.lists(_TEXT, max_size=2))))
    doc = Obj(tuple(pairs))
    for _ in range(draw(st.integers(0, 3))):
        doc = draw(_edit(doc, criteria))
    return doc


def _edit(doc: Obj, criteria: Sequence[Criterion]) -> st.SearchStrategy[Obj]:
    pass_fail = [c.key for c in criteria if c.scale != "score"]
    scored = [c.key for c in criteria if c.scale == "score"]

    def in_section(section: str, fn: Any) -> Obj:
        inner = doc.get(section)
        return doc.set(section, fn(inner)) if isinstance(inner, Obj) else doc

    edits: list[st.SearchStrategy[Obj]] = [
        st.sampled_from(BOOL_JUNK).map(lambda v: doc.set("passed", v)),
        st.sampled_from(["reasoning", "passed", "issues", "criteria_met", "scores"]).map(doc.drop),
        st.sampled_from(ANY_JUNK).map(lambda v: doc.set("confidence", v)),
        st.tuples(st.sampled_from(["criteria_met", "scores"]), st.sampled_from(ANY_JUNK)).map(
            lambda kv: doc.set(*kv)
        ),
        st.booleans().map(lambda v: doc.add("passed", v)),
        st.sampled_from([5, None, ["r"], Obj(())]).map(lambda v: doc.set("reasoning", v)),
        st.sampled_from(["none", [1], None, [None], Obj(())]).map(lambda v: doc.set("issues", v)),
        st.sampled_from(ANY_JUNK).map(
            lambda v: in_section("criteria_met", lambda o: o.set("zz_extra", v))
        ),
        st.sampled_from(ANY_JUNK).map(
            lambda v: in_section("scores", lambda o: o.set("zz_extra", v))
        ),
        st.just(doc.set("nested", Obj((("x", 1), ("x", 2))))),  # a duplicate deep down
        st.sampled_from([Obj((("note", "fine"),)), Obj(())]).map(lambda v: doc.set("feedback", v)),
    ]
    if pass_fail:
        edits += [
            st.tuples(st.sampled_from(pass_fail), st.sampled_from(BOOL_JUNK)).map(
                lambda kv: in_section("criteria_met", lambda o: o.set(*kv))
            ),
            st.tuples(st.sampled_from(pass_fail), st.booleans()).map(
                lambda kv: in_section("criteria_met", lambda o: o.add(*kv))
            ),
            st.sampled_from(pass_fail).map(
                lambda k: in_section("criteria_met", lambda o: o.drop(k))
            ),
            st.just(doc.add("criteria_met", Obj(tuple((k, True) for k in pass_fail)))),
            st.tuples(st.sampled_from(pass_fail), st.sampled_from(["fine", 3])).map(
                lambda kv: doc.set("feedback", Obj((kv,)))
            ),
        ]
    if scored:
        edits += [
            st.tuples(st.sampled_from(scored), st.sampled_from(SCORE_JUNK + SCORE_FINE)).map(
                lambda kv: in_section("scores", lambda o: o.set(*kv))
            ),
            st.tuples(st.sampled_from(scored), st.integers(1, 10)).map(
                lambda kv: in_section("scores", lambda o: o.add(*kv))
            ),
            st.sampled_from(scored).map(lambda k: in_section("scores", lambda o: o.drop(k))),
            st.tuples(st.sampled_from(scored), st.sampled_from([True, False, "yes"])).map(
                lambda kv: (
                    in_section("criteria_met", lambda o: o.set(*kv))
                    if isinstance(doc.get("criteria_met"), Obj)
                    else doc.set("criteria_met", Obj((kv,)))
                )
            ),
            st.just(doc.add("scores", Obj(tuple((k, 10) for k in scored)))),
        ]
    return st.one_of(edits)


# -- replies --------------------------------------------------------------------------------

Wrapper = Literal["bare", "fenced", "prose", "spaced"]


def wrap(text: str, how: Wrapper) -> str:
    if how == "fenced":
        return f"```json\n{text}\n```"
    if how == "prose":
        return f"Here is my verdict:\n{text}\nThat is all."
    if how == "spaced":
        return f"\n  {text}  \n"
    return text


NOT_JSON = [
    "The draft looks fine to me.",
    "{",
    '{"passed": true',
    "```json\n```",
    "null",
    "[]",
    "true",
    '"passed"',
    "{}",
]


def label(value: Any) -> str:
    """A short repr that survives integers Python refuses to print."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = "<a value too long or too deep to print>"
    return text if len(text) <= 300 else text[:300] + "..."


@dataclass
class Reply:
    """One scripted reply: what the client returns, and what it means."""

    item: Any
    meaning: Meaning
    label: str

    def __repr__(self) -> str:
        return f"Reply({self.label}, {self.meaning})"


def _text(text: str, meaning: Meaning, label: str, **kw: Any) -> Reply:
    return Reply(text_reply(text, **kw), meaning, label)


def parsed_reply(value: Any, text: str | None = None) -> SimpleNamespace:
    """A reply carrying the client's own parsed value (and, if given, the text too)."""
    content = [SimpleNamespace(type="text", text=text)] if text is not None else []
    return SimpleNamespace(
        parsed_output=value, stop_reason="end_turn", content=content, model="m", usage=None
    )


@st.composite
def replies(draw: st.DrawFn, criteria: Sequence[Criterion]) -> Reply:
    """One judge reply of any kind, with the oracle's reading of it."""
    kind = draw(
        st.sampled_from(
            [
                "text",
                "text",
                "text",
                "text",
                "thinking+text",
                "stop_sequence",
                "not_json",
                "truncated",
                "refusal",
                "thinking_only",
                "empty",
                "api_error",
                "unfinished",
                "parsed",
                "parsed+text",
                "two_objects",
            ]
        )
    )
    if kind in ("text", "thinking+text", "stop_sequence", "truncated", "parsed+text"):
        doc = draw(documents(criteria))
        how = draw(st.sampled_from(["bare", "fenced", "prose", "spaced"]))
        text = wrap(dumps(doc), how)
        # prose beside a verdict can contradict it: refused, whatever the object says
        meaning = "invalid" if how == "prose" else meaning_of_text_doc(doc, criteria)
        if kind == "text":
            return _text(text, meaning, f"text {text[:300]!r}")
        if kind == "thinking+text":
            return _text(text, meaning, f"thinking+text {text[:300]!r}", thinking="hmm")
        if kind == "stop_sequence":
            return _text(
                text, meaning, f"stop_sequence {text[:300]!r}", stop_reason="stop_sequence"
            )
        if kind == "truncated":
            return Reply(truncated(text), "invalid", "max_tokens stop")
        other = draw(documents(criteria))
        return Reply(
            parsed_reply(to_python(other), text),
            meaning,
            f"parsed {label(to_python(other))} + text {text[:300]!r}",
        )
    if kind == "two_objects":  # an example, then the answer: ambiguous, whatever each says
        first, second = draw(documents(criteria)), draw(documents(criteria))
        how = draw(st.sampled_from(["bare", "fenced", "spaced"]))
        text = f"{wrap(dumps(first), how)}\n{wrap(dumps(second), 'fenced')}"
        return _text(text, "invalid", f"two objects {text[:300]!r}")
    if kind == "not_json":
        text = draw(st.sampled_from(NOT_JSON))
        return _text(text, "invalid", f"not json {text!r}")
    if kind == "refusal":
        return Reply(refusal(category="cyber"), "invalid", "refusal")
    if kind == "thinking_only":
        return Reply(thinking_only(), "invalid", "thinking only")
    if kind == "empty":
        return _text(draw(st.sampled_from(["", "   "])), "invalid", "empty text")
    if kind == "api_error":
        status = draw(st.sampled_from([400, 401, 429, 500, 529]))
        return Reply(api_error(status), "invalid", f"api error {status}")
    if kind == "unfinished":
        stop = draw(st.sampled_from(["tool_use", "pause_turn", "model_context_window_exceeded"]))
        doc = draw(documents(criteria))
        return _text(dumps(doc), "invalid", f"stop {stop}", stop_reason=stop)
    doc = draw(documents(criteria))
    value = to_python(doc)
    return Reply(parsed_reply(value), meaning_of_python(value, criteria), f"parsed {label(value)}")


#: Every way a custom judge's evaluate() may answer.
CustomKind = Literal["dict", "verdict", "other"]


@st.composite
def custom_answers(draw: st.DrawFn, criteria: Sequence[Criterion]) -> tuple[CustomKind, Any]:
    """What a custom judge returns: a dict, a dict to build a Verdict from, or junk."""
    kind: CustomKind = draw(st.sampled_from(["dict", "dict", "verdict", "other"]))
    if kind == "other":
        other = draw(st.sampled_from([None, "passed", 1, True, ["a"], ("x",), 3.5]))
        return kind, other
    return kind, to_python(draw(documents(criteria)))


# -- running a script through the real judge, and through a custom judge ----------------------


@dataclass(frozen=True)
class Outcome:
    """What grade() made of a script: a verdict or a judge failure, and how many calls."""

    produced: bool
    accepted: bool
    calls: int
    error: str = ""


def through_anthropic_judge(
    criteria: Sequence[Criterion], script: Sequence[Reply], mode: str
) -> Outcome:
    """grade() with the real AnthropicJudge on a ScriptedClient holding ``script``."""
    from gradeloop import AnthropicJudge, grade
    from gradeloop.errors import JudgeError
    from gradeloop.testing import ScriptedClient

    client = ScriptedClient(*(r.item for r in script))
    judge = AnthropicJudge(client=client, model="m", structured=mode)  # type: ignore[arg-type]
    try:
        ev = grade("the draft", rubric_of(criteria), task="the task", judge=judge)
    except JudgeError as exc:
        return Outcome(False, False, len(client.calls), str(exc))
    return Outcome(True, ev.accepted, len(client.calls))


def judge_violations(
    criteria: Sequence[Criterion], script: Sequence[Reply], mode: str, out: Outcome
) -> list[str]:
    """Broken promises: the last reply read decides everything, and only a good one passes."""
    problems = []
    if out.calls < 1 or out.calls > len(script):
        return [f"{out.calls} calls for a script of {len(script)}"]
    last = script[out.calls - 1]
    if out.accepted and last.meaning != "good":
        problems.append(f"FALSE PASS on {last!r}")
    if out.produced != (last.meaning != "invalid"):
        what = "a verdict from" if out.produced else "a judge failure on"
        problems.append(f"{what} {last!r} ({out.error})")
    elif out.produced and out.accepted != (last.meaning == "good"):
        problems.append(f"a good reply was not accepted: {last!r}")
    if mode == "native" and out.calls != 1:
        problems.append(f"native mode made {out.calls} calls")
    return problems


class CustomJudge:
    """A user's judge whose evaluate() returns whatever it was given."""

    def __init__(self, kind: CustomKind, value: Any) -> None:
        self.kind, self.value = kind, value

    def evaluate(self, task: str, draft: str, criteria: Sequence[Criterion]) -> Any:
        if self.kind == "verdict":
            from gradeloop import Verdict

            data = self.value if isinstance(self.value, dict) else {}
            return Verdict(**{"criteria_met": {}, **data})
        return self.value


def custom_meaning(criteria: Sequence[Criterion], kind: CustomKind, value: Any) -> Meaning:
    if kind == "other":
        return "invalid"
    if kind == "verdict" and isinstance(value, dict):
        value = {"criteria_met": {}, **value}
    return meaning_of_python(value, criteria)


def through_custom_judge(criteria: Sequence[Criterion], kind: CustomKind, value: Any) -> Outcome:
    from gradeloop import grade
    from gradeloop.errors import JudgeError

    try:
        ev = grade("the draft", rubric_of(criteria), task="t", judge=CustomJudge(kind, value))
    except JudgeError as exc:
        return Outcome(False, False, 1, str(exc))
    return Outcome(True, ev.accepted, 1)


def custom_violations(
    criteria: Sequence[Criterion], kind: CustomKind, value: Any, out: Outcome
) -> list[str]:
    meaning = custom_meaning(criteria, kind, value)
    problems = []
    if out.accepted and meaning != "good":
        problems.append(f"FALSE PASS on {kind} {label(value)}")
    if kind == "dict" and out.produced != (meaning != "invalid"):
        what = "a verdict from" if out.produced else "a judge failure on"
        problems.append(f"{what} {meaning} dict {label(value)} ({out.error})")
    elif kind == "dict" and out.produced and out.accepted != (meaning == "good"):
        problems.append(f"a good dict was not accepted: {label(value)}")
    if kind == "other" and out.produced:
        problems.append(f"a verdict from {type(value).__name__} {label(value)}")
    return problems
