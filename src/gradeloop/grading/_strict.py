"""The one strict reading of a judge's answer, whatever road it arrived by.

Every verdict that enters :func:`~gradeloop.grade` passes through
:func:`strict_verdict`: the reply text of :class:`~gradeloop.AnthropicJudge` (after
:func:`strict_json`), a client's own parsed object, a cached reply, and whatever a
custom judge's ``evaluate()`` returns (a :class:`Verdict`, a dict, or a pydantic
object). The rules, for the judge-filled ``criteria`` asked about:

* ``reasoning`` is a string, ``passed`` a real boolean, ``issues`` a list of strings;
* every pass/fail key is in ``criteria_met`` as a real boolean (``"true"``,
  ``"yes"``, ``1`` are not booleans); a scored key there must be a boolean too, and
  is ignored: its score decides it;
* every scored key is in ``scores`` as an integer from 1 to 10 (``8`` or ``8.0``;
  ``7.5``, ``11``, ``"9"``, ``true``, NaN are invalid, never clamped), and is met when
  it reaches the criterion's threshold - decided here, never taken from the judge;
* "every key" has two exceptions: shadow keys a caller marks optional, and a
  ready-made :class:`Verdict` (the public type), which may leave a key out - it
  then does not vouch for that key, and the gate fails it;
* ``feedback``, when present, is an object whose judged keys hold strings;
* keys nobody asked for are ignored, at any level (a chatty local model's extras);
* in text, a key that appears twice in one object (at any depth) makes the reply
  ambiguous, so invalid; so are ``NaN``/``Infinity`` and nesting too deep to read;
* a reply's text is one JSON object alone (:func:`strict_reply`): a code fence around
  it is tolerated, nothing else. Two objects (an example, then the answer; two fenced
  blocks) are ambiguous, and so is prose beside the object ("I must fail this...
  {..."passed": true...}"): gradeloop cannot tell which reading the model meant, so it
  reads neither.

Anything else raises :class:`WireError`, which the judge turns into a repair
request (JSON mode) or a :class:`~gradeloop.errors.JudgeError` - never a pass.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ._guidance import SCORE_MAX, SCORE_MIN
from ._rubric import Criterion
from ._verdict import Verdict

__all__ = [
    "SCORE_MAX",
    "SCORE_MIN",
    "WireError",
    "strict_json",
    "strict_reply",
    "strict_verdict",
]


class WireError(ValueError):
    """A judge's answer that is not a valid verdict: not JSON, ambiguous, or off-schema."""


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses what a lenient reader would quietly resolve.

    A duplicated key (Python would keep the last value), ``NaN``/``Infinity``, an
    integer too long to convert, and nesting too deep for the reader all raise
    :class:`WireError` naming the problem.

    A raw control character (a newline, a tab) inside a string is read as it stands
    (``strict=False``), whatever the path, first reply or repair: JSON wants it escaped,
    but it can only sit inside a string (a ``reasoning``, an issue), never in a key's
    boolean or score, so it cannot change what a reply decides; a key spelled with one
    matches no criterion and is missing. Small models under a grammar that allows it
    (llama-cpp-python's) write one in about a reply in five, and refusing those would
    throw away verdicts that say exactly what they mean.
    """
    try:
        return json.loads(
            text, strict=False, object_pairs_hook=_unique_keys, parse_constant=_no_constant
        )
    except WireError:
        raise
    except RecursionError:
        raise WireError("the reply's JSON is nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, and the int-digits limit
        raise WireError(f"invalid JSON: {exc}") from None


def strict_reply(text: str) -> Any:
    """The one JSON value a judge's reply text holds, read by :func:`strict_json`'s rules.

    The text must be the JSON object alone, or inside one code fence (```` ```json ````).
    More than one JSON object anywhere in the text, or any other text before or after
    the object, raises :class:`WireError`: a reply that holds two readings is ambiguous
    (small models often echo an example before their answer, or argue in prose against
    the verdict they give), and the judge's one repair says so.
    """
    objects = _object_count(text)
    if objects > 1:
        raise WireError(
            f"the reply holds {objects} JSON objects; a verdict is one JSON object, alone "
            "(an example followed by an answer is ambiguous)"
        )
    body = _unfenced(text.strip())
    start = body.find("{")
    if start > 0:
        _outside(body[:start])
    try:
        value, end = _DECODER.raw_decode(body)
    except WireError:
        raise
    except RecursionError:
        raise WireError("the reply's JSON is nested too deeply to read") from None
    except ValueError as exc:
        raise WireError(f"invalid JSON: {exc}") from None
    if body[end:].strip():
        _outside(body[end:].strip())
    return value


def _outside(text: str) -> None:
    shown = text if len(text) <= 60 else text[:57] + "..."
    raise WireError(
        f"the reply holds text besides its JSON object ({shown!r}); reply with the JSON "
        "object alone (prose beside a verdict can contradict it)"
    )


def _unfenced(text: str) -> str:
    """The inside of one code fence that is the whole of ``text`` (its first line, the
    info string such as ``json``, dropped), or ``text`` itself."""
    if not (text.startswith("```") and text.endswith("```") and len(text) >= 6):
        return text
    inner = text[3:-3]
    newline = inner.find("\n")
    if newline == -1 or inner[:newline].strip().lower() not in ("", "json"):
        return text
    return inner[newline + 1 :].strip()


# A backslash and the character it escapes, a brace, or a quote: all the scan below
# needs to see, so it walks a reply once (linear, whatever the reply holds).
_TOKENS = re.compile(r'\\.|[{}"]', re.DOTALL)
# An object opening as JSON does ({"key" or {}), not a brace in prose ({name}).
_OPENS_JSON = re.compile(r'\{\s*["}]')


def _object_count(text: str) -> int:
    """How many top-level JSON objects ``text`` holds, fenced or bare (braces inside
    strings, and braces in prose that open no JSON object, are not counted)."""
    count = depth = 0
    in_string = False
    for match in _TOKENS.finditer(text):
        token = match.group()
        if depth == 0:
            if token == "{":
                depth = 1
                count += _OPENS_JSON.match(text, match.start()) is not None
        elif in_string:
            in_string = token != '"'
        elif token == '"':
            in_string = True
        elif token in "{}":
            depth += 1 if token == "{" else -1
    return count


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise WireError(
                f"the key {key!r} appears twice in one JSON object; a reply with a "
                "duplicated key is ambiguous"
            )
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise WireError(f"{name} is not a JSON value")


# strict=False: a raw control character inside a string is read as it stands (see strict_json)
_DECODER = json.JSONDecoder(
    strict=False, object_pairs_hook=_unique_keys, parse_constant=_no_constant
)


def strict_verdict(
    answer: Any, criteria: Sequence[Criterion], *, optional: Collection[str] = ()
) -> Verdict:
    """Validate a judge's ``answer`` for the judge-filled ``criteria`` into a Verdict.

    ``answer`` may be a mapping (parsed JSON, a custom judge's dict), a
    :class:`Verdict` or another pydantic object; its raw values are checked, so a
    verdict built with loose values cannot slip through. Scored keys' met-ness is
    decided here from the score. Raises :class:`WireError` for anything invalid.

    Every key must be answered, except the keys in ``optional`` (shadow keys, whose
    absence must not sink the keys that decide) - and except in a ready-made
    :class:`Verdict`, the public type, where a key left out is a key it does not
    vouch for: it stays out of the result, and the gate fails it (seed 002).
    """
    data = _as_mapping(answer)
    keys = {c.key for c in criteria}
    may_omit = keys if isinstance(answer, Verdict) else keys & set(optional)
    must = [c for c in criteria if c.key not in may_omit]
    reasoning = _required(data, "reasoning", str, "a string")
    passed = _required(data, "passed", bool, "true or false")
    issues = _issues(data)
    claims = _section(data, "criteria_met", required=any(c.scale != "score" for c in must))
    given = _section(data, "scores", required=any(c.scale == "score" for c in must))
    met: dict[str, bool] = {}
    scores: dict[str, float] = {}
    for c in criteria:
        if c.key in claims or (c.scale != "score" and c.key not in may_omit):
            met[c.key] = _claim(claims, c.key)
        if c.scale == "score":
            met.pop(c.key, None)  # a judge's boolean never decides a scored key
            if c.key in given or c.key not in may_omit:
                scores[c.key] = _score(_entry(given, "scores", c.key), c.key)
                met[c.key] = scores[c.key] >= c.pass_threshold
    fields = {
        "reasoning": reasoning,
        "criteria_met": {c.key: met[c.key] for c in criteria if c.key in met},
        "passed": passed,
        "issues": issues,
        "scores": scores,
        "feedback": _feedback(data, criteria),
    }
    if isinstance(answer, Verdict):
        # keep a subclass and its extra fields (a SampledVerdict's samples): every
        # value set here was checked above
        return answer.model_copy(update=fields)
    return Verdict(**fields)


def _claim(claims: Mapping[str, Any], key: str) -> bool:
    value = _entry(claims, "criteria_met", key)
    if not isinstance(value, bool):
        raise WireError(f"criteria_met.{key}: {_expected('true or false', value)}")
    return value


def _as_mapping(answer: Any) -> Mapping[str, Any]:
    if isinstance(answer, Verdict):
        # the raw attribute values: a Verdict built with model_construct, or changed
        # after it was built, is held to the same rules as a dict
        return {name: getattr(answer, name) for name in type(answer).model_fields}
    if isinstance(answer, BaseModel):
        return answer.model_dump(by_alias=True, warnings=False)
    if isinstance(answer, Mapping):
        return answer
    raise WireError(f"the judge returned {_kind(answer)}, not a verdict (a Verdict or a dict)")


def _required(data: Mapping[str, Any], name: str, type_: type | tuple[type, ...], what: str) -> Any:
    if name not in data:
        raise WireError(f"{name}: missing")
    value = data[name]
    if not isinstance(value, type_):
        raise WireError(f"{name}: {_expected(what, value)}")
    return value


def _issues(data: Mapping[str, Any]) -> list[str]:
    value = _required(data, "issues", (list, tuple), "a list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise WireError(f"issues.{i}: {_expected('a string', item)}")
    return list(value)


def _section(data: Mapping[str, Any], name: str, *, required: bool) -> Mapping[str, Any]:
    if name not in data:
        if required:
            raise WireError(f"{name}: missing")
        return {}
    value = data[name]
    if not isinstance(value, Mapping):
        raise WireError(f"{name}: {_expected('an object', value)}")
    return value


def _entry(section: Mapping[str, Any], name: str, key: str) -> Any:
    if key not in section:
        raise WireError(f"{name}.{key}: missing")
    return section[key]


def _score(value: Any, key: str) -> float:
    where = f"scores.{key}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WireError(
            f"{where}: {_expected(f'an integer from {SCORE_MIN} to {SCORE_MAX}', value)}"
        )
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise WireError(
            f"{where}: {_short(value)} is not an integer from {SCORE_MIN} to {SCORE_MAX}"
        )
    if not SCORE_MIN <= value <= SCORE_MAX:
        raise WireError(f"{where}: {_short(value)} is outside {SCORE_MIN}-{SCORE_MAX}")
    return float(value)


def _feedback(data: Mapping[str, Any], criteria: Sequence[Criterion]) -> dict[str, str]:
    given = _section(data, "feedback", required=False)
    out = {}
    for c in criteria:
        if c.key in given:
            value = given[c.key]
            if not isinstance(value, str):
                raise WireError(f"feedback.{c.key}: {_expected('a string', value)}")
            out[c.key] = value
    return out


def _expected(what: str, value: Any) -> str:
    return f"expected {what}, got {_kind(value)} {_short(value)}"


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _short(value: Any, limit: int = 40) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**limit:
        return "a very large integer"  # never render it: it may have thousands of digits
    if isinstance(value, str | int | float | bool) or value is None:
        text = (
            json.dumps(value)
            if not isinstance(value, float) or math.isfinite(value)
            else str(value)
        )
    else:
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
