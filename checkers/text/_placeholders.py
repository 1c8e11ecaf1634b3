"""``no_placeholders``: template leftovers and elided sections in a draft.

Code blocks are checked by default, on purpose: ``# TODO`` and ``# ... rest of the
code`` inside a code sample are the most common way a model leaves work undone.
Set ``ignore_code = true`` to check prose only (what ``sentence_len`` reads: no
fenced or indented code, no inline code, math, HTML comments or front matter), or
disable single kinds.
"""

from __future__ import annotations

import re
from typing import Literal

from gradeloop import CheckResult
from gradeloop.grading import LinearRegex, linear_regex

from .._options import Regex, regex_error
from ..markdown._lines import prose_lines, quote, split_lines

MAX_LISTED = 10

Kind = Literal["todo", "lorem", "brackets", "angle", "template", "ellipsis", "elision"]

_FILL = r"(?:insert|add|enter|your|placeholder|fill[ -]in|replace)"
# Each kind is matched line by line, so none of them can run across a line break.
PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "todo": (re.compile(r"\b(?:TODO|TBD|FIXME|XXX)\b"),),
    "lorem": (re.compile(r"\blorem\s+ipsum\b", re.IGNORECASE),),
    # "[insert name]", "[Your Company]" -- but not a Markdown link "[your account](...)"
    "brackets": (re.compile(rf"\[{_FILL}\b[^\[\]]{{0,80}}\](?![(\[])", re.IGNORECASE),),
    "angle": (re.compile(rf"<{_FILL}\b[^<>]{{0,80}}>", re.IGNORECASE),),
    "template": (re.compile(r"\{\{[\w.\- \t]{1,60}\}\}"),),
    "ellipsis": (
        # a line that is nothing but an ellipsis: "...", "…", "[...]", "(...)"
        re.compile(r"^[ \t>]*(?:\.{3,}|…|\[(?:\.{3}|…)\]|\((?:\.{3}|…)\))[ \t]*$"),
        # a comment that opens with one: "# ...", "// ... unchanged", "<!-- ... -->"
        re.compile(r"^[ \t]*(?:#|//|/\*|<!--|--|;)[ \t]*(?:\.{3,}|…)"),
    ),
    "elision": (
        # "rest of the code here", "existing code unchanged", "implementation goes here"
        re.compile(
            r"\b(?:(?:rest|remainder) of (?:the |this |your )?|existing |remaining |previous "
            r"|other |your |more )(?:code|implementation|function|file|class|method|logic)s? "
            r"(?:here|goes here|unchanged|omitted|remains? (?:the same|unchanged)|as before"
            r"|stays the same)\b"
            r"|\b(?:code|implementation|logic) goes here\b"
            r"|\b(?:omitted|elided|truncated|skipped|left out|abbreviated) for brevity\b",
            re.IGNORECASE,
        ),
        # a comment that opens with "rest of ...": "# rest of the code", "// ... rest of file"
        re.compile(
            r"^[ \t]*(?:#|//|/\*|<!--|--)[ \t]*(?:(?:\.{3}|…)[ \t]*)?(?:the )?"
            r"(?:rest|remainder) of\b",
            re.IGNORECASE,
        ),
    ),
}

_LABELS = {
    "todo": "a TODO/TBD/FIXME/XXX marker",
    "lorem": "lorem ipsum filler",
    "brackets": "a bracketed placeholder",
    "angle": "an angle-bracket placeholder",
    "template": "an unfilled template variable",
    "ellipsis": "an elided section",
    "elision": "an elided section",
}


def _patterns(disable: tuple[Kind, ...], extra: tuple[str, ...]) -> list[tuple[str, LinearRegex]]:
    chosen: list[tuple[str, LinearRegex]] = [
        (_LABELS[kind], p) for kind, ps in PATTERNS.items() if kind not in disable for p in ps
    ]
    chosen.extend((f"a match of extra pattern `{e}`", linear_regex(e)) for e in extra)
    return chosen


def _hits(line: str, patterns: list[tuple[str, LinearRegex]]) -> list[tuple[str, str]]:
    """Each distinct placeholder on ``line``, with the label of the kind that found it."""
    hits: dict[str, str] = {}
    for label, pattern in patterns:
        m = pattern.search(line)
        if m is not None:
            hits.setdefault(m.group(0), label)
    return [(label, fragment) for fragment, label in hits.items()]


def no_placeholders(
    text: str,
    *,
    extra: tuple[Regex, ...] = (),
    disable: tuple[Kind, ...] = (),
    ignore_code: bool = False,
) -> CheckResult:
    """No placeholder or elision is left in the text (TODO, lorem ipsum, [insert ...], ...).

    ``extra`` adds regular expressions (matched line by line); ``disable`` turns
    off built-in kinds; ``ignore_code`` checks prose only, as ``sentence_len`` reads
    it: fenced and indented code blocks, inline code spans, math and HTML comments
    are skipped.
    """
    bad = [problem for e in extra if (problem := regex_error(e)) is not None]
    if bad:
        return CheckResult(False, bad)
    patterns = _patterns(disable, extra)
    lines = split_lines(text)
    prose = prose_lines(text) if ignore_code else None
    issues: list[str] = []
    total = 0
    for n, line in enumerate(lines, start=1):
        if prose is None:
            hits = _hits(line, patterns)
        else:
            read = prose.get(n - 1)
            hits = [] if read is None else _hits(read, patterns)
        if not hits:
            continue
        total += 1
        if len(issues) < MAX_LISTED:
            found = ", ".join(f"{label} {quote(fragment, 40)}" for label, fragment in hits)
            issues.append(f"{found} on line {n}: {quote(line)}; replace with the real content")
    if total > MAX_LISTED:
        issues.append(f"... and {total - MAX_LISTED} more lines with placeholders")
    return CheckResult(not issues, issues)
