"""Hypothesis strategies for graded drafts, shared by the statistics tests."""

from __future__ import annotations

from hypothesis import strategies as st

from gradeloop.stats import GradedRow, KeyOutcome

KEYS = ("clear", "cited", "tone")
SCORES = st.sampled_from([0.0, 2.5, 7.0, 7.25, 10.0, 0.1, 3.3333333333333335])


@st.composite
def outcomes(draw: st.DrawFn) -> KeyOutcome:
    """One key of one draft: unanswered, a plain answer, or an answer with samples."""
    kind = draw(st.sampled_from(["none", "plain", "votes", "scores"]))
    if kind == "none":
        return KeyOutcome(None)
    met = draw(st.booleans())
    score = draw(SCORES)
    if kind == "votes":
        votes = tuple(draw(st.lists(st.booleans(), min_size=1, max_size=5)))
        return KeyOutcome(met, score, votes=votes)
    if kind == "scores":
        return KeyOutcome(met, score, scores=tuple(draw(st.lists(SCORES, min_size=1, max_size=4))))
    return KeyOutcome(met, score)


@st.composite
def rows(draw: st.DrawFn, *, failed: bool = True) -> GradedRow:
    """One graded draft, with a task and a metadata group, sometimes a failed one."""
    ident = str(draw(st.integers(0, 10**6)))
    if failed and draw(st.integers(0, 9)) == 0:
        return GradedRow(ident, None, task="t", metadata={"group": "g0"})
    keys = {k: draw(outcomes()) for k in draw(st.sets(st.sampled_from(KEYS), min_size=1))}
    shadows = {}
    for k in keys:
        if keys[k].met is not None and draw(st.booleans()):
            shadows[k] = (bool(keys[k].met), draw(st.booleans()))
    return GradedRow(
        ident,
        draw(st.booleans()),
        keys,
        draw(st.one_of(st.none(), SCORES)),
        task=f"task {draw(st.integers(0, 4))}",
        metadata={"group": f"g{draw(st.integers(0, 3))}"},
        shadows=shadows,
    )
