"""Link reference definitions (``[label]: /url "title"``) at the start of a paragraph.

CommonMark takes them off the front of a paragraph before the rest is read as text;
a definition may run over several lines (label, address and title each on its
own). One forward pass: every character is looked at a bounded number of times.
"""

from __future__ import annotations

_LABEL_LIMIT = 999
_BLANKS = " \t"


def definitions_end(text: str) -> int:
    """The offset in ``text`` (a paragraph's lines joined by newlines) after its definitions."""
    pos = 0
    while True:
        end = _definition(text, pos)
        if end < 0:
            return pos
        pos = end


def _skip_blanks(text: str, pos: int, newline: bool) -> int:
    """Skip spaces and tabs, and at most one line end when ``newline`` is set."""
    n = len(text)
    while pos < n and text[pos] in _BLANKS:
        pos += 1
    if newline and pos < n and text[pos] == "\n":
        pos += 1
        while pos < n and text[pos] in _BLANKS:
            pos += 1
    return pos


def _line_end(text: str, pos: int) -> int:
    """The end of the line at ``pos`` if only blanks are left on it, else -1."""
    pos = _skip_blanks(text, pos, newline=False)
    if pos >= len(text):
        return pos
    return pos + 1 if text[pos] == "\n" else -1


def _definition(text: str, pos: int) -> int:
    """The offset after one definition starting at ``pos``, or -1 when none starts there."""
    pos = _skip_blanks(text, pos, newline=False)
    label_end = _label(text, pos)
    if label_end < 0 or label_end >= len(text) or text[label_end] != ":":
        return -1
    pos = _skip_blanks(text, label_end + 1, newline=True)
    dest_end = _destination(text, pos)
    if dest_end < 0:
        return -1
    after_dest = _line_end(text, dest_end)
    title_start = _skip_blanks(text, dest_end, newline=True)
    if title_start > dest_end and title_start < len(text):
        title_end = _title(text, title_start)
        if title_end >= 0:
            end = _line_end(text, title_end)
            if end >= 0:
                return end
    return after_dest  # no title, or one that is not alone: the definition ends sooner


def _label(text: str, pos: int) -> int:
    """The offset after a ``[label]`` at ``pos``, or -1."""
    n = len(text)
    if pos >= n or text[pos] != "[":
        return -1
    i = pos + 1
    limit = min(n, pos + 1 + _LABEL_LIMIT + 1)
    seen_text = False
    while i < limit:
        c = text[i]
        if c == "\\" and i + 1 < n:
            i += 2
            seen_text = True
            continue
        if c == "[":
            return -1
        if c == "]":
            return i + 1 if seen_text else -1
        if c not in " \t\n":
            seen_text = True
        i += 1
    return -1


def _destination(text: str, pos: int) -> int:
    """The offset after a link destination at ``pos``, or -1."""
    n = len(text)
    if pos >= n:
        return -1
    if text[pos] == "<":
        i = pos + 1
        while i < n:
            c = text[i]
            if c == "\\" and i + 1 < n:
                i += 2
            elif c == ">":
                return i + 1
            elif c in "<\n":
                return -1
            else:
                i += 1
        return -1
    i = pos
    depth = 0
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] not in " \t\n":
            i += 2
            continue
        if c in " \t\n" or ord(c) < 0x20:
            break
        if c == "(":
            depth += 1
            if depth > 32:
                return -1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        i += 1
    return i if i > pos and depth == 0 else -1


def _title(text: str, pos: int) -> int:
    """The offset after a quoted or parenthesised title at ``pos``, or -1."""
    closer = {'"': '"', "'": "'", "(": ")"}.get(text[pos])
    if closer is None:
        return -1
    i = pos + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            i += 2
            continue
        if c == closer:
            return i + 1
        if closer == ")" and c == "(":
            return -1
        i += 1
    return -1
