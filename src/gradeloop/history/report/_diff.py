"""Line diffs between consecutive drafts, in bounded time on any input.

``difflib`` is quadratic in the worst case, and drafts are model text of any size.
So the common leading and trailing lines are peeled off first (one linear pass
each); only a changed middle of at most :data:`MAX_CELLS` line pairs goes through
``difflib``; a larger one is shown whole as removed-then-added, which is still a
correct diff, only a coarser one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

from ._html import Safe, el, join

__all__ = ["MAX_CELLS", "diff_html", "diff_ops"]

#: The largest changed middle (old lines x new lines) handed to difflib.
MAX_CELLS = 250_000
#: Unchanged lines kept around each change.
CONTEXT = 2

Op = tuple[str, str]  # (" " | "-" | "+" | "@", line)


def diff_ops(old: str, new: str, context: int | None = CONTEXT) -> list[Op]:
    """The diff as ``(" ", line)``, ``("-", line)``, ``("+", line)`` entries. Unchanged
    lines further than ``context`` from a change fold into one ``("@", "N unchanged
    lines")`` entry (``context=None``: no folding)."""
    a, b = old.splitlines(), new.splitlines()
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    ops: list[Op] = [(" ", line) for line in a[:head]]
    ops.extend(_middle(mid_a, mid_b))
    ops.extend((" ", line) for line in a[len(a) - tail :])
    return ops if context is None else list(_fold(ops, context))


def _middle(a: Sequence[str], b: Sequence[str]) -> Iterator[Op]:
    if len(a) * len(b) > MAX_CELLS:
        yield from (("-", line) for line in a)
        yield from (("+", line) for line in b)
        return
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=True)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            yield from ((" ", line) for line in a[i1:i2])
            continue
        yield from (("-", line) for line in a[i1:i2])
        yield from (("+", line) for line in b[j1:j2])


def _fold(ops: Sequence[Op], context: int) -> Iterator[Op]:
    """Keep ``context`` unchanged lines around changes; fold the rest."""
    changed = [i for i, (tag, _) in enumerate(ops) if tag != " "]
    keep = [False] * len(ops)
    for i in changed:
        for j in range(max(0, i - context), min(len(ops), i + context + 1)):
            keep[j] = True
    run = 0
    for i, op in enumerate(ops):
        if keep[i]:
            if run:
                yield ("@", f"{run} unchanged line{'s' if run != 1 else ''}")
                run = 0
            yield op
        else:
            run += 1
    if run:
        yield ("@", f"{run} unchanged line{'s' if run != 1 else ''}")


def diff_html(old: str, new: str) -> Safe:
    """The diff as an escaped block (or a note that nothing changed)."""
    ops = diff_ops(old, new)
    if all(tag in (" ", "@") for tag, _ in ops):
        return el("p", "no change: the same text", class_="muted")
    classes = {" ": "ctx", "-": "del", "+": "ins", "@": "ctx"}
    lines = [
        el("div", f"… {line}" if tag == "@" else f"{tag} {line}", class_=classes[tag])
        for tag, line in ops
    ]
    return el("pre", join(lines), class_="diff")
